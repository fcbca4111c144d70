import Foundation
import Testing

@testable import EmulatorStorage

/// The index snapshot and journal (issue: the fastest emulator, start-up at scale): a snapshot is
/// only ever a faster way to the state the records hold.
@Suite struct IndexSnapshotTests {
  /// A data folder in `folder` holding one object `name` in bucket `bkt`, closed cleanly (so it
  /// has a snapshot and an empty journal).
  func closedFolder(in folder: TemporaryFolder, holding name: String) throws -> URL {
    let root = folder.url.appendingPathComponent("data")
    let store = try ObjectStore(backend: FileBackend(root: root))
    _ = try store.insert(bucket: "bkt", name: name, data: [1])
    try store.close()
    return root
  }

  func appendToJournal(in root: URL, _ bytes: [UInt8]) throws {
    let handle = try FileHandle(forWritingTo: root.appendingPathComponent("index.journal"))
    try handle.seekToEnd()
    try handle.write(contentsOf: Data(bytes))
    try handle.close()
  }

  func everyField(_ name: String) -> ObjectMetadata {
    var object = ObjectMetadata(
      bucket: "bkt", name: name, generation: 1_795_000_000_000_001, size: 42, md5: Array(0..<16), crc32c: 0xDEAD_BEEF,
      now: 1_795_000_000_000)
    object.metageneration = 7
    object.contentType = "text/plain; charset=utf-8"
    object.cacheControl = "no-cache"
    object.contentDisposition = "attachment"
    object.contentEncoding = "gzip"
    object.contentLanguage = "fr"
    object.customTime = 1_700_000_000_123
    object.custom = ["k": "v", "empty": "", "ünï": "cödé\n"]
    object.downloadTokens = ["t1", "t2"]
    object.updated = 1_795_000_000_999
    object.componentCount = 3
    return object
  }

  @Test func aSnapshotRoundTripsEveryField() throws {
    let folder = TemporaryFolder()
    defer { folder.cleanUp() }
    let path = folder.url.appendingPathComponent("snap").path
    var bare = ObjectMetadata(bucket: "bkt", name: "bare", generation: 5, size: 0, md5: nil, crc32c: 0, now: 9)
    bare.metageneration = 1
    let objects = [bare, everyField("dir/é ☃\n.txt")]
    try IndexSnapshot.write(
      epoch: 99, buckets: [(BucketInfo(name: "bkt", timeCreated: 12), objects)], damaged: ["a/b.json"], to: path,
      sync: false)
    let contents = try IndexSnapshot.read(path)
    #expect(contents.epoch == 99)
    #expect(contents.state.buckets == [BucketInfo(name: "bkt", timeCreated: 12)])
    #expect(contents.state.objects == objects)
    #expect(contents.damaged == ["a/b.json"])
  }

  @Test func aLargeSnapshotIsIndexedInBatchesAcrossBuckets() throws {
    let folder = TemporaryFolder()
    defer { folder.cleanUp() }
    let root = folder.url.appendingPathComponent("data")
    _ = try FileBackend(root: root)  // lays out the folder
    // Three buckets of 20,000 objects: several batches each, decoded on another thread.
    var buckets: [(info: BucketInfo, objects: [ObjectMetadata])] = []
    for (index, name) in ["alpha", "beta", "gamma"].enumerated() {
      let objects = (0..<20_000).map { n in
        ObjectMetadata(
          bucket: name, name: String(format: "d/%06d", n), generation: Int64(index * 100_000 + n + 1), size: 0,
          md5: nil, crc32c: 0, now: 1)
      }
      buckets.append((BucketInfo(name: name, timeCreated: 1), objects))
    }
    try IndexSnapshot.write(
      epoch: 7, buckets: buckets, damaged: [], to: root.appendingPathComponent("index.snapshot").path, sync: false)
    try Data(IndexJournal.header(epoch: 7)).write(to: root.appendingPathComponent("index.journal"))
    let backend = try FileBackend(root: root)
    let store = try ObjectStore(backend: backend)
    #expect(backend.loadedFrom == .snapshot(replayed: 0))
    #expect(store.listBuckets().map(\.name) == ["alpha", "beta", "gamma"])
    for (index, bucket) in buckets.enumerated() {
      var query = ListQuery()
      query.prefix = "d/01999"
      let page = try store.list(bucket: bucket.info.name, query: query)
      #expect(page.items.map(\.name) == (19_990..<20_000).map { String(format: "d/%06d", $0) })
      let middle = try store.metadata(bucket: bucket.info.name, name: "d/012345")
      #expect(middle.generation == Int64(index * 100_000 + 12_346))
    }
  }

