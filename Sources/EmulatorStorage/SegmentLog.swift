import EmulatorSupport
import Synchronization

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// The append side of `log/`: segment files `<sequence as 16 hex digits>.seg`, each a header line
/// and then `SegmentEntry` frames. One segment is active: it stays open, and each entry is one
/// `write` under a lock (so a kill tears at most the last entry of the newest segment). It rolls to
/// a new segment past `rollBytes`, and when a snapshot begins (`roll`).
///
/// With `fsync`, group commit: an entry is acknowledged once the log is synced up to its end. A
/// writer whose entry ends below the synced watermark is done; otherwise one writer `fdatasync`s
/// the active segment (outside the lock, so appends go on) for every writer waiting, and the others
/// wait for it.
///
/// Invariant: every `var` is touched only with `condition` locked, by code that calls out to
/// nothing that could touch it again (so they skip the run-time exclusivity check).
final class SegmentLog: @unchecked Sendable {
  static let header = Array("storage-emulator log segment\n".utf8)

  /// The size past which the active segment rolls; `STORAGE_EMULATOR_SEGMENT_BYTES` overrides it
  /// (tests, the crash test).
  static let defaultRollBytes: Int = {
    if let text = ProcessInfo.processInfo.environment["STORAGE_EMULATOR_SEGMENT_BYTES"], let value = Int(text),
      value > 0
    {
      return min(value, 1 << 36)  // offsets stay within what a `BodyLocation` names
    }
    return 64 << 20
  }()

  /// The open active segment (closed once nothing uses it: a syncing writer may hold it across a
  /// roll).
  final class Segment: @unchecked Sendable {
    let fd: Int32
    let sequence: UInt64
    let path: String

    /// Takes ownership of `fd`, the open segment `sequence` of `directory`.
    init(_ fd: Int32, _ sequence: UInt64, in directory: String) {
      (self.fd, self.sequence) = (fd, sequence)
      path = directory + "/" + SegmentLog.fileName(sequence)
    }

    deinit { _ = Glibc.close(fd) }
  }

  let directory: String
  let files: DurableFiles
  private let condition = PosixCondition()
  @exclusivity(unchecked) private var active: Segment?
  @exclusivity(unchecked) private var activeSize = 0
  /// A failed write left bytes that could not be cut off: the next append starts a new segment.
  @exclusivity(unchecked) private var mustRoll = false
  /// Bytes appended by this process, across segments, and how many of them are synced.
  @exclusivity(unchecked) private var appended: UInt64 = 0
  @exclusivity(unchecked) private var synced: UInt64 = 0
  @exclusivity(unchecked) private var syncing = false
  /// A failed sync of a segment that is no longer active: its waiting writers cannot be answered.
  @exclusivity(unchecked) private var syncFailure: Int32?
  /// Records and tombstones in each segment (intents are not counted: compaction drops them).
  @exclusivity(unchecked) private var counts: [UInt64: Int] = [:]
  /// Records and tombstones appended since the last `roll` (for `snapshotDue`). Written under
  /// the lock, read without it: every write asks, and the lock is held across each append.
  private let sinceRoll = Atomic<Int>(0)
  /// The active segment's sequence (`.max` before `start`), likewise read without the lock.
  private let activeSequenceNow = Atomic<UInt64>(.max)
  /// Open read-only handles for reading objects' bytes out of their records (`reader`).
  @exclusivity(unchecked) private var readers: [UInt64: Segment] = [:]
  /// Set before the first append (tests set it small).
  var rollBytes = SegmentLog.defaultRollBytes

  init(directory: String, files: DurableFiles) {
    self.directory = directory
    self.files = files
  }

  static func fileName(_ sequence: UInt64) -> String {
    let hex = String(sequence, radix: 16)
    return String(repeating: "0", count: max(0, 16 - hex.count)) + hex + ".seg"
  }

