import Foundation
import Synchronization
import Testing

@testable import EmulatorStorage

/// The log segments of format 2, layer by layer: frames from bytes, the scan from files, the
/// store over a folder (issue #22 targets 1 and 2).
@Suite struct SegmentLogTests {
  static let composed = "caf\u{e9}"
  static let decomposed = "cafe\u{301}"

  func object(_ name: String, generation: Int64, metageneration: Int64 = 1, bucket: String = "bkt") -> ObjectMetadata {
    var object = ObjectMetadata(
      bucket: bucket, name: name, generation: generation, size: 1, md5: nil, crc32c: 0, now: 1000)
    object.metageneration = metageneration
    return object
  }

  func segment(_ frames: [[UInt8]]) -> [UInt8] { SegmentLog.header + frames.joined() }

  func write(_ bytes: [UInt8], sequence: UInt64, in folder: URL) throws {
    try Data(bytes).write(to: folder.appendingPathComponent(SegmentLog.fileName(sequence)))
  }

  func names(_ scan: SegmentScan) -> Set<String> {
    Set(scan.winners.filter { $0.value.object != nil }.map { $0.key.name })
  }

  // MARK: Frames

  @Test func aFrameRoundTripsAndEveryPrefixOrFlippedByteIsRejectedWithoutAnOverRead() {
    let frame = SegmentEntry.record(object("a/b", generation: 7, metageneration: 3))
    guard case .entry(let entry) = SegmentEntry.parse(frame, at: 0) else {
      Issue.record("a whole frame parses")
      return
    }
    #expect(entry.kind == .record && entry.generation == 7 && entry.metageneration == 3)
    #expect(Array(entry.name) == Array("a/b".utf8) && Array(entry.bucket) == Array("bkt".utf8))
    #expect(entry.frame == 0..<frame.count)
    for length in 1..<frame.count {
      guard case .unreadable = SegmentEntry.parse(Array(frame[0..<length]), at: 0) else {
        Issue.record("a frame cut at \(length) bytes is unreadable")
        continue
      }
    }
    for position in 0..<frame.count {
      var flipped = frame
      flipped[position] ^= 0x40
      if case .entry = SegmentEntry.parse(flipped, at: 0) { Issue.record("a flip at byte \(position) went unnoticed") }
    }
  }

  @Test func hostileLengthsInsideAFrameAreCaught() {
    // A bucket length larger than the frame, with a checksum that matches the lie.
    var frame = SegmentEntry.record(object("x", generation: 1))
    frame[9] = 0xFF
    frame[10] = 0xFF
    let crc = SegmentEntry.checksum(frame[8...])
    withUnsafeBytes(of: crc.littleEndian) { for i in 0..<4 { frame[4 + i] = $0[i] } }
    guard case .damaged = SegmentEntry.parse(frame, at: 0) else {
      Issue.record("an impossible bucket length is damage")
      return
    }
  }

  // MARK: Scanning segments

  @Test func corruptLengthFieldInAnOlderSegmentIsReportedAndTheOtherSegmentsStillRead() throws {
    let folder = TemporaryFolder()
    defer { folder.cleanUp() }
    var broken = SegmentEntry.record(object("b", generation: 2))
    broken[0] = 0xFF
    broken[1] = 0xFF
    broken[2] = 0xFF
    broken[3] = 0x7F
    try write(
      segment([SegmentEntry.record(object("a", generation: 1)), broken, SegmentEntry.record(object("c", generation: 3))]),
      sequence: 1, in: folder.url)
    try write(segment([SegmentEntry.record(object("d", generation: 4))]), sequence: 2, in: folder.url)
    let scan = SegmentScan.scan(directory: folder.url.path, sequences: [1, 2], newest: 2)
    #expect(names(scan) == ["a", "d"])
    #expect(scan.torn == nil, "an older segment is never cut")
    #expect(scan.problems.count == 1 && scan.problems[0].contains("impossible entry length"))
  }

