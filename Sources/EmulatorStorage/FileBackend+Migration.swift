import EmulatorSupport

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Migration of a format-1 folder (a `<sha>.json` record per object, `index.journal`): every
/// record is read (`scanRecords`, which also removes leftovers of interrupted writes), written as
/// record entries into `log.migrating/`, synced, renamed to `log/`; then `FORMAT` says 2
/// (atomically); then the old records, `index.journal` and the old snapshot are removed, and last
/// the marker `log/format-1-records`. Killed before `FORMAT` changes, the next start-up finds
/// format 1 and starts over; after, it finds format 2 and finishes the removal if the marker is
/// still there. These steps are synced whether or not `--fsync` is on: the old records go away.
extension FileBackend {
  var migratingPath: String { root.path + "/log.migrating" }
  static let migrationMarker = "format-1-records"

  func migrateFormatOne(log: @Sendable (String) -> Void) throws(StorageError) -> LoadedState {
    var state = scanRecords(log: log)
    let durable = DurableFiles(calls: files.calls, fsync: true)
    // What an attempt killed before `FORMAT` changed left.
    for path in [migratingPath, logPath] where FileManager.default.fileExists(atPath: path) {
      try? FileManager.default.removeItem(atPath: path)
    }
    try durable.makeDirectory(migratingPath)
    var sequence: UInt64 = 0
    var counts: [UInt64: Int] = [:]
    var chunk = SegmentLog.header
    var entries = 0
    func flush() throws(StorageError) {
      sequence += 1
      try durable.writeFile(chunk, to: migratingPath + "/" + SegmentLog.fileName(sequence))
      counts[sequence] = entries
      chunk = SegmentLog.header
      entries = 0
    }
    for object in state.objects {
      chunk += SegmentEntry.record(object)
      entries += 1
      if chunk.count >= segments.rollBytes { try flush() }
    }
    if entries > 0 || sequence == 0 { try flush() }
    try durable.writeFile([], to: migratingPath + "/" + Self.migrationMarker)
    durable.syncDirectory(migratingPath)
    let code = files.calls.rename(migratingPath, logPath)
    guard code == 0 else { throw Self.error("install the migrated log", code) }
    durable.syncDirectory(root.path)
    try durable.writeAtomically(
      Array(Self.formatLine.utf8), to: root.path + "/FORMAT", temp: tempPath("record"), replacing: true)
    log("migration: \(state.objects.count) object records moved from format 1 into log/ (format 2)")
    finishMigrationCleanup(log: log)
    try segments.start(after: sequence, counts: counts)
    state.highestGeneration = state.objects.reduce(0) { max($0, $1.generation) }
    snapshotInfo.withLock {
      $0.liveObjects = state.objects.count
      $0.ready = true
    }
    loadKind.withLock { $0 = .scan }
    state.wantsSnapshot = true
    return state
  }

  /// Removes what format 1 left once format 2 is in place (nothing when the marker is gone).
  /// Damaged records found by this process's migration stay, for inspection.
  func finishMigrationCleanup(log: @Sendable (String) -> Void) {
    let marker = logPath + "/" + Self.migrationMarker
    guard SystemCall.retrying({ access(marker, F_OK) }) == 0 else { return }
    let kept = damaged.withLock { $0 }
    var removed = 0
    for bucket in Self.names(in: bucketsPath) ?? [] {
      let objects = bucketDir(bucket) + "/objects"
      for shard in Self.names(in: objects) ?? [] {
        let folder = objects + "/" + shard
        for file in Self.names(in: folder) ?? [] where file.hasSuffix(".json") && !kept.contains(folder + "/" + file) {
          if unlink(folder + "/" + file) == 0 { removed += 1 }
        }
      }
    }
    for file in ["index.journal", "index.journal.next", "index.snapshot"] { unlink(root.path + "/" + file) }
    files.syncDirectory(root.path)
    unlink(marker)
    files.syncDirectory(logPath)
    log("migration: removed \(removed) format-1 record files")
  }
}
