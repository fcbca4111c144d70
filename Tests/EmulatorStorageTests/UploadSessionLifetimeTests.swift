import Foundation
import Testing

@testable import EmulatorStorage

/// Resumable sessions are bounded: abandoned ones expire and give their disk back (by the sweep
/// and at start-up), open ones are capped, finished ones are not remembered without bound, and
/// a failed finalize keeps the bytes.
@Suite struct UploadSessionLifetimeTests {
  static let day: Int64 = 86_400_000

  func template(_ name: String = "obj") -> UploadSession {
    UploadSession(
      bucket: "bkt", name: name, metadata: Array("{}".utf8), conditions: Preconditions(), expectedSize: nil,
      contentType: nil, firebase: false)
  }

  func files(_ directory: URL) -> [String] {
    ((try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []).sorted()
  }

  @Test func abandonedSessionsExpireAndTheirBytesAreReclaimed() throws {
    let folder = TemporaryFolder()
    defer { folder.cleanUp() }
    let directory = folder.url.appendingPathComponent("uploads")
    let sessions = try UploadSessions(directory: directory)
    #expect(sessions.options.ttlSeconds == 86_400, "a day by default")
    let id = try sessions.create(template()).id
    try sessions.append(id, at: 0, bytes: [UInt8](repeating: 7, count: 100_000), allowOverlap: false)
    let now = Timestamp.nowMilliseconds()
    #expect(sessions.sweep(now: now + Self.day - 60_000) == 0)
    #expect(try sessions.session(id).received == 100_000)
    #expect(sessions.sweep(now: now + Self.day + 60_000) == 1)
    #expect(throws: StorageError.uploadNotFound(id)) { try sessions.session(id) }
    #expect(files(directory).isEmpty)
    #expect(sessions.counts.active == 0)
  }

  @Test func aChunkKeepsASessionAlive() throws {
    let folder = TemporaryFolder()
    defer { folder.cleanUp() }
    let sessions = try UploadSessions(directory: folder.url, options: .init(ttlSeconds: 3600))
    let started = Timestamp.nowMilliseconds() - 3_000_000  // started 50 minutes ago
    let id = try sessions.create(template(), now: started).id
    try sessions.append(id, at: 0, bytes: [1], allowOverlap: false)  // touched now
    #expect(sessions.sweep(now: started + 3_700_000) == 0, "an hour after its start, but not after its last chunk")
    #expect(sessions.sweep(now: Timestamp.nowMilliseconds() + 3_700_000) == 1)
  }

  @Test func expiredSessionsAndFinalizeLeftoversAreRemovedAtStartUp() throws {
    let folder = TemporaryFolder()
    defer { folder.cleanUp() }
    let directory = folder.url.appendingPathComponent("uploads")
    let sessions = try UploadSessions(directory: directory, options: .init(ttlSeconds: 3600))
    let id = try sessions.create(template()).id
    try sessions.append(id, at: 0, bytes: Array("abc".utf8), allowOverlap: false)
    try Data("x".utf8).write(to: directory.appendingPathComponent("\(id).commit"))
    try Data("x".utf8).write(to: directory.appendingPathComponent(".\(id).tmp"))
    let fresh = try UploadSessions(directory: directory, options: .init(ttlSeconds: 3600))
    #expect(try fresh.session(id).received == 3)
    #expect(files(directory) == ["\(id).json", "\(id).part"])
    let later = Timestamp.nowMilliseconds() + 3_700_000
    let expired = try UploadSessions(directory: directory, options: .init(ttlSeconds: 3600), now: later)
    #expect(throws: StorageError.uploadNotFound(id)) { try expired.session(id) }
    #expect(files(directory).isEmpty)
  }

  @Test func sessionFloodPastTheCapIsRefusedUntilOneFinishesOrExpires() throws {
    let folder = TemporaryFolder()
    defer { folder.cleanUp() }
    let sessions = try UploadSessions(directory: folder.url, options: .init(ttlSeconds: 600, maxOpen: 2))
    let now = Timestamp.nowMilliseconds()
    let first = try sessions.create(template(), now: now)
    _ = try sessions.create(template(), now: now + 1000)
    do {
      _ = try sessions.create(template(), now: now + 2000)
      Issue.record("a third session was started past a cap of 2")
    } catch {
      guard case .tooManyUploadSessions(let limit, let retryAfter) = error else { throw error }
      #expect(limit == 2)
      #expect((1...60).contains(retryAfter))
    }
    try sessions.cancel(first.id)
    _ = try sessions.create(template(), now: now + 3000)
    #expect(throws: StorageError.self) { try sessions.create(template(), now: now + 4000) }
    // Once the oldest expires, starting a session sweeps it and takes its place.
    _ = try sessions.create(template(), now: now + 602_000)
    #expect(sessions.counts.active == 2)
  }

  @Test func finishedSessionsAreNotRememberedWithoutBound() throws {
    let folder = TemporaryFolder()
    defer { folder.cleanUp() }
    let sessions = try UploadSessions(directory: folder.url, options: .init(maxOpen: 2))
    var ids: [String] = []
    for _ in 0..<10 {
      let id = try sessions.create(template()).id
      try sessions.cancel(id)
      ids.append(id)
    }
    #expect(sessions.counts.finished == 2)
    #expect(files(folder.url).count == 2)
    #expect(try sessions.session(ids[9]).state == .cancelled)
    #expect(throws: StorageError.uploadNotFound(ids[0])) { try sessions.session(ids[0]) }
  }

  @Test func aFailedFinalizeKeepsTheBytesAndTheSessionResumable() throws {
    let folder = TemporaryFolder()
    defer { folder.cleanUp() }
    let directory = folder.url.appendingPathComponent("uploads")
    let sessions = try UploadSessions(directory: directory)
    let id = try sessions.create(template()).id
    try sessions.append(id, at: 0, bytes: Array("abc".utf8), allowOverlap: false)
    // The store takes the file (moves it away, as FileBackend does) and then fails: disk full.
    let elsewhere = folder.url.appendingPathComponent("taken").path
    #expect(throws: StorageError.insufficientStorage("full")) {
      try sessions.complete(id) { data, _ throws(StorageError) -> ObjectMetadata in
        guard case .file(let path) = data else { throw StorageError.io("expected a file") }
        _ = rename(path, elsewhere)
        throw StorageError.insufficientStorage("full")
      }
    }
    #expect(try sessions.session(id).state == .active)
    #expect(try sessions.session(id).received == 3)
    try sessions.append(id, at: 3, bytes: Array("def".utf8), allowOverlap: false)
    let store = try ObjectStore(backend: FileBackend(root: folder.url.appendingPathComponent("data")))
    let object = try sessions.complete(id) { data, _ throws(StorageError) -> ObjectMetadata in
      try store.insert(bucket: "bkt", name: "obj", source: data)
    }
    #expect(object.size == 6)
    #expect(try store.read(bucket: "bkt", name: "obj").1 == Array("abcdef".utf8))
    #expect(files(directory) == ["\(id).json"], "the bytes went to the store; only the final record stays")
  }

  @Test func theSweepRunsOnItsOwn() async throws {
    let folder = TemporaryFolder()
    defer { folder.cleanUp() }
    let sessions = try UploadSessions(directory: folder.url, options: .init(ttlSeconds: 1))
    _ = try sessions.create(template())
    sessions.startSweeping(interval: 0.2)
    defer { sessions.stopSweeping() }
    for _ in 0..<50 where sessions.counts.active > 0 { try await Task.sleep(nanoseconds: 100_000_000) }
    #expect(sessions.counts.active == 0)
    #expect(files(folder.url).isEmpty)
  }
}