  @Test func aDamagedOrTruncatedSnapshotIsRefused() throws {
    let folder = TemporaryFolder()
    defer { folder.cleanUp() }
    let path = folder.url.appendingPathComponent("snap").path
    try IndexSnapshot.write(
      epoch: 1, buckets: [(BucketInfo(name: "bkt", timeCreated: 1), [everyField("x")])], damaged: [], to: path,
      sync: false)
    let good = try Data(contentsOf: URL(fileURLWithPath: path))
    for cut in [good.count - 1, good.count / 2, 10] {
      try good.prefix(cut).write(to: URL(fileURLWithPath: path))
      #expect(throws: IndexSnapshot.Damaged.self) { try IndexSnapshot.read(path) }
    }
    var flipped = good
    flipped[good.count / 2] ^= 0x40
    try flipped.write(to: URL(fileURLWithPath: path))
    #expect(throws: IndexSnapshot.Damaged.self) { try IndexSnapshot.read(path) }
  }

  @Test func aCleanCloseMakesTheNextStartReadTheSnapshotOnly() throws {
    let folder = TemporaryFolder()
    defer { folder.cleanUp() }
    let root = folder.url.appendingPathComponent("data")
    var expected: [ObjectMetadata] = []
    do {
      let backend = try FileBackend(root: root)
      let store = try ObjectStore(backend: backend)
      #expect(backend.loadedFrom == .scan)
      for index in 0..<50 { _ = try store.insert(bucket: "bkt", name: "o\(index)", data: [UInt8(index)]) }
      var patch = MetadataPatch()
      patch.customUpdates = ["k": "v"]
      _ = try store.update(bucket: "bkt", name: "o1", patch: patch)
      try store.delete(bucket: "bkt", name: "o2")
      expected = try store.list(bucket: "bkt", query: ListQuery()).items
      #expect(try store.close())
      #expect(throws: StorageError.self) { try store.insert(bucket: "bkt", name: "late", data: [1]) }
    }
    let backend = try FileBackend(root: root)
    let reopened = try ObjectStore(backend: backend)
    #expect(backend.loadedFrom == .snapshot(replayed: 0))
    #expect(try reopened.list(bucket: "bkt", query: ListQuery()).items == expected)
    #expect(try reopened.read(bucket: "bkt", name: "o7").1 == [7])
  }

  @Test func afterAnUncleanStopTheJournalBringsBackEveryChange() throws {
    let folder = TemporaryFolder()
    defer { folder.cleanUp() }
    let root = folder.url.appendingPathComponent("data")
    do {
      let store = try ObjectStore(backend: FileBackend(root: root))
      _ = try store.createBucket("gone")
      for index in 0..<10 { _ = try store.insert(bucket: "bkt", name: "o\(index)", data: [UInt8(index)]) }
      try store.close()
    }
    var expected: [ObjectMetadata] = []
    do {
      // Changes after the snapshot, then no close: as if killed.
      let store = try ObjectStore(backend: FileBackend(root: root))
      var patch = MetadataPatch()
      patch.customUpdates = ["after": "snapshot"]
      _ = try store.update(bucket: "bkt", name: "o1", patch: patch)
      _ = try store.insert(bucket: "bkt", name: "o3", data: [33, 33])
      try store.delete(bucket: "bkt", name: "o4")
      _ = try store.insert(bucket: "bkt", name: "new", data: [1])
      try store.deleteBucket("gone")
      _ = try store.createBucket("fresh")
      expected = try store.list(bucket: "bkt", query: ListQuery()).items
    }
    let backend = try FileBackend(root: root)
    let reopened = try ObjectStore(backend: backend)
    #expect(backend.loadedFrom == .snapshot(replayed: 6))
    #expect(try reopened.list(bucket: "bkt", query: ListQuery()).items == expected)
    #expect(try reopened.read(bucket: "bkt", name: "o3").1 == [33, 33])
    #expect(try reopened.metadata(bucket: "bkt", name: "o1").custom == ["after": "snapshot"])
    #expect(reopened.listBuckets().map(\.name) == ["bkt", "fresh"])
  }

