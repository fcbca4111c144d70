import Foundation
import Testing

@testable import EmulatorStorage

/// A resumable session's MD5 and CRC32C are worked out while its chunks arrive
/// (`RunningDigests`), so the final request does not read the bytes again; whenever that digest
/// cannot be trusted to cover exactly the received bytes, none is handed over and the store
/// digests the bytes itself.
@Suite struct RunningDigestTests {
  func template() -> UploadSession {
    UploadSession(
      bucket: "bkt", name: "obj", metadata: Array("{}".utf8), conditions: Preconditions(), expectedSize: nil,
      contentType: nil, firebase: false)
  }

  func spooled(_ bytes: [UInt8], in folder: TemporaryFolder, _ name: String) throws -> String {
    let path = folder.url.appendingPathComponent(name).path
    try Data(bytes).write(to: URL(fileURLWithPath: path))
    return path
  }

  /// The digest handed to the commit, and the bytes the commit received.
  func complete(_ sessions: UploadSessions, _ id: String) throws -> ((md5: [UInt8], crc32c: UInt32)?, [UInt8]) {
    var handed: (md5: [UInt8], crc32c: UInt32)?
    var received: [UInt8] = []
    _ = try sessions.complete(id) { data, digest throws(StorageError) -> ObjectMetadata in
      handed = digest
      if case .file(let path) = data { received = Array(FileManager.default.contents(atPath: path) ?? Data()) }
      return ObjectMetadata(bucket: "bkt", name: "obj", generation: 1, size: 0, md5: nil, crc32c: 0, now: 0)
    }
    return (handed, received)
  }

  @Test func chunksFromMemoryAndFromSpooledFilesAreDigestedAsTheyArrive() throws {
    let folder = TemporaryFolder()
    defer { folder.cleanUp() }
    let sessions = try UploadSessions(directory: folder.url.appendingPathComponent("uploads"))
    let id = try sessions.create(template()).id
    let first = (0..<300_000).map { UInt8(truncatingIfNeeded: $0 &* 7) }
    let second = (0..<2_500_000).map { UInt8(truncatingIfNeeded: $0 &* 13) }
    let third = Array("the end".utf8)
    // The first chunk is a spooled file renamed into place (no copy, so nothing read it yet).
    try sessions.append(id, at: 0, file: spooled(first, in: folder, "one"), allowOverlap: true)
    try sessions.append(id, at: Int64(first.count), file: spooled(second, in: folder, "two"), allowOverlap: true)
    try sessions.append(id, at: Int64(first.count + second.count), bytes: third, allowOverlap: true)
    let (digest, bytes) = try complete(sessions, id)
    #expect(bytes == first + second + third)
    let expected = Digester.digest(first + second + third)
    #expect(digest?.md5 == expected.md5)
    #expect(digest?.crc32c == expected.crc32c)
    #expect(sessions.digests.count == 0, "a finished session is forgotten")
  }

  @Test func aRetriedOverlappingChunkIsDigestedOnce() throws {
    let folder = TemporaryFolder()
    defer { folder.cleanUp() }
    let sessions = try UploadSessions(directory: folder.url.appendingPathComponent("uploads"))
    let id = try sessions.create(template()).id
    try sessions.append(id, at: 0, bytes: Array("abcdef".utf8), allowOverlap: true)
    // The client did not see the answer and sends bytes 3... again, with more after them.
    try sessions.append(id, at: 3, bytes: Array("defghi".utf8), allowOverlap: true)
    let (digest, bytes) = try complete(sessions, id)
    #expect(bytes == Array("abcdefghi".utf8))
    #expect(digest?.md5 == Digester.digest(Array("abcdefghi".utf8)).md5)
  }

  @Test func aSessionReloadedAfterARestartIsDigestedByTheStore() throws {
    let folder = TemporaryFolder()
    defer { folder.cleanUp() }
    let directory = folder.url.appendingPathComponent("uploads")
    let id = try UploadSessions(directory: directory).create(template()).id
    let before = try UploadSessions(directory: directory)
    try before.append(id, at: 0, bytes: Array("written before".utf8), allowOverlap: false)
    // A new process: the running digest of the first one is gone, the bytes are on disk.
    let after = try UploadSessions(directory: directory)
    try after.append(id, at: 14, bytes: Array(" and after".utf8), allowOverlap: false)
    let store = try ObjectStore(backend: FileBackend(root: folder.url.appendingPathComponent("data")))
    var handed: (md5: [UInt8], crc32c: UInt32)? = nil
    let object = try after.complete(id) { data, digest throws(StorageError) -> ObjectMetadata in
      handed = digest
      return try store.insert(bucket: "bkt", name: "obj", source: data, digest: digest)
    }
    #expect(handed == nil, "a digest that starts in the middle of the bytes is never handed over")
    let whole = Digester.digest(Array("written before and after".utf8))
    #expect(object.md5 == whole.md5)
    #expect(object.crc32c == whole.crc32c)
  }

  @Test func aChangedPartFileIsNotTrusted() throws {
    let folder = TemporaryFolder()
    defer { folder.cleanUp() }
    let directory = folder.url.appendingPathComponent("uploads")
    let sessions = try UploadSessions(directory: directory)
    let id = try sessions.create(template()).id
    try sessions.append(id, at: 0, bytes: Array("abc".utf8), allowOverlap: false)
    _ = sessions.digests.digest(id, size: 3)  // waits for the range to be digested
    // The part file shrinks behind the session's back: the next range cannot be read.
    let part = directory.appendingPathComponent(UploadSessions.partName(id)).path
    try sessions.append(id, at: 3, bytes: Array("def".utf8), allowOverlap: false)
    #expect(truncate(part, 2) == 0)
    try sessions.append(id, at: 6, bytes: Array("g".utf8), allowOverlap: false)
    #expect(sessions.digests.digest(id, size: 7) == nil)
  }

  @Test func theStoreUsesTheDigestItIsHandedAndChecksTheClientsHashAgainstIt() throws {
    let folder = TemporaryFolder()
    defer { folder.cleanUp() }
    let store = try ObjectStore(backend: FileBackend(root: folder.url.appendingPathComponent("data")))
    let bytes = Array("payload".utf8)
    let right = Digester.digest(bytes)
    let object = try store.insert(
      bucket: "bkt", name: "a", source: .file(spooled(bytes, in: folder, "a")), digest: right)
    #expect(object.md5 == right.md5)
    #expect(object.crc32c == right.crc32c)
    var upload = ObjectStore.Upload()
    upload.expectedMD5 = Digester.digest(Array("other".utf8)).md5
    #expect(throws: StorageError.self) {
      try store.insert(
        bucket: "bkt", name: "b", source: .file(spooled(bytes, in: folder, "b")), digest: right, upload: upload)
    }
  }

  @Test func inMemorySessionsAreDigestedToo() throws {
    let sessions = UploadSessions(space: MemoryUploadSpace())
    let id = try sessions.create(template()).id
    try sessions.append(id, at: 0, bytes: Array("in ".utf8), allowOverlap: false)
    try sessions.append(id, at: 3, bytes: Array("memory".utf8), allowOverlap: false)
    #expect(sessions.digests.digest(id, size: 9)?.md5 == Digester.digest(Array("in memory".utf8)).md5)
  }
}