  /// The sequences of the segments in `directory`, oldest first (other names are ignored).
  static func sequences(in directory: String) -> [UInt64] {
    (FileBackend.names(in: directory) ?? []).compactMap { name -> UInt64? in
      guard name.hasSuffix(".seg"), name.utf8.count == 20 else { return nil }
      return UInt64(name.prefix(16), radix: 16)
    }.sorted()
  }

  func path(_ sequence: UInt64) -> String { directory + "/" + Self.fileName(sequence) }

  /// Opens a new active segment after `last` (start-up), with the counts the scan found.
  func start(after last: UInt64, counts: [UInt64: Int]) throws(StorageError) {
    let segment = try makeSegment(last + 1)
    condition.withLocked {
      self.counts = counts
      self.counts[segment.sequence] = 0
      active = segment
      activeSequenceNow.store(segment.sequence, ordering: .relaxed)
      activeSize = Self.header.count
    }
  }

  /// Appends one frame (several, concatenated, as one `write`), counting `entries` records and
  /// tombstones; with `fsync` and `sync`, returns once it is synced. Returns where the frame
  /// starts: the segment's sequence and the offset in it.
  @discardableResult
  func append(_ frame: [UInt8], entries: Int = 1, sync: Bool = true) throws(StorageError) -> (
    sequence: UInt64, offset: Int
  ) {
    let outcome = condition.withLocked { () -> Result<(UInt64, Segment, Int), StorageError> in
      guard active != nil else { return .failure(FileBackend.error("write the log", EBADF)) }
      if mustRoll || (activeSize + frame.count > rollBytes && activeSize > Self.header.count) {
        do throws(StorageError) { _ = try rollLocked() } catch { return .failure(error) }
      }
      let segment = active!
      let offset = activeSize
      let code = frame.withUnsafeBytes { files.calls.write(segment.fd, $0, path: segment.path) }
      guard code == 0 else {
        // Cut a partial write off, or the next entry would follow damage.
        if ftruncate(segment.fd, off_t(activeSize)) != 0 { mustRoll = true }
        return .failure(FileBackend.error("write the log", code))
      }
      activeSize += frame.count
      appended += UInt64(frame.count)
      counts[segment.sequence, default: 0] += entries
      sinceRoll.add(entries, ordering: .relaxed)
      return .success((appended, segment, offset))
    }
    let (end, segment, offset) = try outcome.get()
    if files.fsync && sync { try waitSynced(end) }
    return (segment.sequence, offset)
  }

  /// Whether an entry appended now lands where a `BodyLocation` can name it.
  var namesInlineBodies: Bool {
    activeSequenceNow.load(ordering: .relaxed) < BodyLocation.sequenceLimit - 1
  }

  /// A read-only handle on segment `sequence` (cached; nil once the segment is removed). The
  /// handle keeps the file open for as long as its holder reads, even across a removal.
  func reader(_ sequence: UInt64) -> Segment? {
    condition.withLocked {
      if let segment = readers[sequence] { return segment }
      let path = path(sequence)
      let fd = SystemCall.retrying { Glibc.open(path, O_RDONLY | O_CLOEXEC) }
      guard fd >= 0 else { return nil }
      let segment = Segment(fd, sequence, in: directory)
      // Bounded: a log of many small segments (tests) opens again what is dropped here.
      if readers.count >= 64 { readers.removeAll() }
      readers[sequence] = segment
      return segment
    }
  }

  /// Returns once everything appended so far is synced (with `fsync`).
  func syncAppended() throws(StorageError) {
    guard files.fsync else { return }
    try waitSynced(condition.withLocked { appended })
  }

  /// Waits until the log is synced up to `end`, syncing it for every waiting writer when no
  /// other writer is.
  private func waitSynced(_ end: UInt64) throws(StorageError) {
    condition.lock()
    defer { condition.unlock() }
    while synced < end {
      if let syncFailure { throw FileBackend.error("sync the log", syncFailure) }
      if syncing {
        condition.wait()
        continue
      }
      syncing = true
      let target = appended
      let segment = active!
      condition.unlock()
      let code = files.calls.dataSync(segment.fd, path: segment.path)
      condition.lock()
      syncing = false
      condition.broadcast()
      guard code == 0 else { throw FileBackend.error("sync the log", code) }
      synced = max(synced, target)
    }
  }

