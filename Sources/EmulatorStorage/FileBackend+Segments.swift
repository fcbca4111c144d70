import Dispatch
import EmulatorSupport

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Start-up of format 2: the index from `index.snapshot` plus the segments from its epoch on, or
/// (no usable snapshot) from every segment; leftovers of interrupted writes removed.
extension FileBackend {
  var logPath: String { root.path + "/log" }
  var snapshotPath: String { root.path + "/index.snapshot" }

  func loadSegments(log: @Sendable (String) -> Void) throws(StorageError) -> LoadedState {
    var state = LoadedState()
    for bucket in (Self.names(in: bucketsPath) ?? []).sorted() {
      guard let info = readBucketRecord(bucket) else {
        log("recovery: skipped buckets/\(bucket): its bucket.json is missing or damaged")
        continue
      }
      state.buckets.append(info)
      state.noncurrent += loadNoncurrent(bucket, log: log)
    }
    let sequences = SegmentLog.sequences(in: logPath)
    let opened = openSnapshot(log: log)
    guard let opened else {
      try loadEverySegment(&state, sequences: sequences, log: log)
      return state
    }
    let replayed = sequences.filter { $0 >= opened.epoch }
    let began = DispatchTime.now().uptimeNanoseconds
    let scan = SegmentScan.scan(directory: logPath, sequences: replayed, newest: sequences.last)
    if scan.entries >= 100_000 {
      let seconds = Double(DispatchTime.now().uptimeNanoseconds - began) / 1e9
      log("index: \(scan.entries) log entries in \(replayed.count) segments read in \(ObjectStore.seconds(seconds))")
    }
    for line in scan.problems { log(line) }
    var counts = scan.counts
    for (sequence, entries) in opened.segments where counts[sequence] == nil && sequences.contains(sequence) {
      counts[sequence] = entries
    }
    try startLog(after: sequences.last, torn: scan.torn, counts: counts, log: log)
    let live = Set(state.buckets.map(\.name))
    removeLeftoverData(scan.leftovers, buckets: live, log: log)
    var damagedPaths = Set(opened.damaged)
    // (A name's path costs a hash: worked out only when something is damaged.)
    for (key, winner) in scan.winners where winner.damaged || !damagedPaths.isEmpty {
      if winner.damaged {
        damagedPaths.insert(noteDamaged(key, generation: winner.version.generation, log: log))
      } else {
        damagedPaths.remove(recordPath(bucket: key.bucket, name: key.name))
      }
    }
    damaged.withLock { $0 = damagedPaths }
    state.highestGeneration = max(opened.highest, scan.highest)
    snapshotInfo.withLock { info in
      info.sequence = opened.epoch
      info.liveObjects = opened.buckets.reduce(0) { $0 + $1.count }
      info.ready = true
    }
    for bucket in opened.buckets { state.expectedCounts[bucket.info.name] = bucket.count }
    let objects = scan.winners.values.compactMap(\.object)
    state.replayCount = objects.count
    let batches = ObjectBatches(producers: 1)
    state.batches = batches
    let winners = scan.winners
    let replayedObjects = objects
    let path = snapshotPath
    let large = opened.buckets.reduce(0) { $0 + $1.count } >= 10_000
    BackgroundThread.start(stackSize: 1 << 20) {
      let began = DispatchTime.now().uptimeNanoseconds
      do {
        // An object with an entry in the replayed segments: that entry is at least as new.
        try IndexSnapshot.decodeObjects(
          opened, skip: { bucket, name in !winners.isEmpty && winners[ObjectPath(bucket: bucket, object: name)] != nil },
          deliver: batches.push)
        if large {
          let seconds = Double(DispatchTime.now().uptimeNanoseconds - began) / 1e9
          batches.report("index: index.snapshot decoded in \(ObjectStore.seconds(seconds))")
        }
        for start in stride(from: 0, to: replayedObjects.count, by: 4096) {
          let end = min(start + 4096, replayedObjects.count)
          batches.push(ObjectBatch(unordered: Array(replayedObjects[start..<end])))
        }
        batches.finish()
      } catch {
        // Checksummed yet undecodable: a bug, not damage. Remove it so the retry reads every segment.
        unlink(path)
        batches.finish(failure: "index.snapshot could not be decoded (\(error))")
      }
    }
    loadKind.withLock { $0 = .snapshot(replayed: scan.winners.count) }
    // A long replay is folded into a new snapshot once the store is built.
    state.wantsSnapshot = scan.entries >= snapshotLines || scan.winners.count > 10_000
    return state
  }

  /// `index.snapshot` when it is usable (else nil, and a log line when it exists).
  private func openSnapshot(log: @Sendable (String) -> Void) -> IndexSnapshot.Opened? {
    guard FileManager.default.fileExists(atPath: snapshotPath) else { return nil }
    do {
      return try IndexSnapshot.open(snapshotPath)
    } catch {
      log("index: index.snapshot is not usable (\(error)); reading every log segment instead")
      return nil
    }
  }

  /// Cuts the newest segment's torn last append off (a segment torn in its header is removed).
  func cutTornAppend(_ torn: (sequence: UInt64, offset: Int), log: @Sendable (String) -> Void) {
    let path = segments.path(torn.sequence)
    let name = "log/" + SegmentLog.fileName(torn.sequence)
    if torn.offset == 0 {
      files.calls.unlink(path)
      log("recovery: removed \(name), a segment whose header was never completed")
      return
    }
    var info = stat()
    let size = SystemCall.retrying { stat(path, &info) } == 0 ? Int(info.st_size) : torn.offset
    guard SystemCall.retrying({ truncate(path, off_t(torn.offset)) }) == 0 else {
      log("recovery: could not cut the torn end off \(name) (errno \(errno))")
      return
    }
    log("recovery: cut \(size - torn.offset) bytes of an unfinished append off the end of \(name)")
  }

  /// Removes data files of unfinished or replaced writes (`SegmentScan.isLeftover`) in the live
  /// buckets.
  func removeLeftoverData(
    _ leftovers: [(key: ObjectPath, generation: Int64)], buckets: Set<String>, log: @Sendable (String) -> Void
  ) {
    for (key, generation) in leftovers where buckets.contains(key.bucket) {
      let base = objectBase(bucket: key.bucket, name: key.name)
      let file = base.stem + "." + String(generation) + ".data"
      if SystemCall.retrying({ unlink(base.dir + "/" + file) }) == 0 {
        log("recovery: removed \(base.dir.dropFirst(root.path.count + 1))/\(file), data of an unfinished or replaced write")
      }
    }
  }
}
