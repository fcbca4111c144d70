import CFiles
import Crypto
import EmulatorSupport
import Synchronization

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Keeps objects in a data folder. Layout (format 3, described in the README):
///
///     FORMAT                                       "storage-emulator data format 3"
///     LOCK                                         the running emulator's pid, locked (`FolderLock`)
///     log/<sequence, 16 hex digits>.seg            object records, append-only (`SegmentLog`)
///     index.snapshot                               the index as of a log position (`IndexSnapshot`)
///     tmp/                                         staging and spooled request bodies; emptied at start-up
///     uploads/<id>.json, <id>.part                 a resumable upload session and its bytes
///     multipart/<id>.json, <id>.<n>.part           an XML multipart upload and its parts
///     projects.json                                HMAC keys made through the API
///     buckets/<bucket>/bucket.json                 the bucket record
///     buckets/<bucket>/noncurrent/…                noncurrent generations (versioned buckets)
///     buckets/<bucket>/objects/<hh>/<sha>.<generation>.data   the bytes of an object over `inlineLimit`
///
/// `<sha>` is the hex SHA-256 of the object name's UTF-8 bytes and `<hh>` its first two digits,
/// so no name, whatever its slashes or dots, can reach outside the folder, and names that differ
/// only in Unicode normalisation stay distinct.
///
/// An object of at most `inlineLimit` bytes has no data file: its bytes are in its record (an
/// inline record), so committing it is one append, and every later record of it (a metadata
/// change, a compaction's copy) carries them too; the index keeps where they are (`BodyLocation`).
///
/// Commit protocol of a larger object: an intent entry names the new generation (and the one it replaces); the bytes
/// get their final `.data` name (a body held in memory is written there directly, a file staged
/// in `tmp/` is renamed there); then the object's record entry is appended to the log. That append
/// is the commit point: before it the old version is live, after it the new one (replay keeps the
/// largest (generation, metageneration) of each object). The old generation's data file is removed
/// afterwards. A delete appends a tombstone, then removes the data file. At start-up, data files
/// that intents or tombstones name and the winning version does not use, and everything in
/// `tmp/`, are leftovers of interrupted writes and are removed. With `fsync`, data files and
/// folders are synced before a record names them (`DurableFiles`), and an entry is acknowledged
/// once the log is synced past it (group commit, `SegmentLog`).
///
/// A format-1 folder (one `<sha>.json` record per object and `index.journal`) is migrated at
/// start-up (`FileBackend+Migration`).
public final class FileBackend: StorageBackend {
  public static let formatLine = "storage-emulator data format 3\n"
  static let formatOneLine = "storage-emulator data format 1\n"
  /// Format 2 differs only in having no inline records: its folders are taken as they are.
  static let formatTwoLine = "storage-emulator data format 2\n"

  /// Objects up to this size keep their bytes in their log record instead of a data file
  /// (`STORAGE_EMULATOR_INLINE_BYTES` overrides it; 0 turns it off).
  public static let defaultInlineLimit: Int = {
    if let text = ProcessInfo.processInfo.environment["STORAGE_EMULATOR_INLINE_BYTES"], let value = Int(text),
      value >= 0
    {
      return min(value, 1 << 20)
    }
    return 16 << 10
  }()
  let inlineLimit: Int

  public let root: URL
  public let fsync: Bool
  private let counter = Atomic<Int>(0)
  /// Record paths found damaged at start-up.
  let damaged = Locked<Set<String>>([])
  /// Temporary file names: this process, a per-process random salt (two processes with the same
  /// pid in different containers sharing a folder) and a counter.
  private let tempPrefix = "\(getpid())-\(UInt32.random(in: 0...UInt32.max))-"
  /// The generations of damaged records (a tombstone for one must be at least as large).
  let damagedGenerations = Locked<[String: Int64]>([:])
  let snapshotInfo = Locked(SnapshotInfo())
  /// `snapshotInfo.snapshotLines`, readable without the lock (the interval is never shorter).
  let snapshotLinesFloor = Atomic<Int>(FileBackend.defaultSnapshotLines)
  /// The log's appends (opened by `load`).
  let segments: SegmentLog
  let loadKind = Locked<LoadKind?>(nil)
  /// This process's claim on the folder, for the backend's life.
  private let lock: FolderLock

  /// How the last `load` found the index.
  public enum LoadKind: Sendable, Equatable {
    /// From `index.snapshot`, with this many objects changed in the segments replayed over it.
    case snapshot(replayed: Int)
    /// By reading every log segment (or every record of a format-1 folder).
    case scan
  }

  public var loadedFrom: LoadKind? { loadKind.withLock { $0 } }

  /// The write steps, through `FileCalls` (a test records them).
  let files: DurableFiles

  /// `tmp/` and `buckets/` as paths, worked out once (every write names a file in each).
  let tmpPath: String
  let bucketsPath: String

  /// `inlineLimit`: see `defaultInlineLimit` (tests choose it).
  public init(
    root: URL, fsync: Bool = false, calls: FileCalls = .direct, inlineLimit: Int = FileBackend.defaultInlineLimit
  ) throws(StorageError) {
    let root = root.standardizedFileURL
    self.root = root
    self.inlineLimit = inlineLimit
    let tmpPath = root.appendingPathComponent("tmp", isDirectory: true).path
    self.tmpPath = tmpPath
    bucketsPath = root.appendingPathComponent("buckets", isDirectory: true).path
    self.fsync = fsync
    let files = DurableFiles(calls: calls, fsync: fsync)
    self.files = files
    segments = SegmentLog(directory: root.path + "/log", files: files)
    lock = try Self.prepareRoot(root, files: files, tempPath: tmpPath + "/format-\(getpid()).record")
  }

