import Foundation
import Testing

@testable import EmulatorStorage

/// A fresh folder under the system's temporary directory, removed by `cleanUp`.
struct TemporaryFolder {
  let url: URL

  init() {
    url = FileManager.default.temporaryDirectory.appendingPathComponent("se-test-\(UUID().uuidString)")
    try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
  }

  func cleanUp() { try? FileManager.default.removeItem(at: url) }

  /// Every file below the folder, as paths relative to it.
  func allFiles() -> [String] {
    let enumerator = FileManager.default.enumerator(atPath: url.path)
    var files: [String] = []
    while let path = enumerator?.nextObject() as? String { files.append(path) }
    return files.sorted()
  }
}

enum BackendKind: String, CaseIterable, CustomTestStringConvertible {
  case memory, file
  var testDescription: String { rawValue }

  /// A fresh backend of this kind; the file one keeps its data in `folder`/data.
  func makeBackend(in folder: TemporaryFolder) throws -> any StorageBackend {
    self == .memory ? MemoryBackend() : try FileBackend(root: folder.url.appendingPathComponent("data"))
  }
}

/// The same scenarios against every backend.
@Suite struct ObjectStoreTests {
  func withStore(_ kind: BackendKind, _ body: (ObjectStore) throws -> Void) throws {
    let folder = TemporaryFolder()
    defer { folder.cleanUp() }
    let backend = try kind.makeBackend(in: folder)
    try body(try ObjectStore(backend: backend))
  }

