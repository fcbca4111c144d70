import Foundation
import Synchronization
import Testing

@testable import EmulatorStorage

/// Snapshots saved while writes go on (issue #22 target 1: a crash replays only a short log
/// tail), and every state a kill during one can leave.
@Suite struct BackgroundSnapshotTests {
  func file(_ root: URL, _ name: String) -> String { root.appendingPathComponent(name).path }

  /// Reopens the folder as after `kill -9` (the old store is simply dropped).
  func reopen(_ root: URL) throws -> (FileBackend, ObjectStore) {
    let backend = try FileBackend(root: root)
    return (backend, try ObjectStore(backend: backend))
  }

  @Test func snapshotsTakenWhileFourWritersRunLoseNoWriteAndShortenTheReplay() throws {
    let folder = TemporaryFolder()
    defer { folder.cleanUp() }
    let root = folder.url.appendingPathComponent("data")
    let backend = try FileBackend(root: root)
    backend.snapshotLines = 40
    let store = try ObjectStore(backend: backend)
    let failures = Atomic<Int>(0)
    DispatchQueue.concurrentPerform(iterations: 4) { writer in
      for n in 0..<150 {
        do {
          _ = try store.insert(bucket: "bkt", name: "w\(writer)/\(n)", data: [UInt8(writer), UInt8(n)])
          if n % 3 == 0 {
            var patch = MetadataPatch()
            patch.customUpdates = ["n": "\(n)"]
            _ = try store.update(bucket: "bkt", name: "w\(writer)/\(n)", patch: patch)
          }
          if n % 10 == 9 { try store.delete(bucket: "bkt", name: "w\(writer)/\(n - 1)") }
        } catch {
          failures.add(1, ordering: .relaxed)
        }
      }
    }
    #expect(failures.load(ordering: .relaxed) == 0)
    store.waitForSnapshot()
    // A snapshot is started by a write that finds one due: on a loaded machine the writers may
    // all have finished while one was still being saved, leaving the tail after it unsaved. One
    // more write starts the snapshot that tail calls for.
    _ = try store.insert(bucket: "bkt", name: "last", data: [1])
    try store.delete(bucket: "bkt", name: "last")
    store.waitForSnapshot()
    let expected = try store.list(bucket: "bkt", query: ListQuery()).items
    #expect(expected.count == 4 * 135)
    let (reopenedBackend, reopened) = try reopen(root)
    guard case .snapshot(let replayed) = reopenedBackend.loadedFrom else {
      Issue.record("expected a start from the snapshot, got \(String(describing: reopenedBackend.loadedFrom))")
      return
    }
    // 800 changes were made; the last snapshot leaves at most a few dozen to replay.
    #expect(replayed < 200)
    #expect(try reopened.list(bucket: "bkt", query: ListQuery()).items == expected)
    #expect(try reopened.read(bucket: "bkt", name: "w2/99").1 == [2, 99])
    #expect(try reopened.metadata(bucket: "bkt", name: "w3/99").custom == ["n": "99"])
  }

  /// The race the phases close: a write already appended to the log before the roll, not yet in
  /// the index, when the snapshot begins. Without the wait, the snapshot would miss it and the
  /// replayed segments would not hold it: lost after a kill.
  @Test func aSnapshotWaitsForAWriteLoggedBeforeItBegan() throws {
    let folder = TemporaryFolder()
    defer { folder.cleanUp() }
    let root = folder.url.appendingPathComponent("data")
    let armed = Atomic<Int>(0)
    let reached = DispatchSemaphore(value: 0)
    let release = DispatchSemaphore(value: 0)
    let calls = FileCalls.recording { line in
      // The record of the armed write (a small object's only append: its bytes are in it) is in
      // the log; it is not yet published.
      if line.hasPrefix("write "), line.hasSuffix(".seg"), armed.load(ordering: .relaxed) > 0,
        armed.subtract(1, ordering: .relaxed).newValue == 0
      {
        reached.signal()
        release.wait()
      }
    }
    let backend = try FileBackend(root: root, calls: calls)
    let store = try ObjectStore(backend: backend)
    _ = try store.insert(bucket: "bkt", name: "before", data: [1])
    armed.store(1, ordering: .relaxed)
    let writer = Thread { _ = try? store.insert(bucket: "bkt", name: "slow", data: [2]) }
    writer.start()
    try #require(reached.wait(timeout: .now() + 20) == .success, "the write reached its record")
    store.startSnapshot()
    Thread.sleep(forTimeInterval: 0.3)
    #expect(store.writes.withLock { $0.snapshotting }, "the snapshot waits for the write in progress")
    release.signal()
    store.waitForSnapshot()
    let snapshot = try IndexSnapshot.read(file(root, "index.snapshot"))
    #expect(snapshot.state.objects.map(\.name) == ["before", "slow"], "the slow write is in the snapshot")
    let (reopenedBackend, reopened) = try reopen(root)
    #expect(reopenedBackend.loadedFrom == .snapshot(replayed: 0))
    #expect(try reopened.read(bucket: "bkt", name: "slow").1 == [2])
    #expect(try reopened.read(bucket: "bkt", name: "before").1 == [1])
  }