  @Test func replayingAJournaledNameRemovesWhatItsInterruptedWriteLeft() throws {
    let folder = TemporaryFolder()
    defer { folder.cleanUp() }
    let root = try closedFolder(in: folder, holding: "victim")
    let record = try #require(folder.allFiles().first { $0.hasSuffix(".json") && $0.contains("/objects/") })
    let recordURL = root.deletingLastPathComponent().appendingPathComponent(record)
    let stem = recordURL.deletingPathExtension().lastPathComponent
    let orphan = recordURL.deletingLastPathComponent().appendingPathComponent(stem + ".999.data")
    // An upload of the same name was killed after its data was renamed into place, before its
    // record: the journal names it (appended first), the data file is left over.
    try Data([9, 9]).write(to: orphan)
    try appendToJournal(in: root, IndexJournal.objectLine(bucket: "bkt", name: "victim", generations: [999]))
    let lines = LogLines()
    let backend = try FileBackend(root: root)
    let store = try ObjectStore(backend: backend, log: { lines.append($0) })
    #expect(backend.loadedFrom == .snapshot(replayed: 1))
    #expect(try store.read(bucket: "bkt", name: "victim").1 == [1])
    #expect(!FileManager.default.fileExists(atPath: orphan.path))
    #expect(lines.all.contains { $0.contains(".999.data") })
  }

  @Test func journalLinesNameTheDataFilesTheirChangesTouch() throws {
    let folder = TemporaryFolder()
    defer { folder.cleanUp() }
    let path = folder.url.appendingPathComponent("journal")
    var bytes = IndexJournal.header(epoch: 0xabc)
    bytes += IndexJournal.objectLine(bucket: "bkt", name: "a b/ü", generations: [5, 4])
    bytes += IndexJournal.objectLine(bucket: "bkt", name: "a b/ü", generations: [])
    bytes += IndexJournal.objectLine(bucket: "bkt", name: "a b/ü", generations: [7])
    bytes += IndexJournal.objectLine(bucket: "bkt", name: "gone", generations: nil)
    bytes += IndexJournal.bucketLine("other")
    try Data(bytes).write(to: path)
    let contents = try #require(IndexJournal.read(path.path))
    #expect(contents.epoch == 0xabc)
    #expect(contents.buckets == ["other"])
    #expect(contents.objects[.init(bucket: "bkt", name: "a b/ü")] == .init(generations: [4, 5, 7], all: false))
    #expect(contents.objects[.init(bucket: "bkt", name: "gone")] == .init(generations: [], all: true))
    #expect(contents.lineCount == 5)
    try Data(bytes + Array("o bkt 61 x1\n".utf8)).write(to: path)
    #expect(IndexJournal.read(path.path) == nil, "a malformed generation")
  }

  @Test func aLongJournalIsFoldedIntoANewSnapshotAtStartUp() throws {
    let folder = TemporaryFolder()
    defer { folder.cleanUp() }
    let root = try closedFolder(in: folder, holding: "kept")
    // 10,001 names changed since the snapshot (none of them left a record: writes that failed).
    var lines: [UInt8] = []
    for index in 0...10_000 { lines += IndexJournal.objectLine(bucket: "bkt", name: "n\(index)", generations: []) }
    try appendToJournal(in: root, lines)
    let backend = try FileBackend(root: root)
    let store = try ObjectStore(backend: backend)
    #expect(backend.loadedFrom == .snapshot(replayed: 10_001))
    store.waitForSnapshot()
    let journal = try #require(IndexJournal.read(root.appendingPathComponent("index.journal").path))
    #expect(journal.lineCount == 0, "a new epoch starts with an empty journal")
    #expect(try IndexSnapshot.read(root.appendingPathComponent("index.snapshot").path).epoch == journal.epoch)
    #expect(try store.read(bucket: "bkt", name: "kept").1 == [1])
  }

  @Test func aJournalOfAnotherEpochOrGarbageMeansAFullScan() throws {
    let folder = TemporaryFolder()
    defer { folder.cleanUp() }
    let root = try closedFolder(in: folder, holding: "kept")
    let journal = root.appendingPathComponent("index.journal")
    for text in ["storage-emulator index journal 1\n", "storage-emulator index journal zz\n", "garbage"] {
      try Data(text.utf8).write(to: journal)
      let lines = LogLines()
      let backend = try FileBackend(root: root)
      let store = try ObjectStore(backend: backend, log: { lines.append($0) })
      #expect(backend.loadedFrom == .scan)
      #expect(lines.all.contains { $0.contains("reading every record") })
      #expect(try store.read(bucket: "bkt", name: "kept").1 == [1])
    }
  }

  @Test func anUnfinishedLastJournalLineIsIgnored() throws {
    let folder = TemporaryFolder()
    defer { folder.cleanUp() }
    let root = try closedFolder(in: folder, holding: "kept")
    try appendToJournal(in: root, Array("o bkt 6b65".utf8))
    let backend = try FileBackend(root: root)
    let store = try ObjectStore(backend: backend)
    #expect(backend.loadedFrom == .snapshot(replayed: 0))
    #expect(try store.read(bucket: "bkt", name: "kept").1 == [1])
  }
}
