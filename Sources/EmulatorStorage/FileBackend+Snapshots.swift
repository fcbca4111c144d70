import EmulatorSupport

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// `index.snapshot` while writes go on, and compaction of the segments it covers.
///
/// A snapshot begins by rolling the log to a new segment; its epoch is that segment's sequence.
/// The store then waits for every write begun before, and hands over its index: everything in
/// the older segments is in it (later writes may be too, harmlessly: replay keeps the largest
/// version). Once it is installed, start-up replays only segments from its epoch on, and the
/// older segments may be compacted.
///
/// Compaction (oldest segment first, once the log holds more than twice the live records plus
/// `compactionSlack`): each record of the oldest segment is appended again if it is still the
/// live version (checked by the store under the object's stripe lock), else dropped (so are
/// the records of a bucket whose folder is gone: deleted); its tombstones and intents are
/// dropped (nothing older than the oldest segment exists, and the snapshot holds their effect).
/// An inline record's copy moves the object's bytes: the store updates the index under the
/// object's lock as it keeps it, so a reader (who holds that lock) never reads a removed segment.
/// The copies are synced (with `fsync`), then the segment is removed. Killed at any point, the
/// copies are duplicates, which replay ignores.
extension FileBackend {
  struct SnapshotInfo {
    /// `load` has run: the log is open.
    var ready = false
    /// Between `beginSnapshot` and the end of `finishSnapshot`.
    var saving = false
    /// The installed snapshot's epoch (0: none).
    var sequence: UInt64 = 0
    /// Objects in the installed snapshot (what compaction compares the log with).
    var liveObjects = 0
    var snapshotLines = FileBackend.defaultSnapshotLines
    /// The interval grows with the store (see `snapshotDue`); false once it is set explicitly.
    var linesScale = FileBackend.defaultSnapshotLinesScale
    /// A segment compaction cannot read whole: compaction stops there (tombstones in later
    /// segments must then stay).
    var stuckAt: UInt64?
    var compactionSlack = FileBackend.defaultCompactionSlack
  }

  /// Records and tombstones after which a snapshot is due while writes go on: a crash then
  /// replays at most about this many entries. `STORAGE_EMULATOR_SNAPSHOT_LINES` overrides it.
  static let defaultSnapshotLines: Int = {
    if let text = ProcessInfo.processInfo.environment["STORAGE_EMULATOR_SNAPSHOT_LINES"], let value = Int(text),
      value > 0
    {
      return value
    }
    return 20_000
  }()

  /// Whether the interval grows with the store: not when the environment sets it.
  static let defaultSnapshotLinesScale = ProcessInfo.processInfo.environment["STORAGE_EMULATOR_SNAPSHOT_LINES"] == nil

  /// Log entries beyond twice the live objects before compaction starts;
  /// `STORAGE_EMULATOR_COMPACTION_SLACK` overrides it.
  static let defaultCompactionSlack: Int = {
    if let text = ProcessInfo.processInfo.environment["STORAGE_EMULATOR_COMPACTION_SLACK"], let value = Int(text),
      value >= 0
    {
      return value
    }
    return 100_000
  }()

  /// Entries after which `snapshotDue` (see `defaultSnapshotLines`); set, it is used as it is.
  public var snapshotLines: Int {
    get { snapshotInfo.withLock { $0.snapshotLines } }
    set {
      snapshotInfo.withLock {
        $0.snapshotLines = max(newValue, 1)
        $0.linesScale = false
        snapshotLinesFloor.store($0.snapshotLines, ordering: .relaxed)
      }
    }
  }

  /// After `snapshotLines` entries, or as many as the objects in the last snapshot when that is
  /// more (unless the interval was set). A snapshot costs time in proportion to the objects: at a
  /// fixed interval, a store of a million objects spent more on snapshots than on the uploads
  /// that caused them. Growing with the store keeps their cost per write constant, and a crash
  /// replays at most about as many entries as the store holds: no more than a start-up without
  /// a snapshot reads (2.9 s for a million objects, BENCHMARKS.md). At a quarter of the store
  /// (sessions 6 and 7), snapshots four times as frequent doubled the p99 of uploads while they
  /// ran (session 8).
  public var snapshotDue: Bool {
    // Every write asks: below the smallest interval the answer needs no lock.
    guard segments.entriesSinceRoll >= snapshotLinesFloor.load(ordering: .relaxed) else { return false }
    let (ready, saving, lines) = snapshotInfo.withLock { info in
      (info.ready, info.saving, info.linesScale ? max(info.snapshotLines, info.liveObjects) : info.snapshotLines)
    }
    return ready && !saving && segments.entriesSinceRoll >= lines
  }

  /// Writes `state` as a snapshot (called when no write is in progress: start-up, shutdown).
  public func saveSnapshot(_ state: LoadedState) throws(StorageError) {
    try finishSnapshot(state, epoch: try beginSnapshot())
  }

  /// Rolls the log to a new segment and returns its sequence, the new snapshot's epoch.
  public func beginSnapshot() throws(StorageError) -> UInt64 {
    try snapshotInfo.withLock { info throws(StorageError) in
      guard info.ready else { throw StorageError.io("the log is not open") }
      guard !info.saving else { throw StorageError.io("a snapshot is already being saved") }
      info.saving = true
    }
    do {
      return try segments.roll()
    } catch {
      snapshotInfo.withLock { $0.saving = false }
      throw error
    }
  }