  @Test(arguments: BackendKind.allCases)
  func insertReadUpdateDelete(_ kind: BackendKind) throws {
    try withStore(kind) { store in
      var patch = MetadataPatch()
      patch.fields[.contentType] = .set("text/plain")
      let created = try store.insert(
        bucket: "bkt", name: "images/forest.jpg", data: Array("hello world".utf8), upload: .init(patch: patch))
      #expect(created.metageneration == 1)
      #expect(created.size == 11)
      let (meta, bytes) = try store.read(bucket: "bkt", name: "images/forest.jpg")
      #expect(meta == created)
      #expect(bytes == Array("hello world".utf8))

      var change = MetadataPatch()
      change.fields[.cacheControl] = .set("public,max-age=300")
      change.customUpdates = ["location": "Yosemite"]
      let updated = try store.update(bucket: "bkt", name: "images/forest.jpg", patch: change)
      #expect(updated.metageneration == 2)
      #expect(updated.generation == created.generation)
      #expect(updated.etag != created.etag)
      #expect(updated.md5 == created.md5 && updated.crc32c == created.crc32c)
      #expect(updated.timeCreated == created.timeCreated)
      #expect(updated.cacheControl == "public,max-age=300")
      #expect(try store.read(bucket: "bkt", name: "images/forest.jpg").1 == Array("hello world".utf8))

      let empty = try store.update(bucket: "bkt", name: "images/forest.jpg", patch: MetadataPatch())
      #expect(empty.metageneration == 3)

      let replaced = try store.insert(bucket: "bkt", name: "images/forest.jpg", data: [1, 2, 3])
      #expect(replaced.generation > created.generation)
      #expect(replaced.metageneration == 1)
      #expect(try store.read(bucket: "bkt", name: "images/forest.jpg").1 == [1, 2, 3])

      try store.delete(bucket: "bkt", name: "images/forest.jpg")
      #expect(throws: StorageError.objectNotFound(bucket: "bkt", name: "images/forest.jpg")) {
        try store.metadata(bucket: "bkt", name: "images/forest.jpg")
      }
      #expect(throws: StorageError.bucketNotFound(bucket: "nope")) { try store.metadata(bucket: "nope", name: "x") }
    }
  }

  @Test(arguments: BackendKind.allCases)
  func preconditionsAreCheckedWithTheWrite(_ kind: BackendKind) throws {
    try withStore(kind) { store in
      let first = try store.insert(bucket: "bkt", name: "o", data: [1], conditions: Preconditions(ifGenerationMatch: 0))
      #expect(throws: StorageError.self) {
        try store.insert(bucket: "bkt", name: "o", data: [2], conditions: Preconditions(ifGenerationMatch: 0))
      }
      #expect(try store.read(bucket: "bkt", name: "o").1 == [1])
      #expect(throws: StorageError.self) {
        try store.update(
          bucket: "bkt", name: "o", patch: MetadataPatch(), conditions: Preconditions(ifMetagenerationMatch: 2))
      }
      _ = try store.update(
        bucket: "bkt", name: "o", patch: MetadataPatch(), conditions: Preconditions(ifGenerationMatch: first.generation)
      )
      #expect(throws: StorageError.self) {
        try store.delete(bucket: "bkt", name: "o", conditions: Preconditions(ifMetagenerationMatch: 1))
      }
      try store.delete(bucket: "bkt", name: "o", conditions: Preconditions(ifMetagenerationMatch: 2))
    }
  }

  @Test(arguments: BackendKind.allCases)
  func checksumsGivenAtUploadAreVerified(_ kind: BackendKind) throws {
    try withStore(kind) { store in
      let data = Array("hello world".utf8)
      #expect(throws: StorageError.self) {
        try store.insert(bucket: "bkt", name: "o", data: data, upload: .init(expectedCRC32C: 1))
      }
      #expect(throws: StorageError.self) {
        try store.insert(
          bucket: "bkt", name: "o", data: data, upload: .init(expectedMD5: [UInt8](repeating: 0, count: 16)))
      }
      // Nothing was stored, not even the implicit bucket.
      #expect(throws: StorageError.bucketNotFound(bucket: "bkt")) { try store.metadata(bucket: "bkt", name: "o") }
      _ = try store.insert(bucket: "bkt", name: "o", data: data, upload: .init(expectedCRC32C: 3_381_945_770))
    }
  }

  @Test(arguments: BackendKind.allCases)
  func namesAreOpaqueAndDistinct(_ kind: BackendKind) throws {
    try withStore(kind) { store in
      let names = ["a", "a/", "a/b", "../x", "a/../b", "%2F", ".metadata", "caf\u{E9}", "cafe\u{301}", "../../x"]
      for (index, name) in names.enumerated() {
        _ = try store.insert(bucket: "bkt", name: name, data: [UInt8(index)])
      }
      for (index, name) in names.enumerated() {
        #expect(try store.read(bucket: "bkt", name: name).1 == [UInt8(index)])
      }
      let page = try store.list(bucket: "bkt", query: ListQuery())
      #expect(page.items.count == names.count)
      #expect(
        page.items.map { Array($0.name.utf8) }
          == names.map { Array($0.utf8) }.sorted { $0.lexicographicallyPrecedes($1) })
    }
  }

  @Test(arguments: BackendKind.allCases)
  func listsWithPrefixDelimiterAndPages(_ kind: BackendKind) throws {
    try withStore(kind) { store in
      for name in ["a.txt", "dir/", "dir/1", "dir/2", "dir/sub/x", "dir/sub/y", "dir2/z", "e", "f", "g"] {
        _ = try store.insert(bucket: "bkt", name: name, data: [])
      }
      var query = ListQuery()
      query.delimiter = "/"
      var page = try store.list(bucket: "bkt", query: query)
      #expect(page.items.map(\.name) == ["a.txt", "e", "f", "g"])
      #expect(page.prefixes == ["dir/", "dir2/"])

      query.prefix = "dir/"
      page = try store.list(bucket: "bkt", query: query)
      #expect(page.items.map(\.name) == ["dir/", "dir/1", "dir/2"])
      #expect(page.prefixes == ["dir/sub/"])

      query.includeTrailingDelimiter = true
      query.prefix = nil
      page = try store.list(bucket: "bkt", query: query)
      #expect(page.items.map(\.name) == ["a.txt", "dir/", "e", "f", "g"])

      // Pages of 2 entries (items + prefixes) walk everything exactly once.
      var all: [String] = []
      var pages = 0
      query = ListQuery()
      query.delimiter = "/"
      query.maxResults = 2
      repeat {
        page = try store.list(bucket: "bkt", query: query)
        all += page.prefixes + page.items.map(\.name)
        #expect(page.prefixes.count + page.items.count <= 2)
        query.pageToken = page.nextPageToken
        pages += 1
      } while query.pageToken != nil && pages < 20
      #expect(all.sorted() == ["a.txt", "dir/", "dir2/", "e", "f", "g"])
      #expect(pages == 3)

      query = ListQuery()
      query.startOffset = "dir/2"
      query.endOffset = "e"
      #expect(
        try store.list(bucket: "bkt", query: query).items.map(\.name) == ["dir/2", "dir/sub/x", "dir/sub/y", "dir2/z"])

      query = ListQuery()
      query.matchGlob = "dir/*"
      #expect(try store.list(bucket: "bkt", query: query).items.map(\.name) == ["dir/", "dir/1", "dir/2"])
      query.matchGlob = "**/{x,z}"
      #expect(try store.list(bucket: "bkt", query: query).items.map(\.name) == ["dir/sub/x", "dir2/z"])

      query = ListQuery()
      query.pageToken = "not-a-token!"
      #expect(throws: StorageError.self) { try store.list(bucket: "bkt", query: query) }
    }
  }

  @Test(arguments: BackendKind.allCases)
  func buckets(_ kind: BackendKind) throws {
    try withStore(kind) { store in
      _ = try store.createBucket("first")
      #expect(throws: StorageError.bucketExists(bucket: "first")) { try store.createBucket("first") }
      _ = try store.insert(bucket: "second", name: "o", data: [])
      #expect(store.listBuckets().map(\.name) == ["first", "second"])
      #expect(throws: StorageError.bucketNotEmpty(bucket: "second")) { try store.deleteBucket("second") }
      try store.delete(bucket: "second", name: "o")
      try store.deleteBucket("second")
      #expect(store.listBuckets().map(\.name) == ["first"])
      #expect(throws: StorageError.self) { try store.createBucket("Bad Name") }
    }
  }

  @Test func strictBucketsRefuseImplicitCreation() throws {
    let store = try ObjectStore(backend: MemoryBackend(), options: .init(strictBuckets: true))
    #expect(throws: StorageError.bucketNotFound(bucket: "bkt")) { try store.insert(bucket: "bkt", name: "o", data: []) }
    _ = try store.createBucket("bkt")
    _ = try store.insert(bucket: "bkt", name: "o", data: [])
  }

  @Test(arguments: BackendKind.allCases)
  func concurrentPatchesOfOneObjectLoseNothing(_ kind: BackendKind) async throws {
    let folder = TemporaryFolder()
    defer { folder.cleanUp() }
    let backend = try kind.makeBackend(in: folder)
    let store = try ObjectStore(backend: backend)
    _ = try store.insert(bucket: "bkt", name: "o", data: [1])
    await withTaskGroup(of: Void.self) { group in
      for index in 0..<32 {
        group.addTask {
          var patch = MetadataPatch()
          patch.customUpdates = ["k\(index)": "v\(index)"]
          _ = try? store.update(bucket: "bkt", name: "o", patch: patch)
        }
      }
    }
    let object = try store.metadata(bucket: "bkt", name: "o")
    #expect(object.metageneration == 33)
    #expect(object.custom.count == 32)
  }

  @Test func racingConditionalPatchesHaveExactlyOneWinner() async throws {
    let store = try ObjectStore(backend: MemoryBackend())
    _ = try store.insert(bucket: "bkt", name: "o", data: [1])
    let wins = await withTaskGroup(of: Bool.self) { group in
      for _ in 0..<32 {
        group.addTask {
          (try? store.update(
            bucket: "bkt", name: "o", patch: MetadataPatch(), conditions: Preconditions(ifMetagenerationMatch: 1)))
            != nil
        }
      }
      var count = 0
      for await won in group where won { count += 1 }
      return count
    }
    #expect(wins == 1)
  }
}