  var tmp: URL { root.appendingPathComponent("tmp", isDirectory: true) }

  /// `tmp/`: cleaned of leftovers by `load`, on the same file system as the objects.
  public var spoolDirectory: String? { tmp.path }

  /// `uploads/` or `multipart/` (created on first use).
  public func uploadSpace(_ kind: UploadSpaceKind) throws(StorageError) -> any UploadSpace {
    if kind == .multipart {
      // Where earlier versions kept multipart parts for the life of one process only.
      try? FileManager.default.removeItem(atPath: root.path + "/uploads-xml-multipart")
    }
    return try FileUploadSpace(directory: root.path + "/" + kind.rawValue, files: files)
  }
  var bucketsDir: URL { root.appendingPathComponent("buckets", isDirectory: true) }

  /// Creates the folder (a new one in format 3) and locks it (`FolderLock`); a folder of format 1
  /// is left for `load` to migrate, one of format 2 marked 3, one of another format refused.
  private static func prepareRoot(_ root: URL, files: DurableFiles, tempPath: String) throws(StorageError) -> FolderLock {
    do {
      // With `fsync`, each folder created here is made durable in its parent.
      for folder in ["", "/buckets", "/tmp"] { try files.makeDirectory(root.path + folder) }
    } catch {
      throw StorageError.io("cannot create the data folder: \(error)")
    }
    let lock = try FolderLock.acquire(root.path)
    let formatFile = root.appendingPathComponent("FORMAT")
    if let existing = try? String(contentsOf: formatFile, encoding: .utf8) {
      if existing == formatOneLine { return lock }
      if existing == formatTwoLine {
        // From now on it may hold inline records, which a format-2 reader would take for damage.
        try files.writeAtomically(Array(Self.formatLine.utf8), to: formatFile.path, temp: tempPath, replacing: true)
        return lock
      }
      guard existing == Self.formatLine else {
        throw StorageError.io(
          "the data folder holds format '\(existing.trimmingWhitespaceAndNewlines())', this version reads '\(Self.formatLine.trimmingWhitespaceAndNewlines())'"
        )
      }
    } else {
      try files.makeDirectory(root.path + "/log")
      try files.writeAtomically(Array(Self.formatLine.utf8), to: formatFile.path, temp: tempPath)
    }
    return lock
  }

  // MARK: Paths

  func bucketDir(_ bucket: String) -> String { bucketsPath + "/" + bucket }

  func objectBase(_ object: ObjectMetadata) -> (dir: String, stem: String) {
    objectBase(bucket: object.bucket, name: object.name)
  }

  func objectBase(bucket: String, name: String) -> (dir: String, stem: String) {
    // Digit by digit (`Hex.encode` is generic, and unspecialized from here it costs more than the hash).
    var digits: [UInt8] = []
    digits.reserveCapacity(64)
    SHA256.hash(data: Array(name.utf8)).withUnsafeBytes { digest in
      for byte in digest {
        let (high, low) = Hex.digits(byte)
        digits.append(high)
        digits.append(low)
      }
    }
    let stem = String(decoding: digits, as: UTF8.self)
    return (bucketDir(bucket) + "/objects/" + stem.prefix(2), stem)
  }

  /// Where format 1 kept an object's record (format 2 names a damaged record by it).
  func recordPath(_ object: ObjectMetadata) -> String { recordPath(bucket: object.bucket, name: object.name) }

  func recordPath(bucket: String, name: String) -> String {
    let base = objectBase(bucket: bucket, name: name)
    return base.dir + "/" + base.stem + ".json"
  }

  func dataPath(_ object: ObjectMetadata) -> String {
    let base = objectBase(object)
    return base.dir + "/" + base.stem + "." + String(object.generation) + ".data"
  }

  func tempPath(_ suffix: String) -> String {
    let n = counter.wrappingAdd(1, ordering: .relaxed).oldValue
    return tmpPath + "/" + tempPrefix + String(n) + "." + suffix
  }

  // MARK: StorageBackend

  public func load(log: @Sendable (String) -> Void) throws(StorageError) -> LoadedState {
    let fm = FileManager.default
    for leftover in (try? fm.contentsOfDirectory(atPath: tmp.path)) ?? [] {
      try? fm.removeItem(atPath: tmp.path + "/" + leftover)
      log("recovery: removed the unfinished write tmp/\(leftover)")
    }
    if (try? String(contentsOf: root.appendingPathComponent("FORMAT"), encoding: .utf8)) == Self.formatOneLine {
      return try migrateFormatOne(log: log)
    }
    finishMigrationCleanup(log: log)
    return try loadSegments(log: log)
  }

  static func error(_ action: String, _ code: Int32) -> StorageError {
    let reason = String(cString: strerror(code))
    if code == ENOSPC || code == EDQUOT || code == EFBIG {
      return .insufficientStorage("Could not \(action): \(reason). Nothing was changed.")
    }
    return .io("Could not \(action): \(reason) (errno \(code)). Nothing was changed.")
  }
}
