import Foundation
import Testing

@testable import EmulatorStorage

/// Versioned buckets and bucket settings in the store, against both backends, and across a
/// restart of the file backend (after a clean stop, which reads the snapshot, and after a crash,
/// which reads every record).
@Suite struct VersioningStoreTests {
  func versionedBucket(_ store: ObjectStore) throws {
    _ = try store.createBucket(
      "ver-bucket",
      resource: .object([("versioning", .object([("enabled", .bool(true))])), ("location", .string("eu"))]))
  }

  func generations(_ store: ObjectStore, _ prefix: String = "") throws -> [Int64] {
    var query = ListQuery()
    query.versions = true
    query.prefix = prefix
    return try store.list(bucket: "ver-bucket", query: query).items.map(\.generation)
  }

  @Test(arguments: BackendKind.allCases)
  func overwriteAndDeleteKeepNoncurrentGenerations(_ kind: BackendKind) throws {
    let folder = TemporaryFolder()
    defer { folder.cleanUp() }
    let store = try ObjectStore(backend: kind.makeBackend(in: folder))
    try versionedBucket(store)
    let one = try store.insert(bucket: "ver-bucket", name: "a", data: Array("one".utf8))
    let two = try store.insert(bucket: "ver-bucket", name: "a", data: Array("two".utf8))
    #expect(try generations(store) == [one.generation, two.generation])
    #expect(
      try store.read(bucket: "ver-bucket", name: "a", conditions: .init(generation: one.generation)).1
        == Array("one".utf8))
    #expect(try store.read(bucket: "ver-bucket", name: "a").1 == Array("two".utf8))
    #expect(store.noncurrentVersion(bucket: "ver-bucket", name: "a", generation: one.generation) != nil)
    // A noncurrent generation can be copied (restored) and composed.
    _ = try store.copy(
      from: "ver-bucket", "a", sourceConditions: .init(generation: one.generation), to: "ver-bucket", "restored")
    #expect(try store.read(bucket: "ver-bucket", name: "restored").1 == Array("one".utf8))
    _ = try store.compose(
      bucket: "ver-bucket", name: "both",
      sources: [.init(name: "a", generation: one.generation), .init(name: "a")])
    #expect(try store.read(bucket: "ver-bucket", name: "both").1 == Array("onetwo".utf8))
    try store.delete(
      bucket: "ver-bucket", name: "restored",
      conditions: .init(generation: try store.metadata(bucket: "ver-bucket", name: "restored").generation))
    try store.delete(
      bucket: "ver-bucket", name: "both",
      conditions: .init(generation: try store.metadata(bucket: "ver-bucket", name: "both").generation))
    try store.delete(bucket: "ver-bucket", name: "a")
    #expect(throws: StorageError.objectNotFound(bucket: "ver-bucket", name: "a")) {
      try store.metadata(bucket: "ver-bucket", name: "a")
    }
    #expect(try generations(store) == [one.generation, two.generation])
    try store.delete(bucket: "ver-bucket", name: "a", conditions: .init(generation: one.generation))
    #expect(try generations(store) == [two.generation])
    #expect(throws: StorageError.bucketNotEmpty(bucket: "ver-bucket")) { try store.deleteBucket("ver-bucket") }
    try store.delete(bucket: "ver-bucket", name: "a", conditions: .init(generation: two.generation))
    #expect(try generations(store).isEmpty)
    try store.deleteBucket("ver-bucket")
  }

  @Test(arguments: [true, false])
  func versionsAndSettingsSurviveRestart(cleanStop: Bool) throws {
    let folder = TemporaryFolder()
    defer { folder.cleanUp() }
    let root = folder.url.appendingPathComponent("data")
    var expected: [Int64] = []
    do {
      let store = try ObjectStore(backend: FileBackend(root: root))
      try versionedBucket(store)
      for text in ["one", "two", "three"] {
        expected.append(try store.insert(bucket: "ver-bucket", name: "dir/ü file", data: Array(text.utf8)).generation)
      }
      _ = try store.updateBucket(
        "ver-bucket", resource: .object([("labels", .object([("k", .string("v"))]))]), replace: false)
      if cleanStop { #expect(try store.close()) }
    }
    if !cleanStop {
      // As after kill -9: no snapshot for this state.
      try? FileManager.default.removeItem(at: root.appendingPathComponent("index.snapshot"))
    }
    let backend = try FileBackend(root: root)
    let store = try ObjectStore(backend: backend)
    #expect(backend.loadedFrom == (cleanStop ? .snapshot(replayed: 0) : .scan))
    #expect(try generations(store) == expected)
    let oldest = try store.read(bucket: "ver-bucket", name: "dir/ü file", conditions: .init(generation: expected[0]))
    #expect(oldest.1 == Array("one".utf8))
    let bucket = try store.bucket("ver-bucket")
    #expect(bucket.versioningEnabled)
    #expect(bucket.metageneration == 2)
    #expect(bucket.settings["location"] == .string("EU"))
    #expect(bucket.settings["labels"]?["k"] == .string("v"))
  }

  @Test(arguments: [1, 2, 3, 1000])
  func pagesOfEveryGenerationHoldMaxResultsItemsAndMissNone(_ pageSize: Int) throws {
    let store = try ObjectStore(backend: MemoryBackend())
    try versionedBucket(store)
    var expected: [Int64] = []
    for name in ["a", "b", "c"] {
      for version in 0..<(name == "b" ? 1 : 3) {
        expected.append(try store.insert(bucket: "ver-bucket", name: name, data: [UInt8(version)]).generation)
      }
    }
    try store.delete(bucket: "ver-bucket", name: "c")  // only noncurrent generations left
    var query = ListQuery()
    query.versions = true
    query.maxResults = pageSize
    var seen: [Int64] = []
    var pages = 0
    repeat {
      let page = try store.list(bucket: "ver-bucket", query: query)
      #expect(page.items.count <= pageSize)
      #expect(page.timeDeleted.count == page.items.count)
      seen += page.items.map(\.generation)
      query.pageToken = page.nextPageToken
      pages += 1
    } while query.pageToken != nil && pages < 20
    #expect(seen == expected)
    #expect(pages == (expected.count + pageSize - 1) / pageSize || pages == expected.count / pageSize + 1)
  }

  @Test func archivedButNeverReplacedGenerationIsDroppedAtStartUp() throws {
    let folder = TemporaryFolder()
    defer { folder.cleanUp() }
    let root = folder.url.appendingPathComponent("data")
    let live: ObjectMetadata
    do {
      let backend = try FileBackend(root: root)
      let store = try ObjectStore(backend: backend)
      try versionedBucket(store)
      live = try store.insert(bucket: "ver-bucket", name: "a", data: Array("x".utf8))
      // A crash after archiving the live generation, before the write that replaces it.
      try backend.archive(NoncurrentObject(object: live, timeDeleted: 1))
    }
    let lines = LogLines()
    let store = try ObjectStore(backend: FileBackend(root: root), log: { lines.append($0) })
    #expect(try generations(store) == [live.generation])
    #expect(try store.read(bucket: "ver-bucket", name: "a").1 == Array("x".utf8))
    #expect(lines.all.contains { $0.contains("still the live generation") })
    #expect(!folder.allFiles().contains { $0.contains("noncurrent/") })
  }

  @Test func unversionedBucketDropsReplacedGenerations() throws {
    let folder = TemporaryFolder()
    defer { folder.cleanUp() }
    let store = try ObjectStore(backend: FileBackend(root: folder.url.appendingPathComponent("data"), inlineLimit: 0))
    let first = try store.insert(bucket: "plain-bucket", name: "a", data: [1])
    _ = try store.insert(bucket: "plain-bucket", name: "a", data: [2])
    #expect(store.noncurrentVersion(bucket: "plain-bucket", name: "a", generation: first.generation) == nil)
    #expect(folder.allFiles().filter { $0.hasSuffix(".data") }.count == 1)
  }
}