  @Test func badChecksumMidSegmentIsReportedAndOnlyThatEntrySkipped() throws {
    let folder = TemporaryFolder()
    defer { folder.cleanUp() }
    var damaged = SegmentEntry.record(object("b", generation: 2))
    damaged[damaged.count - 3] ^= 1
    let bytes = segment([
      SegmentEntry.record(object("a", generation: 1)), damaged, SegmentEntry.record(object("c", generation: 3)),
    ])
    try write(bytes, sequence: 5, in: folder.url)
    // The newest segment too: damage followed by good entries is not a torn append.
    let scan = SegmentScan.scan(directory: folder.url.path, sequences: [5], newest: 5)
    #expect(names(scan) == ["a", "c"])
    #expect(scan.torn == nil)
    #expect(scan.problems.count == 1 && scan.problems[0].contains("checksum mismatch"))
  }

  @Test func replayOrderDoesNotChangeTheWinners() throws {
    let entries: [[UInt8]] = [
      SegmentEntry.record(object("x", generation: 10)),
      SegmentEntry.record(object("x", generation: 10, metageneration: 4)),
      SegmentEntry.record(object("x", generation: 10, metageneration: 2)),
      SegmentEntry.record(object("y", generation: 11)),
      SegmentEntry.tombstone(bucket: "bkt", name: "y", generation: 11),
      SegmentEntry.record(object("z", generation: 12)),
      SegmentEntry.tombstone(bucket: "bkt", name: "z", generation: 12),
      SegmentEntry.record(object("z", generation: 15)),
      SegmentEntry.record(object("z", generation: 15)),  // a compaction's copy
      SegmentEntry.record(object(Self.composed, generation: 20)),
      SegmentEntry.record(object(Self.decomposed, generation: 21)),
      SegmentEntry.intent(bucket: "bkt", name: "w", generations: [30, 29]),
    ]
    var generator = SystemRandomNumberGenerator()
    var outcomes = Set<String>()
    for _ in 0..<40 {
      var scan = SegmentScan()
      var parts = [SegmentScan(), SegmentScan()]
      for entryBytes in entries.shuffled(using: &generator) {
        guard case .entry(let entry) = SegmentEntry.parse(entryBytes, at: 0) else { throw StorageError.io("parse") }
        parts[Int.random(in: 0...1)].add(entry, key: entry.key, sequence: 1)
      }
      // Merged in either order, as parallel segment reads are.
      scan.merge(parts[1])
      scan.merge(parts[0])
      let description = scan.winners.sorted { $0.key.object < $1.key.object }.map {
        "\($0.key.object.bytes) \($0.value.version.generation)/\($0.value.version.metageneration) \($0.value.object == nil)"
      }
      outcomes.insert(description.joined(separator: ";"))
      #expect(scan.highest == 30, "an intent's generations count too")
    }
    #expect(outcomes.count == 1)
    let only = try #require(outcomes.first)
    #expect(only.contains("10/4 false"), "the largest metageneration wins")
    #expect(only.contains("11/\(Int64.max) true"), "a tombstone beats a record of its generation")
    #expect(only.contains("15/1 false"), "a newer generation beats an older tombstone")
  }

  // MARK: Appending

  @Test func groupCommitSyncsOnceForEveryWriterWaitingAndLosesNoEntry() throws {
    let folder = TemporaryFolder()
    defer { folder.cleanUp() }
    let syncs = Atomic<Int>(0)
    let calls = FileCalls.recording { line in
      // A slow disk: while one writer syncs, the others append and wait.
      if line.hasPrefix("fdatasync") {
        syncs.add(1, ordering: .relaxed)
        usleep(5_000)
      }
    }
    let log = SegmentLog(directory: folder.url.path, files: DurableFiles(calls: calls, fsync: true))
    try log.start(after: 0, counts: [:])
    let before = syncs.load(ordering: .relaxed)
    let failures = Atomic<Int>(0)
    // Eight threads of their own (`concurrentPerform` would run only as many as there are cores).
    let group = DispatchGroup()
    for writer in 0..<8 {
      group.enter()
      Thread {
        for n in 0..<25 {
          do {
            try log.append(SegmentEntry.tombstone(bucket: "b", name: "w\(writer)/\(n)", generation: Int64(n + 1)))
          } catch {
            failures.add(1, ordering: .relaxed)
          }
        }
        group.leave()
      }.start()
    }
    group.wait()
    let made = syncs.load(ordering: .relaxed) - before
    #expect(failures.load(ordering: .relaxed) == 0)
    #expect(made >= 1 && made < 100, "200 appends by 8 writers took \(made) syncs")
    let scan = SegmentScan.scan(directory: folder.url.path, sequences: [1], newest: 1)
    #expect(scan.winners.count == 200 && scan.problems.isEmpty && scan.torn == nil)
    #expect(log.entryCount.total == 200)
  }