@Suite struct FileBackendTests {
  @Test func reopeningKeepsEverything() throws {
    let folder = TemporaryFolder()
    defer { folder.cleanUp() }
    let root = folder.url.appendingPathComponent("data")
    var written: ObjectMetadata
    do {
      let store = try ObjectStore(backend: FileBackend(root: root))
      _ = try store.createBucket("empty-bucket")
      _ = try store.insert(bucket: "bkt", name: "a/b", data: Array("abc".utf8))
      var patch = MetadataPatch()
      patch.customUpdates = ["k": "v"]
      patch.fields[.contentLanguage] = .set("fr")
      written = try store.update(bucket: "bkt", name: "a/b", patch: patch)
      _ = try store.insert(bucket: "bkt", name: "gone", data: [])
      try store.delete(bucket: "bkt", name: "gone")
    }
    let reopened = try ObjectStore(backend: FileBackend(root: root))
    #expect(reopened.listBuckets().map(\.name) == ["bkt", "empty-bucket"])
    let (object, bytes) = try reopened.read(bucket: "bkt", name: "a/b")
    #expect(object == written)
    #expect(bytes == Array("abc".utf8))
    #expect(throws: StorageError.self) { try reopened.metadata(bucket: "bkt", name: "gone") }
    // Generations stay increasing across restarts.
    let next = try reopened.insert(bucket: "bkt", name: "a/b", data: [])
    #expect(next.generation > written.generation)
  }

