import Foundation
import Testing

@testable import EmulatorStorage

/// Whole-store operations (reset, walking, restoring exported objects), on both backends.
@Suite struct StoreMaintenanceTests {
  func withStore(_ kind: BackendKind, _ body: (ObjectStore, TemporaryFolder) throws -> Void) throws {
    let folder = TemporaryFolder()
    defer { folder.cleanUp() }
    try body(try ObjectStore(backend: try kind.makeBackend(in: folder)), folder)
  }

  @Test(arguments: BackendKind.allCases)
  func removeAllEmptiesEveryBucketAndSurvivesARestart(_ kind: BackendKind) throws {
    let folder = TemporaryFolder()
    defer { folder.cleanUp() }
    let backend = try kind.makeBackend(in: folder)
    let store = try ObjectStore(backend: backend)
    _ = try store.createBucket("empty")
    for index in 0..<1205 {
      _ = try store.insert(bucket: "big", name: "o/\(index)", data: Array("x\(index)".utf8))
    }
    _ = try store.insert(bucket: "small", name: "a", data: [1, 2, 3])
    #expect(store.objectCount == 1206)
    let removed = try store.removeAll()
    #expect(removed.objects == 1206)
    #expect(removed.buckets == 3)
    #expect(store.objectCount == 0)
    #expect(store.listBuckets().isEmpty)
    if kind == .file {
      // Nothing of the old objects is left to come back after a restart.
      try store.close()
      let reopened = try ObjectStore(backend: try kind.makeBackend(in: folder))
      #expect(reopened.objectCount == 0)
      #expect(reopened.listBuckets().isEmpty)
      #expect(!folder.allFiles().contains { $0.hasSuffix(".data") })
    }
  }

  @Test(arguments: BackendKind.allCases)
  func objectsAfterPagesThroughABucketInNameOrder(_ kind: BackendKind) throws {
    try withStore(kind) { store, _ in
      for name in ["b", "a", "c/d", "c"] { _ = try store.insert(bucket: "bkt", name: name, data: []) }
      #expect(store.objects(in: "bkt", after: nil, limit: 2).map(\.name) == ["a", "b"])
      #expect(store.objects(in: "bkt", after: "b", limit: 2).map(\.name) == ["c", "c/d"])
      #expect(store.objects(in: "bkt", after: "bb", limit: 10).map(\.name) == ["c", "c/d"])
      #expect(store.objects(in: "bkt", after: "c/d", limit: 10).isEmpty)
      #expect(store.objects(in: "missing", after: nil, limit: 10).isEmpty)
    }
  }

  @Test(arguments: BackendKind.allCases)
  func restoreKeepsExportedMetadataAndComputesHashesFromTheBytes(_ kind: BackendKind) throws {
    try withStore(kind) { store, _ in
      var template = ObjectMetadata(
        bucket: "imported", name: "dir/file.txt", generation: 1_648_084_940_926, size: 999, md5: [0], crc32c: 7,
        now: 1_648_084_940_926)
      template.metageneration = 4
      template.contentType = "text/plain"
      template.cacheControl = "no-cache"
      template.custom = ["k": "v"]
      template.downloadTokens = ["tok-1"]
      template.updated = 1_648_084_999_000
      let restored = try store.restore(template, source: .bytes(Array("hello world".utf8)))
      #expect(restored.generation == 1_648_084_940_926)
      #expect(restored.metageneration == 4)
      #expect(restored.size == 11)
      #expect(restored.md5Base64 == "XrY7u+Ae7tCTyyK7j1rNww==")
      #expect(restored.crc32cBase64 == "yZRlqg==")
      #expect(restored.custom == ["k": "v"])
      #expect(restored.downloadTokens == ["tok-1"])
      #expect(restored.updated == 1_648_084_999_000)
      let (read, bytes) = try store.read(bucket: "imported", name: "dir/file.txt")
      #expect(read == restored)
      #expect(bytes == Array("hello world".utf8))
      // A later write gets a newer generation than anything restored.
      let later = try store.insert(bucket: "imported", name: "other", data: [])
      #expect(later.generation > restored.generation)
    }
  }