  @Test func theActiveSegmentRollsAtItsSize() throws {
    let folder = TemporaryFolder()
    defer { folder.cleanUp() }
    let log = SegmentLog(directory: folder.url.path, files: DurableFiles(calls: .direct, fsync: false))
    log.rollBytes = 1000
    try log.start(after: 6, counts: [:])
    for n in 0..<30 { try log.append(SegmentEntry.tombstone(bucket: "b", name: "n\(n)", generation: 1)) }
    let sequences = SegmentLog.sequences(in: folder.url.path)
    #expect(sequences.first == 7 && sequences.count > 1)
    for sequence in sequences {
      let size = try Data(contentsOf: URL(fileURLWithPath: log.path(sequence))).count
      #expect(size <= 1000)
    }
    let scan = SegmentScan.scan(directory: folder.url.path, sequences: sequences, newest: sequences.last)
    #expect(scan.winners.count == 30 && scan.entries == 30)
  }

  // MARK: The store over a folder

  /// A store over `root` (a reopen is as after `kill -9`: the old one is just dropped).
  func open(
    _ root: URL, lines: LogLines? = nil, inlineLimit: Int = FileBackend.defaultInlineLimit
  ) throws -> (FileBackend, ObjectStore) {
    let backend = try FileBackend(root: root, inlineLimit: inlineLimit)
    return (backend, try ObjectStore(backend: backend, log: { lines?.append($0) }))
  }

