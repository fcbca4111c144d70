import Foundation
import Testing

@testable import EmulatorStorage

/// Start-up without a snapshot (`SegmentReplay`: slots first, winners decoded after): the same
/// winners as the one-table scan (`SegmentScan`) from segment files, then the store over a folder
/// whose `index.snapshot` is gone (issue #22 target 1).
@Suite struct SegmentReplayTests {
  let helpers = SegmentLogTests()

  // MARK: Against the one-table scan

  /// A random log: records (plain and inline, some with a body that does not match the size),
  /// tombstones, intents, compaction copies and undecodable records over few names in two
  /// buckets, spread over segments in random order.
  func randomSegments(_ generator: inout some RandomNumberGenerator) -> [[[UInt8]]] {
    let names = ["a", "b", "c/d", SegmentLogTests.composed, SegmentLogTests.decomposed, "long-name-sharing-16/1",
      "long-name-sharing-16/2", "long-name-sharing-16", ""]
    var segments: [[[UInt8]]] = Array(repeating: [], count: 5)
    for _ in 0..<300 {
      let bucket = Bool.random(using: &generator) ? "bkt" : "other"
      let name = names.randomElement(using: &generator)!
      let generation = Int64.random(in: 1...6, using: &generator)
      var object = helpers.object(name, generation: generation, metageneration: .random(in: 1...3, using: &generator), bucket: bucket)
      let frame: [UInt8]
      switch Int.random(in: 0..<10, using: &generator) {
      case 0...2: frame = SegmentEntry.record(object)
      case 3...4:
        object.size = 3
        let body: [UInt8] = Bool.random(using: &generator) ? [1, 2, 3] : [1]  // [1]: does not match its size
        frame = SegmentEntry.inlineRecord(object, body: body)
      case 5...6: frame = SegmentEntry.tombstone(bucket: bucket, name: name, generation: generation)
      case 7: frame = SegmentEntry.intent(bucket: bucket, name: name, generations: [generation + 1, generation])
      case 8:
        frame = SegmentEntry.encode(
          .record, bucket: bucket, name: name, generation: generation, metageneration: 9, payload: [1, 2, 3])
      default: frame = SegmentEntry.record(helpers.object(name + "x", generation: generation, bucket: bucket))
      }
      segments[Int.random(in: 0..<5, using: &generator)].append(frame)
      if Int.random(in: 0..<8, using: &generator) == 0 { segments[Int.random(in: 0..<5, using: &generator)].append(frame) }
    }
    return segments
  }

  /// The winners, as text: "bucket name version object-or-tombstone-or-damaged body".
  func described(_ scan: SegmentScan) -> [String] {
    scan.winners.map { key, winner in
      let what = winner.damaged ? "damaged" : winner.object.map { "\($0.generation)/\($0.metageneration) \($0.body)" } ?? "gone"
      return "\(key.bucket) \(key.object.bytes) \(winner.version.generation)/\(winner.version.metageneration) \(what)"
    }.sorted()
  }

  func described(_ replay: SegmentReplay) -> [String] {
    var lines: [String] = []
    for (bucket, objects) in replay.ordered() {
      for named in objects {
        let slot = replay.slots[Int(named.slot)]
        let what = replay.object(named, bucket: bucket).map { "\($0.generation)/\($0.metageneration) \($0.body)" } ?? "damaged"
        lines.append("\(bucket) \(Array(named.name)) \(slot.generation)/\(slot.metageneration) \(what)")
      }
    }
    for number in replay.slots.indices where replay.slots[number].kind == .tombstone {
      guard replay.winner(of: number) == number else { continue }
      let (bucket, name) = replay.names(replay.slots[number])
      let slot = replay.slots[number]
      lines.append("\(String(decoding: bucket, as: UTF8.self)) \(Array(name)) \(slot.generation)/\(slot.metageneration) gone")
    }
    return lines.sorted()
  }

  @Test func replayPicksTheWinnersTheOneTableScanPicksWhateverTheSegmentOrder() throws {
    var generator = SystemRandomNumberGenerator()
    for _ in 0..<30 {
      let folder = TemporaryFolder()
      defer { folder.cleanUp() }
      let segments = randomSegments(&generator)
      for (index, frames) in segments.enumerated() {
        try helpers.write(helpers.segment(frames), sequence: UInt64(index + 1), in: folder.url)
      }
      let sequences = Array(1...UInt64(segments.count))
      let scan = SegmentScan.scan(directory: folder.url.path, sequences: sequences, newest: sequences.last)
      let replay = SegmentReplay.read(directory: folder.url.path, sequences: sequences, newest: sequences.last)
      #expect(described(replay) == described(scan))
      #expect(replay.highest == scan.highest && replay.counts == scan.counts && replay.entries == scan.entries)
      let damaged = Set(
        replay.ordered().flatMap { bucket, objects in
          objects.filter { replay.object($0, bucket: bucket) == nil }.map(\.slot)
        })
      let leftovers = Set(replay.leftovers(damaged: damaged).map { "\($0.key.bucket) \($0.key.object.bytes) \($0.generation)" })
      #expect(leftovers == Set(scan.leftovers.map { "\($0.key.bucket) \($0.key.object.bytes) \($0.generation)" }))
    }
  }

