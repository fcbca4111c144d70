import EmulatorSupport

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// `index.snapshot` and `index.journal` (see `IndexSnapshot`, `IndexJournal`), and how a new
/// snapshot replaces them while writes go on.
///
/// A new epoch begins with `index.journal.next` (its header only); from then on every line goes to
/// both journals, so `index.journal` still names every change since the old snapshot. The new
/// snapshot is written, renamed over `index.snapshot`, and only then is `index.journal.next`
/// renamed over `index.journal`. Killed at any step, start-up finds a snapshot and a journal of
/// the same epoch: the old pair, or the new snapshot and `index.journal.next` (see `loadFromSnapshot`).
extension FileBackend {
  var snapshotPath: String { root.path + "/index.snapshot" }
  var journalPath: String { root.path + "/index.journal" }
  var nextJournalPath: String { root.path + "/index.journal.next" }

  /// Journal lines after which a snapshot is due while writes go on: a crash then re-reads at most
  /// about this many records (plus those written while the snapshot is saved).
  /// `STORAGE_EMULATOR_SNAPSHOT_LINES` overrides it (tests, the crash test).
  static let defaultSnapshotLines: Int = {
    if let text = ProcessInfo.processInfo.environment["STORAGE_EMULATOR_SNAPSHOT_LINES"], let value = Int(text),
      value > 0
    {
      return value
    }
    return 20_000
  }()

  /// Writes `state` as the snapshot of a new epoch (called when no write is in progress:
  /// start-up, shutdown).
  public func saveSnapshot(_ state: LoadedState) throws(StorageError) {
    try finishSnapshot(state, epoch: try beginSnapshot())
  }

  public var snapshotDue: Bool {
    journalState.withLock { $0.ready && !$0.saving && $0.lines >= $0.snapshotLines }
  }

  /// Journal lines after which `snapshotDue` (see `defaultSnapshotLines`).
  public var snapshotLines: Int {
    get { journalState.withLock { $0.snapshotLines } }
    set { journalState.withLock { $0.snapshotLines = max(newValue, 1) } }
  }

  /// Starts a new epoch: `index.journal.next` with its header, then every line goes to both
  /// journals. Returns the new epoch, for `finishSnapshot`.
  public func beginSnapshot() throws(StorageError) -> UInt64 {
    let epoch = UInt64.random(in: 1...UInt64.max)
    return try journalState.withLock { state throws(StorageError) -> UInt64 in
      guard !state.saving else { throw StorageError.io("a snapshot is already being saved") }
      if !state.ready {
        // After reading every record: writes go on meanwhile into a journal that matches no
        // snapshot (a crash before the new one is installed means reading every record again).
        // Even if it cannot be written, appends create it (without a header, to the same effect).
        try? files.writeAtomically(
          IndexJournal.header(epoch: UInt64.random(in: 1...UInt64.max)), to: journalPath, temp: tempPath("record"))
        state.ready = true
        state.lines = 0
      }
      try files.writeAtomically(IndexJournal.header(epoch: epoch), to: nextJournalPath, temp: tempPath("record"))
      state.next = epoch
      state.nextLines = 0
      state.saving = true
      // Lines named from now on must reach the new journal too.
      state.named = []
      return epoch
    }
  }

  /// Writes `state` (everything published once every write that began before `beginSnapshot`
  /// had ended) as the snapshot of `epoch`, installs it, then makes the new journal current. On
  /// failure the old snapshot and journal stay in use.
  public func finishSnapshot(_ state: LoadedState, epoch: UInt64) throws(StorageError) {
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
    var installed = false
    do throws(StorageError) {
      try IndexSnapshot.write(
        epoch: epoch, buckets: buckets, damaged: damaged.withLock { Array($0) }, to: temporary, sync: fsync)
      let code = files.calls.rename(temporary, snapshotPath)
      guard code == 0 else { throw Self.error("install the index snapshot", code) }
      installed = true
      try journalState.withLock { journal throws(StorageError) in
        let code = files.calls.rename(nextJournalPath, journalPath)
        guard code == 0 else { throw Self.error("install the index journal", code) }
        files.syncDirectory(root.path)
        journal.next = nil
        journal.lines = journal.nextLines
        journal.saving = false
      }
    } catch {
      unlink(temporary)
      journalState.withLock { state in
        state.saving = false
        // Installed: start-up needs `index.journal.next`, which goes on receiving every line.
        if !installed {
          unlink(nextJournalPath)
          state.next = nil
        }
      }
      throw error
    }
  }

