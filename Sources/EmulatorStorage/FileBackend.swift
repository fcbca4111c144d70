import CFiles
import Crypto
import EmulatorSupport
import Synchronization

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Keeps objects in a data folder. Layout (format 1, described in the README):
///
///     FORMAT                                       "storage-emulator data format 1"
///     tmp/                                         staging and spooled request bodies; emptied at start-up
///     uploads/<id>.json, <id>.part                 a resumable upload session and its bytes
///     multipart/<id>.json, <id>.<n>.part           an XML multipart upload and its parts
///     projects.json                                HMAC keys made through the API
///     buckets/<bucket>/bucket.json                 the bucket record
///     buckets/<bucket>/objects/<hh>/<sha>.json     an object's metadata record
///     buckets/<bucket>/objects/<hh>/<sha>.<generation>.data   its bytes
///
/// `<sha>` is the hex SHA-256 of the object name's UTF-8 bytes and `<hh>` its first two digits,
/// so no name, whatever its slashes or dots, can reach outside the folder, and names that differ
/// only in Unicode normalisation stay distinct.
///
/// Commit protocol: the journal names the new generation; its bytes get their final `.data` name
/// (a body held in memory is written there directly, a file staged in `tmp/` is renamed there);
/// then the metadata record is written to `tmp/` and renamed over `<sha>.json`. That rename is the
/// commit point: before it the old record (and its data file) is live, after it the new one. The
/// old generation's data file is removed afterwards. At start-up any `.data` file that its record
/// does not name, and everything in `tmp/`, is a leftover of an interrupted write and is removed.
/// With `fsync`, files are synced before a record names them and folders after a name changes in
/// them (`DurableFiles`).
public final class FileBackend: StorageBackend {
  public static let formatLine = "storage-emulator data format 1\n"

  public let root: URL
  public let fsync: Bool
  private let counter = Atomic<Int>(0)
  /// Record paths found damaged at start-up.
  let damaged = Locked<Set<String>>([])
  /// Temporary file names: this process, a per-process random salt (two processes with the same
  /// pid in different containers sharing a folder) and a counter.
  private let tempPrefix = "\(getpid())-\(UInt32.random(in: 0...UInt32.max))-"
  let journalState = Locked(JournalState())
  let loadKind = Locked<LoadKind?>(nil)

  /// How the last `load` found the index.
  public enum LoadKind: Sendable, Equatable {
    /// From `index.snapshot`, re-reading the records of this many journaled objects and buckets.
    case snapshot(replayed: Int)
    /// By reading every record.
    case scan
  }

  public var loadedFrom: LoadKind? { loadKind.withLock { $0 } }

  /// The write steps, through `FileCalls` (a test records them).
  let files: DurableFiles

  /// `tmp/` and `buckets/` as paths, worked out once (every write names a file in each).
  let tmpPath: String
  let bucketsPath: String

  public init(root: URL, fsync: Bool = false, calls: FileCalls = .direct) throws(StorageError) {
    self.root = root.standardizedFileURL
    tmpPath = self.root.appendingPathComponent("tmp", isDirectory: true).path
    bucketsPath = self.root.appendingPathComponent("buckets", isDirectory: true).path
    self.fsync = fsync
    files = DurableFiles(calls: calls, fsync: fsync)
    try prepareRoot()
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

  private func prepareRoot() throws(StorageError) {
    do {
      // With `fsync`, each folder created here is made durable in its parent.
      for folder in [root, bucketsDir, tmp] { try files.makeDirectory(folder.path) }
    } catch {
      throw StorageError.io("cannot create the data folder: \(error)")
    }
    let formatFile = root.appendingPathComponent("FORMAT")
    if let existing = try? String(contentsOf: formatFile, encoding: .utf8) {
      guard existing == Self.formatLine else {
        throw StorageError.io(
          "the data folder holds format '\(existing.trimmingWhitespaceAndNewlines())', this version reads '\(Self.formatLine.trimmingWhitespaceAndNewlines())'"
        )
      }
    } else {
      try files.writeAtomically(Array(Self.formatLine.utf8), to: formatFile.path, temp: tempPath("record"))
    }
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

  func recordPath(_ object: ObjectMetadata) -> String {
    let base = objectBase(object)
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
    if let state = loadFromSnapshot(log: log) { return state }
    var state = scanRecords(log: log)
    loadKind.withLock { $0 = .scan }
    // Every record was read: the store saves a snapshot of a new epoch, so the next start-up
    // reads one file instead.
    state.wantsSnapshot = true
    return state
  }

  static func error(_ action: String, _ code: Int32) -> StorageError {
    let reason = String(cString: strerror(code))
    if code == ENOSPC || code == EDQUOT || code == EFBIG {
      return .insufficientStorage("Could not \(action): \(reason). Nothing was changed.")
    }
    return .io("Could not \(action): \(reason) (errno \(code)). Nothing was changed.")
  }
}