  @Test func aRecordWhoseMetadataNamesAnotherObjectIsDamagedInBothScans() throws {
    let folder = TemporaryFolder()
    defer { folder.cleanUp() }
    let other = helpers.object("b", generation: 3)
    let frames = [
      SegmentEntry.record(helpers.object("kept", generation: 1)),
      SegmentEntry.encode(
        .record, bucket: "bkt", name: "a", generation: 3, metageneration: 1, payload: IndexSnapshot.encode(other)),
      SegmentEntry.encode(
        .record, bucket: "bkt", name: "bb", generation: 3, metageneration: 1, payload: IndexSnapshot.encode(other)),
    ]
    try helpers.write(helpers.segment(frames), sequence: 1, in: folder.url)
    let scan = SegmentScan.scan(directory: folder.url.path, sequences: [1], newest: 1)
    let replay = SegmentReplay.read(directory: folder.url.path, sequences: [1], newest: 1)
    let kept = "bkt \(Array("kept".utf8)) 1/1 1/1 \(BodyLocation.dataFile)"
    #expect(described(scan) == ["bkt [97] 3/1 damaged", "bkt [98, 98] 3/1 damaged", kept].sorted())
    #expect(described(replay) == described(scan))
  }

  @Test func theLiveObjectsComeInKeyOrderPerBucket() throws {
    let folder = TemporaryFolder()
    defer { folder.cleanUp() }
    var names = (0..<3000).map { "prefix-of-sixteen/\($0 * 7919 % 3000)" } + ["a", "ab", "a/b", "\u{e9}", "z"]
    names.shuffle()
    let frames = names.enumerated().map { SegmentEntry.record(helpers.object($1, generation: Int64($0 + 1))) }
    try helpers.write(helpers.segment(Array(frames[..<1500])), sequence: 1, in: folder.url)
    try helpers.write(helpers.segment(Array(frames[1500...])), sequence: 2, in: folder.url)
    let replay = SegmentReplay.read(directory: folder.url.path, sequences: [1, 2], newest: 2)
    let ordered = replay.ordered()
    #expect(ordered.map(\.bucket) == ["bkt"])
    let keys = try #require(ordered.first).objects.map { ObjectKey(bytes: Array($0.name)) }
    #expect(keys == names.map(ObjectKey.init).sorted())
    // Sorted in two halves and merged, as a large bucket is.
    let halves = try #require(replay.ordered(parallelAbove: 64).first).objects.map { ObjectKey(bytes: Array($0.name)) }
    #expect(halves == keys)
  }

  // MARK: The store over a folder without its snapshot

  func reopenWithoutSnapshot(_ root: URL, lines: LogLines? = nil) throws -> (FileBackend, ObjectStore) {
    try? FileManager.default.removeItem(at: root.appendingPathComponent("index.snapshot"))
    let opened = try helpers.open(root, lines: lines)
    #expect(opened.0.loadedFrom == .scan)
    return opened
  }

  @Test func anOlderVersionInALaterSegmentLosesToTheNewerOne() throws {
    let folder = TemporaryFolder()
    defer { folder.cleanUp() }
    let root = folder.url.appendingPathComponent("data")
    let live: ObjectMetadata
    do {
      let (backend, store) = try helpers.open(root)
      backend.segments.rollBytes = 400
      live = try store.insert(bucket: "bkt", name: "x", data: [7])
      for n in 0..<20 { _ = try store.insert(bucket: "bkt", name: "filler\(n)", data: [UInt8(n)]) }
    }
    #expect(helpers.segmentFiles(root).count > 2)
    // A stale copy of an older version, and an older tombstone, in the newest segment.
    var older = helpers.object("x", generation: live.generation - 1, metageneration: 5)
    older.size = 1
    try SegmentLogTests.appendToNewestSegment(in: root, SegmentEntry.inlineRecord(older, body: [9]))
    try SegmentLogTests.appendToNewestSegment(
      in: root, SegmentEntry.tombstone(bucket: "bkt", name: "x", generation: live.generation - 1))
    let (_, store) = try reopenWithoutSnapshot(root)
    #expect(try store.read(bucket: "bkt", name: "x").1 == [7])
    #expect(try store.metadata(bucket: "bkt", name: "x").generation == live.generation)
    #expect(try store.list(bucket: "bkt", query: ListQuery()).items.count == 21)
  }