  /// Starts a new active segment and returns its sequence: everything appended before is in
  /// older segments (what a snapshot begun now must cover).
  func roll() throws(StorageError) -> UInt64 {
    try condition.withLocked { () throws(StorageError) -> UInt64 in
      let sequence = try rollLocked()
      sinceRoll.store(0, ordering: .relaxed)
      return sequence
    }
  }

  private func rollLocked() throws(StorageError) -> UInt64 {
    guard let old = active else { throw FileBackend.error("write the log", EBADF) }
    let segment = try makeSegment(old.sequence + 1)
    if files.fsync && synced < appended {
      // Writers of the old segment's last entries may be waiting: sync it for them now.
      let code = files.calls.dataSync(old.fd, path: old.path)
      if code == 0 { synced = appended } else { syncFailure = code }
    }
    active = segment
    activeSequenceNow.store(segment.sequence, ordering: .relaxed)
    activeSize = Self.header.count
    mustRoll = false
    counts[segment.sequence] = 0
    return segment.sequence
  }

  /// Creates a segment with its header (synced, and its name made durable, with `fsync`).
  private func makeSegment(_ sequence: UInt64) throws(StorageError) -> Segment {
    let path = path(sequence)
    let fd = files.calls.create(path, flags: O_WRONLY | O_APPEND | O_TRUNC)
    guard fd >= 0 else { throw FileBackend.error("create a log segment", errno) }
    let segment = Segment(fd, sequence, in: directory)
    var code = Self.header.withUnsafeBytes { files.calls.write(fd, $0, path: path) }
    if code == 0 && files.fsync { code = files.calls.dataSync(fd, path: path) }
    guard code == 0 else {
      files.calls.unlink(path)
      throw FileBackend.error("create a log segment", code)
    }
    files.syncDirectory(directory)
    return segment
  }

  /// The active segment's sequence (0 before `start`).
  var activeSequence: UInt64 { condition.withLocked { active?.sequence ?? 0 } }

  /// Records and tombstones per segment older than `sequence`.
  func counts(before sequence: UInt64) -> [(sequence: UInt64, entries: Int)] {
    condition.withLocked { counts.filter { $0.key < sequence }.map { ($0.key, $0.value) }.sorted { $0.0 < $1.0 } }
  }

  /// Records and tombstones appended since the last `roll` (checked after every write).
  var entriesSinceRoll: Int { sinceRoll.load(ordering: .relaxed) }

  /// Records and tombstones in every segment, and since the last roll.
  var entryCount: (total: Int, sinceRoll: Int) {
    condition.withLocked { (counts.values.reduce(0, +), sinceRoll.load(ordering: .relaxed)) }
  }

  /// The oldest segment, if it is not the active one.
  var oldestSealed: UInt64? {
    condition.withLocked {
      guard let oldest = counts.keys.min(), oldest != active?.sequence else { return nil }
      return oldest
    }
  }

  /// Sealed segments older than `sequence` that hold no record or tombstone.
  func empty(before sequence: UInt64) -> [UInt64] {
    condition.withLocked { counts.filter { $0.key < sequence && $0.value == 0 }.map(\.key).sorted() }
  }

  /// Removes a sealed segment (its live entries copied and synced first by the caller).
  func remove(_ sequence: UInt64) throws(StorageError) {
    let code = files.calls.unlink(path(sequence))
    guard code == 0 || code == ENOENT else { throw FileBackend.error("remove a log segment", code) }
    files.syncDirectory(directory)
    condition.withLocked {
      _ = counts.removeValue(forKey: sequence)
      readers[sequence] = nil
    }
  }
}

extension PosixCondition {
  /// Runs `body` with the lock held.
  func withLocked<Result, Failure: Error>(_ body: () throws(Failure) -> Result) throws(Failure) -> Result {
    lock()
    defer { unlock() }
    return try body()
  }
}