  @Test(arguments: BackendKind.allCases)
  func restoringAnOlderGenerationOverALiveObjectGetsANewerOne(_ kind: BackendKind) throws {
    try withStore(kind) { store, _ in
      let live = try store.insert(bucket: "bkt", name: "x", data: Array("old".utf8))
      var template = live
      template.generation = live.generation  // the same generation again (an import run twice)
      let restored = try store.restore(template, source: .bytes(Array("new".utf8)))
      #expect(restored.generation > live.generation)
      #expect(try store.read(bucket: "bkt", name: "x").1 == Array("new".utf8))
      #expect(store.objectCount == 1)
    }
  }

  @Test func restoreRefusesABadNameAndRemovesTheSpooledFile() throws {
    let folder = TemporaryFolder()
    defer { folder.cleanUp() }
    let store = try ObjectStore(backend: MemoryBackend())
    let path = folder.url.appendingPathComponent("blob").path
    #expect(FileManager.default.createFile(atPath: path, contents: Data([1])))
    let template = ObjectMetadata(bucket: "bkt", name: "bad\nname", generation: 1, size: 1, md5: nil, crc32c: 0, now: 0)
    #expect(throws: StorageError.self) { try store.restore(template, source: .file(path)) }
    #expect(!FileManager.default.fileExists(atPath: path))
  }

  @Test func uploadSessionsRemoveAllForgetsSessionsAndTheirFiles() throws {
    let folder = TemporaryFolder()
    defer { folder.cleanUp() }
    let sessions = try UploadSessions(directory: folder.url)
    let template = UploadSession(
      bucket: "b", name: "n", metadata: [], conditions: Preconditions(), expectedSize: nil, contentType: nil,
      firebase: false)
    let first = try sessions.create(template)
    _ = try sessions.create(template)
    #expect(sessions.count == 2)
    #expect(sessions.removeAll() == 2)
    #expect(sessions.count == 0)
    #expect(folder.allFiles().isEmpty)
    #expect(throws: StorageError.uploadNotFound(first.id)) { try sessions.session(first.id) }
  }
}

/// Reset and import in versioned buckets (issue #21's noncurrent generations).
@Suite struct StoreMaintenanceVersioningTests {
  @Test(arguments: BackendKind.allCases)
  func removeAllRemovesNoncurrentGenerationsAndVersionedBuckets(_ kind: BackendKind) throws {
    let folder = TemporaryFolder()
    defer { folder.cleanUp() }
    let store = try ObjectStore(backend: try kind.makeBackend(in: folder))
    _ = try store.createBucket(
      "ver-bucket", resource: .object([("versioning", .object([("enabled", .bool(true))]))]))
    _ = try store.insert(bucket: "ver-bucket", name: "a", data: Array("one".utf8))
    _ = try store.insert(bucket: "ver-bucket", name: "a", data: Array("two".utf8))
    _ = try store.insert(bucket: "ver-bucket", name: "b", data: Array("b".utf8))
    try store.delete(bucket: "ver-bucket", name: "b")  // b: noncurrent only
    let removed = try store.removeAll()
    #expect(removed.objects == 1)
    #expect(removed.buckets == 1)
    #expect(store.listBuckets().isEmpty)
    if kind == .file {
      try store.close()
      let reopened = try ObjectStore(backend: try kind.makeBackend(in: folder))
      #expect(reopened.listBuckets().isEmpty)
      #expect(!folder.allFiles().contains { $0.hasSuffix(".data") })
    }
  }

  @Test func restoringOverALiveObjectInAVersionedBucketKeepsTheOldOneAsNoncurrent() throws {
    let store = try ObjectStore(backend: MemoryBackend())
    _ = try store.createBucket(
      "ver-bucket", resource: .object([("versioning", .object([("enabled", .bool(true))]))]))
    let live = try store.insert(bucket: "ver-bucket", name: "a", data: Array("old".utf8))
    var template = live
    template.generation = live.generation + 1000
    _ = try store.restore(template, source: .bytes(Array("new".utf8)))
    #expect(store.noncurrentVersion(bucket: "ver-bucket", name: "a", generation: live.generation) != nil)
    #expect(try store.read(bucket: "ver-bucket", name: "a").1 == Array("new".utf8))
  }
}