  @Test func nothingIsWrittenOutsideTheDataFolder() throws {
    let folder = TemporaryFolder()
    defer { folder.cleanUp() }
    let store = try ObjectStore(backend: FileBackend(root: folder.url.appendingPathComponent("data")))
    for name in ["../../x", "../x", "/abs", "a/../../b", "%2F..%2F", "..\\x"] {
      _ = try store.insert(bucket: "bkt", name: name, data: [1])
    }
    let top = try FileManager.default.contentsOfDirectory(atPath: folder.url.path)
    #expect(top == ["data"])
    let files = folder.allFiles()
    #expect(files.allSatisfy { $0.hasPrefix("data/") || $0 == "data" })
    #expect(!files.contains { $0.contains("..") })
  }

  @Test func startUpRemovesLeftoversOfInterruptedWrites() throws {
    let folder = TemporaryFolder()
    defer { folder.cleanUp() }
    let root = folder.url.appendingPathComponent("data")
    do {
      let store = try ObjectStore(backend: FileBackend(root: root))
      _ = try store.insert(bucket: "bkt", name: "kept", data: [7])
    }
    // Read from the log alone: a staged upload, a data file its intent names but whose record
    // never came, and a torn last append.
    try FileManager.default.removeItem(at: root.appendingPathComponent("index.snapshot"))
    try Data([1, 2]).write(to: root.appendingPathComponent("tmp/123-1-1.upload"))
    let ghost = try FileBackend(root: root).objectBase(bucket: "bkt", name: "ghost")
    let leftover = ghost.dir + "/" + ghost.stem + ".42.data"
    try FileManager.default.createDirectory(atPath: ghost.dir, withIntermediateDirectories: true)
    try Data([9]).write(to: URL(fileURLWithPath: leftover))
    try SegmentLogTests.appendToNewestSegment(
      in: root, SegmentEntry.intent(bucket: "bkt", name: "ghost", generations: [42]) + [1, 2, 3])
    let lines = LogLines()
    let store = try ObjectStore(backend: FileBackend(root: root), log: { lines.append($0) })
    #expect(try store.read(bucket: "bkt", name: "kept").1 == [7])
    #expect(!FileManager.default.fileExists(atPath: root.appendingPathComponent("tmp/123-1-1.upload").path))
    #expect(!FileManager.default.fileExists(atPath: leftover))
    let logged = lines.all
    #expect(logged.contains { $0.contains("tmp/123-1-1.upload") })
    #expect(logged.contains { $0.contains(".42.data") })
    #expect(logged.contains { $0.contains("cut 3 bytes") })
  }