  @Test func aDeleteAfterAPutAndAPutAfterADeleteBothHold() throws {
    let folder = TemporaryFolder()
    defer { folder.cleanUp() }
    let root = folder.url.appendingPathComponent("data")
    do {
      let (backend, store) = try helpers.open(root)
      backend.segments.rollBytes = 300
      _ = try store.insert(bucket: "bkt", name: "deleted", data: [1])
      _ = try store.insert(bucket: "bkt", name: "back", data: [2])
      for n in 0..<5 { _ = try store.insert(bucket: "bkt", name: "f\(n)", data: [1]) }
      try store.delete(bucket: "bkt", name: "deleted")
      try store.delete(bucket: "bkt", name: "back")
      _ = try store.insert(bucket: "bkt", name: "back", data: [3])
      var patch = MetadataPatch()
      patch.customUpdates = ["k": "v"]
      _ = try store.update(bucket: "bkt", name: "back", patch: patch)
    }
    let (_, store) = try reopenWithoutSnapshot(root)
    #expect(throws: StorageError.self) { try store.metadata(bucket: "bkt", name: "deleted") }
    #expect(try store.read(bucket: "bkt", name: "back").1 == [3])
    #expect(try store.metadata(bucket: "bkt", name: "back").metageneration == 2)
  }

  @Test func inlineBodiesAreFoundWhereACompactionMovedThem() throws {
    let folder = TemporaryFolder()
    defer { folder.cleanUp() }
    let root = folder.url.appendingPathComponent("data")
    let expected: [String]
    do {
      let (backend, store) = try helpers.open(root)
      backend.segments.rollBytes = 600
      backend.compactionSlack = 0
      for n in 0..<12 { _ = try store.insert(bucket: "bkt", name: "o\(n)", data: Array(repeating: UInt8(n), count: n + 1)) }
      try churnTwelveObjects(store)
      let before = helpers.segmentFiles(root)
      try backend.saveSnapshot(store.snapshotState())
      store.compactWhileDue()
      #expect(helpers.segmentFiles(root).first != before.first, "the oldest segments were compacted away")
      expected = try helpers.contents(store)
    }
    #expect(expected.count == 8)
    let (_, store) = try reopenWithoutSnapshot(root)
    #expect(try helpers.contents(store) == expected)
    for n in 4..<12 {
      #expect(try store.read(bucket: "bkt", name: "o\(n)").1 == Array(repeating: UInt8(n), count: n + 1))
    }
  }

  @Test func aDamagedEntryMidSegmentIsSkippedAndReportedAndADamagedWinnerCannotBeRead() throws {
    let folder = TemporaryFolder()
    defer { folder.cleanUp() }
    let root = folder.url.appendingPathComponent("data")
    let victim: ObjectMetadata
    do {
      let (backend, store) = try helpers.open(root)
      backend.segments.rollBytes = 100_000
      _ = try store.insert(bucket: "bkt", name: "before", data: [1])
      _ = try store.insert(bucket: "bkt", name: "flipped", data: [2])
      _ = try store.insert(bucket: "bkt", name: "after", data: [3])
      victim = try store.insert(bucket: "bkt", name: "victim", data: [4])
    }
    // One bit flipped in "flipped"'s record (mid-segment: entries follow it).
    let segment = root.appendingPathComponent("log/" + (try #require(helpers.segmentFiles(root).last)))
    var bytes = [UInt8](try Data(contentsOf: segment))
    let at = try #require(bytes.indices.first { bytes[$0...].starts(with: Array("flipped".utf8)) })
    bytes[at + 20] ^= 1
    try Data(bytes).write(to: segment)
    // A newer record of "victim" whose checksum matches but whose metadata does not decode.
    try SegmentLogTests.appendToNewestSegment(
      in: root,
      SegmentEntry.encode(
        .record, bucket: "bkt", name: "victim", generation: victim.generation, metageneration: 2, payload: [1, 2]))
    let lines = LogLines()
    let (backend, store) = try reopenWithoutSnapshot(root, lines: lines)
    #expect(lines.all.contains { $0.contains("checksum mismatch") })
    #expect(lines.all.contains { $0.contains("victim in the log is damaged") })
    #expect(try store.read(bucket: "bkt", name: "before").1 == [1])
    #expect(try store.read(bucket: "bkt", name: "after").1 == [3])
    #expect(throws: StorageError.self) { try store.metadata(bucket: "bkt", name: "flipped") }
    #expect(backend.isDamaged(bucket: "bkt", name: "victim"))
    #expect(throws: StorageError.self) { try store.metadata(bucket: "bkt", name: "victim") }
    #expect(try store.list(bucket: "bkt", query: ListQuery()).items.map(\.name) == ["after", "before"])
  }
}