  /// Appends bytes to the newest segment of the data folder `root`.
  static func appendToNewestSegment(in root: URL, _ bytes: [UInt8]) throws {
    let log = root.appendingPathComponent("log")
    let newest = try #require(
      try FileManager.default.contentsOfDirectory(atPath: log.path).filter { $0.hasSuffix(".seg") }.max())
    let handle = try FileHandle(forWritingTo: log.appendingPathComponent(newest))
    try handle.seekToEnd()
    try handle.write(contentsOf: Data(bytes))
    try handle.close()
  }

  func segmentFiles(_ root: URL) -> [String] {
    ((try? FileManager.default.contentsOfDirectory(atPath: root.appendingPathComponent("log").path)) ?? [])
      .filter { $0.hasSuffix(".seg") }.sorted()
  }

  @Test func tornLastEntryIsCutOffAtStartUp() throws {
    let folder = TemporaryFolder()
    defer { folder.cleanUp() }
    let root = folder.url.appendingPathComponent("data")
    do {
      let (_, store) = try open(root)
      _ = try store.insert(bucket: "bkt", name: "a", data: [1])
      _ = try store.insert(bucket: "bkt", name: "b", data: [2])
    }
    let newest = root.appendingPathComponent("log/" + (try #require(segmentFiles(root).last)))
    let size = try Data(contentsOf: newest).count
    try Self.appendToNewestSegment(in: root, Array(SegmentEntry.record(object("c", generation: 99)).prefix(30)))
    let lines = LogLines()
    let (_, store) = try open(root, lines: lines)
    #expect(lines.all.contains { $0.contains("cut 30 bytes") })
    #expect(try Data(contentsOf: newest).count == size)
    #expect(try store.read(bucket: "bkt", name: "a").1 == [1])
    #expect(try store.read(bucket: "bkt", name: "b").1 == [2])
    #expect(throws: StorageError.self) { try store.metadata(bucket: "bkt", name: "c") }
  }

  @Test func canonicallyEquivalentNamesStayTwoObjectsThroughReplayAndScan() throws {
    let folder = TemporaryFolder()
    defer { folder.cleanUp() }
    let root = folder.url.appendingPathComponent("data")
    do {
      let (_, store) = try open(root)
      _ = try store.insert(bucket: "bkt", name: Self.composed, data: [1])
      _ = try store.insert(bucket: "bkt", name: Self.decomposed, data: [2])
    }
    for scan in [false, true] {
      if scan { try FileManager.default.removeItem(at: root.appendingPathComponent("index.snapshot")) }
      let (backend, store) = try open(root)
      #expect(backend.loadedFrom == (scan ? .scan : .snapshot(replayed: 2)))
      let names = try store.list(bucket: "bkt", query: ListQuery()).items.map { Array($0.name.utf8) }
      #expect(names == [Array(Self.decomposed.utf8), Array(Self.composed.utf8)])
      #expect(try store.read(bucket: "bkt", name: Self.composed).1 == [1])
      #expect(try store.read(bucket: "bkt", name: Self.decomposed).1 == [2])
    }
  }

  @Test func aTombstonesGenerationSeedsTheNextOnesWithOrWithoutTheSnapshot() throws {
    let folder = TemporaryFolder()
    defer { folder.cleanUp() }
    let root = folder.url.appendingPathComponent("data")
    let deleted: Int64
    do {
      let (_, store) = try open(root)
      deleted = try store.insert(bucket: "bkt", name: "gone", data: [1]).generation
      try store.delete(bucket: "bkt", name: "gone")
    }
    let (_, replayed) = try open(root)
    #expect(replayed.lastGeneration.load(ordering: .relaxed) >= deleted)
    try replayed.close()
    let (_, snapshotOnly) = try open(root)
    #expect(snapshotOnly.lastGeneration.load(ordering: .relaxed) >= deleted, "the snapshot keeps the highest")
    try FileManager.default.removeItem(at: root.appendingPathComponent("index.snapshot"))
    let (_, scanned) = try open(root)
    #expect(scanned.lastGeneration.load(ordering: .relaxed) >= deleted)
  }

  /// What a folder holds, as (name, bytes, metageneration).
  func contents(_ store: ObjectStore) throws -> [String] {
    try store.list(bucket: "bkt", query: ListQuery()).items.map {
      "\($0.name) \(try store.read(bucket: "bkt", name: $0.name).1) m\($0.metageneration)"
    }
  }

  @Test func killDuringCompactionLosesAndResurrectsNothing() throws {
    let folder = TemporaryFolder()
    defer { folder.cleanUp() }
    let root = folder.url.appendingPathComponent("data")
    let backend = try FileBackend(root: root)
    backend.segments.rollBytes = 600
    backend.compactionSlack = 0
    let store = try ObjectStore(backend: backend)
    for n in 0..<12 { _ = try store.insert(bucket: "bkt", name: "o\(n)", data: [UInt8(n)]) }
    try churnTwelveObjects(store)
    try backend.saveSnapshot(store.snapshotState())
    let expected = try contents(store)
    #expect(expected.count == 8)
    #expect(backend.compactionDue)
    let before = segmentFiles(root)
    // Killed half-way: segments compacted oldest first until the third live record has been
    // copied; the segment that copy came from is not removed.
    var copies = 0
    var killed = false
    do {
      while try backend.compactOldestSegment({ bucket, name, version, keep throws(StorageError) in
        guard let live = try store.lookup(bucket, name.name), live.generation == version.generation,
          live.metageneration == version.metageneration
        else { return }
        if copies == 3 { throw StorageError.io("killed") }
        _ = try keep()
        copies += 1
      }) {}
    } catch {
      killed = true
    }
    #expect(killed && copies == 3)
    for withSnapshot in [true, false] {
      if !withSnapshot { try FileManager.default.removeItem(at: root.appendingPathComponent("index.snapshot")) }
      let (_, reopened) = try open(root)
      #expect(try contents(reopened) == expected)
    }
    // Compaction to the end, then killed.
    let (again, store2) = try open(root)
    again.segments.rollBytes = 600
    again.compactionSlack = 0
    try again.saveSnapshot(store2.snapshotState())
    store2.compactWhileDue()
    #expect(segmentFiles(root).count < before.count, "old segments were removed")
    #expect(again.segments.entryCount.total <= 2 * 8, "the log holds little besides the live records")
    for withSnapshot in [true, false] {
      if !withSnapshot { try FileManager.default.removeItem(at: root.appendingPathComponent("index.snapshot")) }
      let (_, reopened) = try open(root)
      #expect(try contents(reopened) == expected)
    }
  }

  /// An overwrite killed after its intent and its new data file, before its record, while the
  /// object's live version is in the snapshot (no record of it in the segments replayed):
  /// start-up removes the file the write created and keeps the live bytes. (Found by the crash
  /// test: start-up removed every generation the intent named.)
  @Test func aKillMidOverwriteKeepsTheLiveBytesTheSnapshotNames() throws {
    let folder = TemporaryFolder()
    defer { folder.cleanUp() }
    let root = folder.url.appendingPathComponent("data")
    let live: ObjectMetadata
    let unfinished: String
    do {
      let (backend, store) = try open(root, inlineLimit: 0)
      live = try store.insert(bucket: "bkt", name: "x", data: Array("live".utf8))
      try backend.saveSnapshot(store.snapshotState())
      let next = live.generation + 1
      try backend.segments.append(
        SegmentEntry.intent(bucket: "bkt", name: "x", generations: [next, live.generation]), entries: 0, sync: false)
      let base = backend.objectBase(bucket: "bkt", name: "x")
      unfinished = base.dir + "/" + base.stem + ".\(next).data"
      try Data("half".utf8).write(to: URL(fileURLWithPath: unfinished))
    }
    let (_, reopened) = try open(root)
    #expect(try reopened.read(bucket: "bkt", name: "x").1 == Array("live".utf8))
    #expect(!FileManager.default.fileExists(atPath: unfinished), "the unfinished write's file is removed")
  }

  @Test func overwritesAndPatchesDoNotGrowTheLogForever() throws {
    let folder = TemporaryFolder()
    defer { folder.cleanUp() }
    let root = folder.url.appendingPathComponent("data")
    let backend = try FileBackend(root: root)
    backend.segments.rollBytes = 4096
    backend.snapshotLines = 50
    backend.compactionSlack = 20
    let store = try ObjectStore(backend: backend)
    for round in 0..<60 {
      for n in 0..<10 { _ = try store.insert(bucket: "bkt", name: "o\(n)", data: [UInt8(round)]) }
    }
    // The writes may outrun the background snapshots: one more covers them all, and the
    // compaction after it brings the log down.
    store.waitForSnapshot()
    store.startSnapshot()
    store.waitForSnapshot()
    #expect(backend.segments.entryCount.total <= 2 * 10 + 20 + 60, "600 writes of 10 objects")
    let expected = try contents(store)
    let (_, reopened) = try open(root)
    #expect(try contents(reopened) == expected)
  }
}

/// Three rounds of PATCHes to objects `o0`…`o11` of `bkt`, then deletes of `o0`…`o3`: a log
/// whose oldest segments hold mostly dead records, for compaction and replay tests.
func churnTwelveObjects(_ store: ObjectStore) throws {
  for round in 0..<3 {
    for n in 0..<12 {
      var patch = MetadataPatch()
      patch.customUpdates = ["r": "\(round)"]
      _ = try store.update(bucket: "bkt", name: "o\(n)", patch: patch)
    }
  }
  for n in 0..<4 { try store.delete(bucket: "bkt", name: "o\(n)") }
}