  @Test func killedBeforeTheNewSnapshotIsInstalledTheOldOneAndTheLogHoldEveryChange() throws {
    let folder = TemporaryFolder()
    defer { folder.cleanUp() }
    let root = folder.url.appendingPathComponent("data")
    do {
      let store = try ObjectStore(backend: FileBackend(root: root))
      _ = try store.insert(bucket: "bkt", name: "old", data: [1])
      try store.close()
    }
    do {
      let backend = try FileBackend(root: root)
      let store = try ObjectStore(backend: backend)
      _ = try backend.beginSnapshot()
      // Appended after the roll; the snapshot is never finished (killed).
      _ = try store.insert(bucket: "bkt", name: "during", data: [2])
      try store.delete(bucket: "bkt", name: "old")
    }
    let (backend, store) = try reopen(root)
    #expect(backend.loadedFrom == .snapshot(replayed: 2))
    #expect(try store.read(bucket: "bkt", name: "during").1 == [2])
    #expect(throws: StorageError.self) { try store.metadata(bucket: "bkt", name: "old") }
  }

  @Test func writesAfterTheRollAreReplayedOverTheNewSnapshot() throws {
    let folder = TemporaryFolder()
    defer { folder.cleanUp() }
    let root = folder.url.appendingPathComponent("data")
    do {
      let store = try ObjectStore(backend: FileBackend(root: root))
      _ = try store.insert(bucket: "bkt", name: "old", data: [1])
      try store.close()
      let backend = try FileBackend(root: root)
      let reopened = try ObjectStore(backend: backend)
      let epoch = try backend.beginSnapshot()
      let state = reopened.snapshotState()
      _ = try reopened.insert(bucket: "bkt", name: "after", data: [3])  // not in `state`: only logged
      try backend.finishSnapshot(state, epoch: epoch)
    }
    let (backend, store) = try reopen(root)
    #expect(backend.loadedFrom == .snapshot(replayed: 1))
    #expect(try store.read(bucket: "bkt", name: "after").1 == [3])
    #expect(try store.read(bucket: "bkt", name: "old").1 == [1])
  }

  @Test func aSnapshotOfAnOlderVersionMeansAFullScanThenANewSnapshot() throws {
    let folder = TemporaryFolder()
    defer { folder.cleanUp() }
    let root = folder.url.appendingPathComponent("data")
    do {
      let store = try ObjectStore(backend: FileBackend(root: root))
      for n in 0..<20 { _ = try store.insert(bucket: "bkt", name: "o\(n)", data: [UInt8(n)]) }
      try store.close()
    }
    var bytes = try Data(contentsOf: root.appendingPathComponent("index.snapshot"))
    let digit = IndexSnapshot.magic.count - 2
    bytes[digit] = UInt8(ascii: "1")
    try bytes.write(to: root.appendingPathComponent("index.snapshot"))
    let lines = LogLines()
    let backend = try FileBackend(root: root)
    let store = try ObjectStore(backend: backend, log: { lines.append($0) })
    #expect(backend.loadedFrom == .scan)
    #expect(lines.all.contains { $0.contains("not a snapshot of this version") })
    #expect(try store.list(bucket: "bkt", query: ListQuery()).items.count == 20)
    let rebuilt = try IndexSnapshot.read(file(root, "index.snapshot"))
    #expect(rebuilt.state.objects.count == 20)
    #expect(rebuilt.epoch == backend.segments.activeSequence)
  }

  /// The interval between snapshots grows to as many entries as the objects the last one held (their
  /// cost is in proportion to the objects), unless it was set; `snapshotLines` is the least.
  @Test(arguments: [true, false])
  func theSnapshotIntervalGrowsWithTheObjects(scales: Bool) throws {
    let folder = TemporaryFolder()
    defer { folder.cleanUp() }
    let backend = try FileBackend(root: folder.url.appendingPathComponent("data"))
    let store = try ObjectStore(backend: backend)
    backend.snapshotLines = 10
    backend.snapshotInfo.withLock { $0.linesScale = scales }
    for n in 0..<400 { _ = try store.insert(bucket: "bkt", name: "a/\(n)", data: [1]) }
    store.waitForSnapshot()
    // One more snapshot now, of all 400 objects.
    store.startSnapshot()
    store.waitForSnapshot()
    let (epoch, live) = backend.snapshotInfo.withLock { ($0.sequence, $0.liveObjects) }
    #expect(live == 400)
    // 200 entries: past `snapshotLines`, short of the 400 objects.
    for n in 0..<200 { _ = try store.insert(bucket: "bkt", name: "b/\(n)", data: [1]) }
    store.waitForSnapshot()
    let afterTwoHundred = backend.snapshotInfo.withLock { $0.sequence }
    #expect((afterTwoHundred == epoch) == scales, "a snapshot after 200 entries: \(afterTwoHundred != epoch)")
    for n in 200..<401 { _ = try store.insert(bucket: "bkt", name: "b/\(n)", data: [1]) }
    store.waitForSnapshot()
    #expect(backend.snapshotInfo.withLock { $0.sequence } != epoch, "no snapshot after 401 entries")
  }

  /// The copy taken a batch at a time holds every object once, bucket by bucket in name order,
  /// whatever the batch size (here 7, so batches end mid-bucket and at a bucket's end).
  @Test func theIndexCopiedInBatchesHoldsEveryObjectOnceInOrder() throws {
    let folder = TemporaryFolder()
    defer { folder.cleanUp() }
    let store = try ObjectStore(backend: try FileBackend(root: folder.url.appendingPathComponent("data")))
    for n in (0..<300).shuffled() {
      _ = try store.insert(bucket: n % 3 == 0 ? "aaa" : "bbb", name: "o/\(n)", data: [UInt8(n % 256)])
    }
    let expected = try ["aaa", "bbb"].flatMap { bucket in
      try store.list(bucket: bucket, query: ListQuery()).items.map { "\($0.bucket)/\($0.name)" }
    }
    for batch in [7, 100, 256] {
      let copied = store.snapshotState(batch: batch, pausing: batch == 7).objects.map { "\($0.bucket)/\($0.name)" }
      #expect(copied == expected, "batch \(batch)")
    }
  }
}
