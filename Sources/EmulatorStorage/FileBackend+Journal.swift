import EmulatorSupport
import Foundation

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// `index.snapshot` and `index.journal` (see `IndexSnapshot`, `IndexJournal`).
extension FileBackend {
  var snapshotPath: String { root.path + "/index.snapshot" }
  var journalPath: String { root.path + "/index.journal" }

  /// Writes `state` as the snapshot of a new epoch and starts that epoch's empty journal. Called
  /// when no write is in progress (start-up, shutdown). Interrupted between the two renames, the
  /// epochs differ and the next start-up reads every record.
  public func saveSnapshot(_ state: LoadedState) throws(StorageError) {
    let epoch = UInt64.random(in: 1...UInt64.max)
    var byBucket: [String: [ObjectMetadata]] = [:]
    for object in state.objects { byBucket[object.bucket, default: []].append(object) }
    let buckets = state.buckets.sorted { $0.name < $1.name }.map { info in
      (info: info, objects: (byBucket[info.name] ?? []).sorted { $0.name.utf8.lexicographicallyPrecedes($1.name.utf8) })
    }
    let temporary = tempPath("snapshot")
    do throws(StorageError) {
      try IndexSnapshot.write(
        epoch: epoch, buckets: buckets, damaged: damaged.withLock { Array($0) }, to: temporary, sync: fsync)
      let code = files.calls.rename(temporary, snapshotPath)
      guard code == 0 else { throw Self.error("install the index snapshot", code) }
      try files.writeAtomically(IndexJournal.header(epoch: epoch), to: journalPath, temp: tempPath("record"))
      try openJournal()
    } catch {
      unlink(temporary)
      // Writes go on (into whatever journal there is): the next start-up reads every record.
      journalState.withLock { $0.ready = true }
      throw error
    }
  }

  func openJournal() throws(StorageError) {
    guard SystemCall.retrying({ access(journalPath, W_OK) }) == 0 else { throw Self.error("open the index journal", errno) }
    journalState.withLock {
      $0.ready = true
      $0.named = []
    }
  }

  struct JournalState {
    /// Whether `index.journal` is ready for appending (after load).
    var ready = false
    /// Lines already in this journal that need not be written again (metadata changes of an
    /// object: replay re-reads the object's record whatever the number of lines naming it). Not
    /// remembered past a bound: a repeated line is harmless.
    var named: Set<[UInt8]> = []
  }

  /// Names a change in the journal before it is made (synced first with `fsync`, so a synced
  /// change is never missing from it). The file is opened for each append, so the emulator holds
  /// no file open for writing between requests (a folder can be remounted read-only meanwhile).
  /// A journal that was deleted meanwhile is created without a header: the next start-up then
  /// sees it does not match the snapshot and reads every record.
  func journal(_ line: [UInt8], once: Bool = false) throws(StorageError) {
    let failure: Int32? = journalState.withLock { state in
      guard state.ready else { return EBADF }
      if once && state.named.contains(line) { return nil }
      let fd = files.calls.create(journalPath, flags: O_WRONLY | O_APPEND)
      guard fd >= 0 else { return errno }
      defer { _ = Glibc.close(fd) }
      let code = line.withUnsafeBytes { files.calls.write(fd, $0, path: journalPath) }
      guard code == 0 else { return code }
      if fsync {
        let code = files.calls.dataSync(fd, path: journalPath)
        guard code == 0 else { return code }
      }
      if once && state.named.count < 100_000 { state.named.insert(line) }
      return nil
    }
    if let failure { throw Self.error("write the index journal", failure) }
  }
}
