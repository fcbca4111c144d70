import Dispatch
import EmulatorSupport

/// Start-up of format 2 without a usable snapshot: every segment read by `SegmentReplay`, its
/// winners decoded in key order on a background thread while the store appends them.
extension FileBackend {
  func loadEverySegment(
    _ state: inout LoadedState, sequences: [UInt64], log: @Sendable (String) -> Void
  ) throws(StorageError) {
    let began = DispatchTime.now().uptimeNanoseconds
    let replay = SegmentReplay.read(directory: logPath, sequences: sequences, newest: sequences.last)
    let groups = replay.ordered()
    for line in replay.problems { log(line) }
    try startLog(after: sequences.last, torn: replay.torn, counts: replay.counts, log: log)
    state.highestGeneration = replay.highest
    for group in groups { state.expectedCounts[group.bucket] = group.objects.count }
    let live = groups.reduce(0) { $0 + $1.objects.count }
    if replay.entries >= 100_000 {
      let seconds = Double(DispatchTime.now().uptimeNanoseconds - began) / 1e9
      log(
        "index: \(replay.entries) log entries in \(sequences.count) segments read and \(live) live objects picked in \(ObjectStore.seconds(seconds))"
      )
    }
    damaged.withLock { $0 = [] }
    snapshotInfo.withLock { info in
      info.sequence = 0
      info.liveObjects = live
      info.ready = true
    }
    let batches = ObjectBatches(producers: 1)
    state.batches = batches
    let handOver = HandOver(replay: replay, groups: groups, buckets: Set(state.buckets.map(\.name)))
    BackgroundThread.start(stackSize: 1 << 20) { [self] in
      handOver.run(backend: self, into: batches)
    }
    loadKind.withLock { $0 = .scan }
    state.wantsSnapshot = true
  }

  /// Cuts a torn append off and opens the log for appends after segment `last`.
  func startLog(
    after last: UInt64?, torn: (sequence: UInt64, offset: Int)?, counts: [UInt64: Int], log: @Sendable (String) -> Void
  ) throws(StorageError) {
    if let torn { cutTornAppend(torn, log: log) }
    try files.makeDirectory(logPath)
    try segments.start(after: last ?? 0, counts: counts)
  }

  /// Marks the record of `key` damaged (reads of it fail; a tombstone for it must be at least
  /// `generation`).
  func noteDamaged(_ key: ObjectPath, generation: Int64, log: (String) -> Void) -> String {
    let path = recordPath(bucket: key.bucket, name: key.name)
    damagedGenerations.withLock { $0[path] = generation }
    log("recovery: the newest record of \(key.bucket)/\(key.name) in the log is damaged; it cannot be read")
    return path
  }
}

/// The background half of `loadEverySegment`. It holds the mapped segments and the slots until
/// the last batch is handed over, then lets them go before `finish` (the store is ready only
/// after that, without them in its memory).
private final class HandOver: @unchecked Sendable {
  private var replay: SegmentReplay?
  private var groups: [(bucket: String, objects: [SegmentReplay.Named])]
  private let buckets: Set<String>
  static let batchSize = 16_384

  init(replay: SegmentReplay, groups: [(bucket: String, objects: [SegmentReplay.Named])], buckets: Set<String>) {
    self.replay = replay
    self.groups = groups
    self.buckets = buckets
  }

  func run(backend: FileBackend, into batches: ObjectBatches) {
    // Every reference to the segments and slots is gone when `handOver` returns.
    let leftovers = handOver(backend: backend, into: batches)
    groups = []
    replay = nil
    backend.removeLeftoverData(leftovers, buckets: buckets, log: batches.report)
    batches.finish()
  }

  /// Decodes and hands over the live winners; returns the leftover data files.
  private func handOver(backend: FileBackend, into batches: ObjectBatches) -> [(key: ObjectPath, generation: Int64)] {
    guard let replay else { return [] }
    var damaged: [(key: ObjectPath, generation: Int64, slot: Int32)] = []
    for group in groups {
      for start in stride(from: 0, to: group.objects.count, by: Self.batchSize) {
        var batch = ObjectBatch(bucket: group.bucket)
        let chunk = group.objects[start..<min(start + Self.batchSize, group.objects.count)]
        batch.keys.reserveCapacity(chunk.count)
        batch.objects.reserveCapacity(chunk.count)
        for named in chunk {
          let key = ObjectKey(bytes: Array(named.name))
          if let object = replay.object(named, bucket: group.bucket) {
            batch.keys.append(key)
            batch.objects.append(object)
          } else {
            let generation = replay.slots[Int(named.slot)].generation
            damaged.append((ObjectPath(bucket: group.bucket, object: key), generation, named.slot))
          }
        }
        if !batch.objects.isEmpty { batches.push(batch) }
      }
    }
    var paths = Set<String>()
    for (key, generation, _) in damaged {
      paths.insert(backend.noteDamaged(key, generation: generation, log: batches.report))
    }
    backend.damaged.withLock { $0 = paths }
    if !damaged.isEmpty { backend.snapshotInfo.withLock { $0.liveObjects -= damaged.count } }
    return replay.leftovers(damaged: Set(damaged.map(\.slot)))
  }
}