  @Test func aDamagedRecordMakesOnlyThatObjectUnreadableWithAClearError() throws {
    let folder = TemporaryFolder()
    defer { folder.cleanUp() }
    let root = folder.url.appendingPathComponent("data")
    let victim: ObjectMetadata
    do {
      let store = try ObjectStore(backend: FileBackend(root: root))
      victim = try store.insert(bucket: "bkt", name: "victim", data: [1, 2, 3])
      _ = try store.insert(bucket: "bkt", name: "healthy", data: [4])
    }
    try SegmentLogTests.appendToNewestSegment(
      in: root,
      SegmentEntry.encode(
        .record, bucket: "bkt", name: "victim", generation: victim.generation, metageneration: 2,
        payload: Array("{\"format\":1,\"bu".utf8)))
    let lines = LogLines()
    let store = try ObjectStore(backend: FileBackend(root: root), log: { lines.append($0) })
    #expect(lines.all.contains { $0.contains("victim in the log is damaged") })
    #expect(try store.read(bucket: "bkt", name: "healthy").1 == [4])
    do {
      _ = try store.metadata(bucket: "bkt", name: "victim")
      Issue.record("a damaged object must not read")
    } catch {
      guard case .io(let message) = error else {
        Issue.record("expected a clear io error, got \(error)")
        return
      }
      #expect(message.contains("damaged"))
    }
    #expect(try store.list(bucket: "bkt", query: ListQuery()).items.map(\.name) == ["healthy"])
    // Overwriting it heals it.
    _ = try store.insert(bucket: "bkt", name: "victim", data: [9])
    #expect(try store.read(bucket: "bkt", name: "victim").1 == [9])
    let reopened = try ObjectStore(backend: FileBackend(root: root))
    #expect(try reopened.read(bucket: "bkt", name: "victim").1 == [9])
  }

  @Test func refusesAFolderOfAnotherFormat() throws {
    let folder = TemporaryFolder()
    defer { folder.cleanUp() }
    try Data("storage-emulator data format 99\n".utf8).write(to: folder.url.appendingPathComponent("FORMAT"))
    #expect(throws: StorageError.self) { try FileBackend(root: folder.url) }
  }
}

final class LogLines: Sendable {
  private let lines = Locked<[String]>([])
  func append(_ line: String) { lines.withLock { $0.append(line) } }
  var all: [String] { lines.withLock { $0 } }
}

import Synchronization

@Suite struct UploadSessionTests {
  @Test func sessionsSurviveARestartWithTheirBytes() throws {
    let folder = TemporaryFolder()
    defer { folder.cleanUp() }
    let directory = folder.url.appendingPathComponent("uploads")
    let id: String
    do {
      let sessions = try UploadSessions(directory: directory)
      let session = try sessions.create(
        UploadSession(
          bucket: "bkt", name: "big", metadata: Array(#"{"metadata":{"a":"1"}}"#.utf8),
          conditions: Preconditions(ifGenerationMatch: 0), expectedSize: 6, contentType: "text/plain", firebase: true))
      id = session.id
      try sessions.append(id, at: 0, bytes: Array("abc".utf8), allowOverlap: false)
    }
    let reopened = try UploadSessions(directory: directory)
    let session = try reopened.session(id)
    #expect(session.received == 3)
    #expect(session.conditions.ifGenerationMatch == 0)
    #expect(session.expectedSize == 6 && session.firebase && session.contentType == "text/plain")
    #expect(throws: StorageError.uploadOffsetMismatch(expected: 1, received: 3)) {
      try reopened.append(id, at: 1, bytes: Array("xyz".utf8), allowOverlap: false)
    }
    // A retried, overlapping chunk appends only what is new.
    try reopened.append(id, at: 1, bytes: Array("bcdef".utf8), allowOverlap: true)
    let store = try ObjectStore(backend: MemoryBackend())
    let object = try reopened.complete(id) { data, _ throws(StorageError) -> ObjectMetadata in
      try store.insert(bucket: "bkt", name: "big", source: data)
    }
    #expect(object.size == 6)
    #expect(try store.read(bucket: "bkt", name: "big").1 == Array("abcdef".utf8))
    #expect(try reopened.session(id).state == .final)
    #expect(throws: StorageError.uploadNotActive(id)) {
      try reopened.append(id, at: 6, bytes: [1], allowOverlap: false)
    }
    #expect(throws: StorageError.uploadNotFound("nope")) { try reopened.session("nope") }
  }
}
