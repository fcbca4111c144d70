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
    let replayed = sequences.filter { $0 >= (opened?.epoch ?? 0) }
    let began = DispatchTime.now().uptimeNanoseconds
    var scan = SegmentScan.scan(directory: logPath, sequences: replayed, newest: sequences.last)
    if scan.entries >= 100_000 {
      let seconds = Double(DispatchTime.now().uptimeNanoseconds - began) / 1e9
      log("index: \(scan.entries) log entries in \(replayed.count) segments read in \(ObjectStore.seconds(seconds))")
    }
    for line in scan.problems { log(line) }
    if let torn = scan.torn { cutTornAppend(torn, log: log) }
    var counts = scan.counts
    for (sequence, entries) in opened?.segments ?? [:] where counts[sequence] == nil && sequences.contains(sequence) {
      counts[sequence] = entries
    }
    try files.makeDirectory(logPath)
    try segments.start(after: sequences.last ?? 0, counts: counts)
    let live = Set(state.buckets.map(\.name))
    removeLeftoverData(scan, buckets: live, log: log)
    var damagedPaths = Set(opened?.damaged ?? [])
    // (A name's path costs a hash: worked out only when something is damaged.)
    for (key, winner) in scan.winners where winner.damaged || !damagedPaths.isEmpty {
      let path = recordPath(bucket: key.bucket, name: key.name)
      if winner.damaged {
        damagedPaths.insert(path)
        damagedGenerations.withLock { $0[path] = winner.version.generation }
        log("recovery: the newest record of \(key.bucket)/\(key.name) in the log is damaged; it cannot be read")
      } else {
        damagedPaths.remove(path)
      }
    }
    damaged.withLock { $0 = damagedPaths }
    state.highestGeneration = max(opened?.highest ?? 0, scan.highest)
    let snapshotObjects = opened?.buckets.reduce(0) { $0 + $1.count }
    let scannedObjects = opened == nil ? scan.winners.values.reduce(0) { $0 + ($1.object == nil ? 0 : 1) } : 0
    snapshotInfo.withLock { info in
      info.sequence = opened?.epoch ?? 0
      info.liveObjects = snapshotObjects ?? scannedObjects
      info.ready = true
    }
    guard let opened else {
      state.batches = Self.handOverInKeyOrder(&scan.winners, counts: &state.expectedCounts)
      loadKind.withLock { $0 = .scan }
      state.wantsSnapshot = true
      return state
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
  private func cutTornAppend(_ torn: (sequence: UInt64, offset: Int), log: @Sendable (String) -> Void) {
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

  /// Removes the data files that intents and tombstones name and the winning version does not
  /// use (written before a record that never came, or dropped after one that did).
  ///
  /// An object with an intent but no record or tombstone in the segments read is one whose
  /// write was interrupted before its record: its live version, if any, is the snapshot's, and
  /// that is the generation the intent names as the one it would drop. Only the file the write
  /// created goes then (a kill mid-overwrite once removed the live bytes here: the crash test's
  /// "TORN" and "LOST").
  private func removeLeftoverData(_ scan: SegmentScan, buckets: Set<String>, log: @Sendable (String) -> Void) {
    for (key, generation, created) in scan.dataFiles where buckets.contains(key.bucket) {
      let winner = scan.winners[key]
      // A damaged record's bytes are kept for inspection.
      if winner?.damaged == true || winner?.object?.generation == generation { continue }
      if winner == nil && !created { continue }
      let base = objectBase(bucket: key.bucket, name: key.name)
      let file = base.stem + "." + String(generation) + ".data"
      if SystemCall.retrying({ unlink(base.dir + "/" + file) }) == 0 {
        log("recovery: removed \(base.dir.dropFirst(root.path.count + 1))/\(file), data of an unfinished or replaced write")
      }
    }
  }

  /// The scan's live objects (`winners` is emptied: a million objects are 150 MB twice over),
  /// bucket by bucket in key order, in batches a background thread sorts and hands over: the
  /// store appends them to its tables without hashing a name again or sorting afterwards.
  /// `counts` gets each bucket's object count (to size its tables).
  static func handOverInKeyOrder(
    _ winners: inout [ObjectPath: SegmentScan.Winner], counts: inout [String: Int]
  ) -> ObjectBatches {
    var buckets: [String: (keys: [ObjectKey], objects: [ObjectMetadata])] = [:]
    for (path, winner) in winners {
      guard let object = winner.object else { continue }
      buckets[path.bucket, default: ([], [])].keys.append(path.object)
      buckets[path.bucket]!.objects.append(object)
    }
    winners = [:]
    for (bucket, entries) in buckets { counts[bucket] = entries.keys.count }
    let batches = ObjectBatches(producers: 1)
    let names = buckets.keys.sorted()
    BackgroundThread.start(stackSize: 1 << 20) { [buckets] in
      var buckets = buckets
      for name in names {
        let (keys, objects) = buckets.removeValue(forKey: name)!
        // Positions are sorted, not the 136-byte objects (moving those cost more than comparing).
        let order = keys.indices.sorted { keys[$0] < keys[$1] }
        for start in stride(from: 0, to: order.count, by: 16_384) {
          var batch = ObjectBatch(bucket: name)
          let chunk = order[start..<min(start + 16_384, order.count)]
          batch.keys = chunk.map { keys[$0] }
          batch.objects = chunk.map { objects[$0] }
          batches.push(batch)
        }
      }
      batches.finish()
    }
    return batches
  }
}