  /// Bucket by bucket (bucket names are ASCII), then by the name's bytes.
  private static func snapshotOrder(_ a: ObjectMetadata, _ b: ObjectMetadata) -> Bool {
    a.bucket != b.bucket ? a.bucket < b.bucket : a.name.utf8.lexicographicallyPrecedes(b.name.utf8)
  }

  func openJournal(lines: Int = 0) throws(StorageError) {
    guard SystemCall.retrying({ access(journalPath, W_OK) }) == 0 else {
      throw Self.error("open the index journal", errno)
    }
    journalState.withLock {
      $0.ready = true
      $0.named = []
      $0.lines = lines
      $0.next = nil
      $0.saving = false
    }
  }

  struct JournalState {
    /// Whether `index.journal` is ready for appending (after load).
    var ready = false
    /// Lines already in this journal that need not be written again (metadata changes of an
    /// object: replay re-reads the object's record whatever the number of lines naming it). Not
    /// remembered past a bound: a repeated line is harmless.
    var named: Set<[UInt8]> = []
    /// Lines in `index.journal` (since this process opened it).
    var lines = 0
    /// While a snapshot is being saved: its epoch (lines go to `index.journal.next` as well) and
    /// the lines written there.
    var next: UInt64?
    var nextLines = 0
    /// Between `beginSnapshot` and the end of `finishSnapshot`.
    var saving = false
    var snapshotLines = FileBackend.defaultSnapshotLines
  }

  /// Names a change in the journal (and the next one, while a snapshot is saved) before it is
  /// made (synced first with `fsync`, so a synced change is never missing from it). The file is
  /// opened for each append, so the emulator holds no file open for writing between requests (a
  /// folder can be remounted read-only meanwhile). A journal that was deleted meanwhile is
  /// created without a header: the next start-up then sees it does not match the snapshot and
  /// reads every record.
  ///
  /// With `fsync`, a line that is not `once` is synced after the lock is released: writers of
  /// different objects then wait for one journal commit together (the file system groups
  /// concurrent syncs of one file) instead of one after another. A `once` line is synced under
  /// the lock, as `named` promises the line is durable to the next writer that skips it.
  func journal(_ line: [UInt8], once: Bool = false) throws(StorageError) {
    var unsynced: [(fd: Int32, path: String)] = []
    let failure: Int32? = journalState.withLock { state in
      guard state.ready else { return EBADF }
      if once && state.named.contains(line) { return nil }
      if let code = append(line, to: journalPath, syncLater: !once, &unsynced) { return code }
      state.lines += 1
      if state.next != nil {
        if let code = append(line, to: nextJournalPath, syncLater: !once, &unsynced) { return code }
        state.nextLines += 1
      }
      if once && state.named.count < 100_000 { state.named.insert(line) }
      return nil
    }
    var code = failure
    for file in unsynced {
      if code == nil {
        let synced = files.calls.dataSync(file.fd, path: file.path)
        if synced != 0 { code = synced }
      }
      _ = Glibc.close(file.fd)
    }
    if let code { throw Self.error("write the index journal", code) }
  }

  /// Appends `line` to the journal at `path` and, with `fsync`, syncs it; with `syncLater` as well,
  /// leaves the open file in `unsynced` for the caller to sync and close instead.
  private func append(
    _ line: [UInt8], to path: String, syncLater: Bool, _ unsynced: inout [(fd: Int32, path: String)]
  ) -> Int32? {
    let fd = files.calls.create(path, flags: O_WRONLY | O_APPEND)
    guard fd >= 0 else { return errno }
    let code = line.withUnsafeBytes { files.calls.write(fd, $0, path: path) }
    if code == 0 && fsync && syncLater {
      unsynced.append((fd, path))
      return nil
    }
    defer { _ = Glibc.close(fd) }
    guard code == 0 else { return code }
    if fsync {
      let code = files.calls.dataSync(fd, path: path)
      guard code == 0 else { return code }
    }
    return nil
  }
}
