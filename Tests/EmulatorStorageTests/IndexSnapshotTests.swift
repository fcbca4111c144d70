import Foundation
import Testing

@testable import EmulatorStorage

/// The index snapshot over the log (issue: the fastest emulator, start-up at scale): a snapshot is
/// only ever a faster way to the state the log holds.
@Suite struct IndexSnapshotTests {
  /// A data folder in `folder` holding one object `name` in bucket `bkt`, closed cleanly (so it
  /// has a snapshot and nothing to replay).
  func closedFolder(
    in folder: TemporaryFolder, holding name: String, inlineLimit: Int = FileBackend.defaultInlineLimit
  ) throws -> URL {
    let root = folder.url.appendingPathComponent("data")
    let store = try ObjectStore(backend: FileBackend(root: root, inlineLimit: inlineLimit))
    _ = try store.insert(bucket: "bkt", name: name, data: [1])
    try store.close()
    return root
  }

  func appendToLog(in root: URL, _ bytes: [UInt8]) throws {
    try SegmentLogTests.appendToNewestSegment(in: root, bytes)
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
    for name in ["alpha", "beta", "gamma"] {
      let dir = root.appendingPathComponent("buckets/" + name)
      try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
      try Data(#"{"name":"\#(name)","timeCreated":"1"}"#.utf8).write(to: dir.appendingPathComponent("bucket.json"))
    }
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

  @Test func afterAnUncleanStopTheLogBringsBackEveryChange() throws {
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
    #expect(backend.loadedFrom == .snapshot(replayed: 4))
    #expect(try reopened.list(bucket: "bkt", query: ListQuery()).items == expected)
    #expect(try reopened.read(bucket: "bkt", name: "o3").1 == [33, 33])
    #expect(try reopened.metadata(bucket: "bkt", name: "o1").custom == ["after": "snapshot"])
    #expect(reopened.listBuckets().map(\.name) == ["bkt", "fresh"])
  }

  @Test func replayingAnIntentRemovesWhatItsInterruptedWriteLeft() throws {
    let folder = TemporaryFolder()
    defer { folder.cleanUp() }
    let root = try closedFolder(in: folder, holding: "victim", inlineLimit: 0)
    let data = try #require(folder.allFiles().first { $0.hasSuffix(".data") && $0.contains("/objects/") })
    let dataURL = root.deletingLastPathComponent().appendingPathComponent(data)
    let stem = String(dataURL.lastPathComponent.prefix { $0 != "." })
    let orphan = dataURL.deletingLastPathComponent().appendingPathComponent(stem + ".999.data")
    // An upload of the same name was killed after its data was renamed into place, before its
    // record: its intent names it (appended first), the data file is left over.
    try Data([9, 9]).write(to: orphan)
    try appendToLog(in: root, SegmentEntry.intent(bucket: "bkt", name: "victim", generations: [999]))
    let lines = LogLines()
    let backend = try FileBackend(root: root)
    let store = try ObjectStore(backend: backend, log: { lines.append($0) })
    #expect(backend.loadedFrom == .snapshot(replayed: 0))
    #expect(try store.read(bucket: "bkt", name: "victim").1 == [1])
    #expect(!FileManager.default.fileExists(atPath: orphan.path))
    #expect(FileManager.default.fileExists(atPath: dataURL.path), "the live version's data stays")
    #expect(lines.all.contains { $0.contains(".999.data") })
  }

  @Test func intentEntriesNameTheDataFilesTheirChangesTouch() throws {
    let frame = SegmentEntry.intent(bucket: "bkt", name: "a b/ü", generations: [5, 4])
    guard case .entry(let entry) = SegmentEntry.parse(frame, at: 0) else {
      Issue.record("an intent parses")
      return
    }
    #expect(entry.kind == .intent && entry.generations == [5, 4])
    #expect(entry.key == ObjectPath(bucket: "bkt", name: "a b/ü"))
  }

  @Test func aLongReplayIsFoldedIntoANewSnapshotAtStartUp() throws {
    let folder = TemporaryFolder()
    defer { folder.cleanUp() }
    let root = try closedFolder(in: folder, holding: "kept")
    // 10,001 names changed since the snapshot (deletes of objects that never were).
    var entries: [UInt8] = []
    for index in 0...10_000 { entries += SegmentEntry.tombstone(bucket: "bkt", name: "n\(index)", generation: 5) }
    try appendToLog(in: root, entries)
    let backend = try FileBackend(root: root)
    let store = try ObjectStore(backend: backend)
    #expect(backend.loadedFrom == .snapshot(replayed: 10_001))
    store.waitForSnapshot()
    let snapshot = try IndexSnapshot.read(root.appendingPathComponent("index.snapshot").path)
    #expect(snapshot.epoch == backend.segments.activeSequence, "a new snapshot covers everything before")
    #expect(try store.read(bucket: "bkt", name: "kept").1 == [1])
    #expect(try store.list(bucket: "bkt", query: ListQuery()).items.count == 1)
  }

  @Test func aDamagedSnapshotMeansReadingEveryLogSegment() throws {
    let folder = TemporaryFolder()
    defer { folder.cleanUp() }
    let root = try closedFolder(in: folder, holding: "kept")
    let snapshot = root.appendingPathComponent("index.snapshot")
    for text in ["storage-emulator index snapshot 5\n", "garbage", ""] {
      try Data(text.utf8).write(to: snapshot)
      let lines = LogLines()
      let backend = try FileBackend(root: root)
      let store = try ObjectStore(backend: backend, log: { lines.append($0) })
      #expect(backend.loadedFrom == .scan)
      #expect(lines.all.contains { $0.contains("reading every log segment") })
      #expect(try store.read(bucket: "bkt", name: "kept").1 == [1])
    }
  }

  @Test func anUnfinishedLastAppendIsIgnored() throws {
    let folder = TemporaryFolder()
    defer { folder.cleanUp() }
    let root = try closedFolder(in: folder, holding: "kept")
    try appendToLog(in: root, Array(SegmentEntry.tombstone(bucket: "bkt", name: "kept", generation: .max).prefix(20)))
    let backend = try FileBackend(root: root)
    let store = try ObjectStore(backend: backend)
    #expect(backend.loadedFrom == .snapshot(replayed: 0))
    #expect(try store.read(bucket: "bkt", name: "kept").1 == [1])
  }
}