  /// Writes `state` (everything published once every write that began before `beginSnapshot`
  /// had ended) as the snapshot of `epoch` and installs it. On failure the old one stays in use.
  public func finishSnapshot(_ state: LoadedState, epoch: UInt64) throws(StorageError) {
    defer { snapshotInfo.withLock { $0.saving = false } }
    // The store hands the objects over grouped by bucket in name order, each in key order: a
    // check is cheaper than a sort (and than a copy: a million objects are 128 MB).
    var objects = state.objects
    if !zip(objects, objects.dropFirst()).allSatisfy({ Self.snapshotOrder($0, $1) }) {
      objects.sort(by: Self.snapshotOrder)
    }
    var ranges: [String: Range<Int>] = [:]
    var start = 0
    while start < objects.count {
      var end = start + 1
      while end < objects.count && objects[end].bucket == objects[start].bucket { end += 1 }
      ranges[objects[start].bucket] = start..<end
      start = end
    }
    let buckets = state.buckets.sorted { $0.name < $1.name }.map { info in
      (info: info, objects: ranges[info.name].map { objects[$0] } ?? [])
    }
    let temporary = tempPath("snapshot")
    do throws(StorageError) {
      try IndexSnapshot.write(
        epoch: epoch, highest: state.highestGeneration, segments: segments.counts(before: epoch), buckets: buckets,
        damaged: damaged.withLock { Array($0) }, to: temporary, sync: fsync)
      let code = files.calls.rename(temporary, snapshotPath)
      guard code == 0 else { throw Self.error("install the index snapshot", code) }
      files.syncDirectory(root.path)
    } catch {
      unlink(temporary)
      throw error
    }
    snapshotInfo.withLock {
      $0.sequence = epoch
      $0.liveObjects = objects.count
    }
    // Segments the snapshot covers that hold no record or tombstone (a restart's, a clean
    // stop's): their intents were settled by the start-up that replayed them, or by the writes
    // the snapshot waited for.
    for sequence in segments.empty(before: epoch) { try? segments.remove(sequence) }
  }

  /// Bucket by bucket (bucket names are ASCII), then by the name's bytes.
  private static func snapshotOrder(_ a: ObjectMetadata, _ b: ObjectMetadata) -> Bool {
    a.bucket != b.bucket ? a.bucket < b.bucket : a.name.utf8.lexicographicallyPrecedes(b.name.utf8)
  }

  // MARK: Compaction

  /// Whether the oldest segment should be compacted (see the type's comment).
  public var compactionDue: Bool {
    let info = snapshotInfo.withLock { $0 }
    guard info.ready, let oldest = segments.oldestSealed, oldest < info.sequence, info.stuckAt != oldest else {
      return false
    }
    return segments.entryCount.total > 2 * info.liveObjects + info.compactionSlack
  }

  /// Entries beyond twice the live objects before compaction (see `defaultCompactionSlack`).
  public var compactionSlack: Int {
    get { snapshotInfo.withLock { $0.compactionSlack } }
    set { snapshotInfo.withLock { $0.compactionSlack = max(newValue, 0) } }
  }

  /// Compacts the oldest segment: `visit` is called for each record with a `copy` that appends
  /// it again, which it calls (holding the object's lock) if the record is the live version.
  /// Returns false when there was nothing to compact.
  public func compactOldestSegment(_ visit: CompactionVisitor) throws(StorageError) -> Bool {
    let sequence = snapshotInfo.withLock { $0.sequence }
    guard let oldest = segments.oldestSealed, oldest < sequence else { return false }
    guard let bytes = IndexSnapshot.readFile(segments.path(oldest)), bytes.starts(with: SegmentLog.header) else {
      snapshotInfo.withLock { $0.stuckAt = oldest }
      throw StorageError.io("log/\(SegmentLog.fileName(oldest)) cannot be read; it is not compacted")
    }
    var offset = SegmentLog.header.count
    // Whether each bucket's folder is there (a deleted bucket's records are dropped).
    var folders: [ArraySlice<UInt8>: Bool] = [:]
    while true {
      guard case .entry(let entry) = SegmentEntry.parse(bytes, at: offset) else {
        if case .end = SegmentEntry.parse(bytes, at: offset) { break }
        snapshotInfo.withLock { $0.stuckAt = oldest }
        throw StorageError.io("log/\(SegmentLog.fileName(oldest)) is damaged at offset \(offset); it is not compacted")
      }
      offset = entry.frame.upperBound
      guard entry.kind == .record || entry.kind == .inlineRecord else { continue }
      let bucket = String(decoding: entry.bucket, as: UTF8.self)
      if folders[entry.bucket] == nil {
        folders[entry.bucket] = SystemCall.retrying { access(bucketDir(bucket), F_OK) } == 0
      }
      guard folders[entry.bucket] == true else { continue }
      try visit(bucket, ObjectKey(bytes: Array(entry.name)), entry.version) { () throws(StorageError) -> BodyLocation? in
        let at = try segments.append(Array(bytes[entry.frame]), sync: false)
        guard entry.kind == .inlineRecord, let body = entry.recordParts?.body else { return nil }
        // The copy's bytes are as far into the new frame as they were into the old one.
        guard let moved = BodyLocation(sequence: at.sequence, offset: at.offset + body.startIndex - entry.frame.lowerBound)
        else { throw StorageError.io("the log is past the segments an inline record can be kept in") }
        return moved
      }
    }
    try segments.syncAppended()
    try segments.remove(oldest)
    return true
  }
}

/// Called by compaction for each record: bucket, name, version, and how to keep it (which
/// returns where an inline record's bytes now are: the index must say so before the old segment
/// goes).
public typealias CompactionVisitor = (
  String, ObjectKey, ObjectVersion, () throws(StorageError) -> BodyLocation?
) throws(StorageError) -> Void
