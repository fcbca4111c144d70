import Crypto
import CFiles
import Foundation
import Synchronization

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Keeps objects in a data folder. Layout (format 1, described in the README):
///
///     FORMAT                                       "storage-emulator data format 1"
///     tmp/                                         staging; emptied at start-up
///     buckets/<bucket>/bucket.json                 the bucket record
///     buckets/<bucket>/objects/<hh>/<sha>.json     an object's metadata record
///     buckets/<bucket>/objects/<hh>/<sha>.<generation>.data   its bytes
///
/// `<sha>` is the hex SHA-256 of the object name's UTF-8 bytes and `<hh>` its first two digits,
/// so no name, whatever its slashes or dots, can reach outside the folder, and names that differ
/// only in Unicode normalisation stay distinct.
///
/// Commit protocol: bytes are written to `tmp/` and renamed to their final `.data` name; then the
/// metadata record is written to `tmp/` and renamed over `<sha>.json`. That rename is the commit
/// point: before it the old record (and its data file) is live, after it the new one. The old
/// generation's data file is removed afterwards. At start-up any `.data` file that its record does
/// not name, and everything in `tmp/`, is a leftover of an interrupted write and is removed.
/// With `fsync`, files are synced before their rename and folders after it (`DurableFiles`).
public final class FileBackend: StorageBackend {
  public static let formatLine = "storage-emulator data format 1\n"

  public let root: URL
  public let fsync: Bool
  private let counter = Atomic<Int>(0)
  /// Record paths found damaged at start-up.
  private let damaged = Locked<Set<String>>([])
  /// Temporary file names: this process, a per-process random salt (two processes with the same
  /// pid in different containers sharing a folder) and a counter.
  private let tempPrefix = "\(getpid())-\(UInt32.random(in: 0...UInt32.max))-"
  private let journalState = Locked(JournalState())
  private let loadKind = Locked<LoadKind?>(nil)

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

  public init(root: URL, fsync: Bool = false, calls: FileCalls = .direct) throws(StorageError) {
    self.root = root.standardizedFileURL
    self.fsync = fsync
    files = DurableFiles(calls: calls, fsync: fsync)
    try prepareRoot()
  }

  private var tmp: URL { root.appendingPathComponent("tmp", isDirectory: true) }
  private var bucketsDir: URL { root.appendingPathComponent("buckets", isDirectory: true) }

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
          "the data folder holds format '\(existing.trimmingCharacters(in: .whitespacesAndNewlines))', this version reads '\(Self.formatLine.trimmingCharacters(in: .whitespacesAndNewlines))'"
        )
      }
    } else {
      try files.writeAtomically(Array(Self.formatLine.utf8), to: formatFile.path, temp: tempPath("record"))
    }
  }

  // MARK: Paths

  func bucketDir(_ bucket: String) -> String { bucketsDir.path + "/" + bucket }

  func objectBase(_ object: ObjectMetadata) -> (dir: String, stem: String) {
    objectBase(bucket: object.bucket, name: object.name)
  }

  func objectBase(bucket: String, name: String) -> (dir: String, stem: String) {
    let digest = SHA256.hash(data: Array(name.utf8))
    let digits = Array("0123456789abcdef".utf8)
    var hex: [UInt8] = []
    hex.reserveCapacity(64)
    for byte in digest {
      hex.append(digits[Int(byte >> 4)])
      hex.append(digits[Int(byte & 15)])
    }
    let stem = String(decoding: hex, as: UTF8.self)
    return (bucketDir(bucket) + "/objects/" + stem.prefix(2), stem)
  }

  private func recordPath(_ object: ObjectMetadata) -> String {
    let base = objectBase(object)
    return base.dir + "/" + base.stem + ".json"
  }

  func dataPath(_ object: ObjectMetadata) -> String {
    let base = objectBase(object)
    return base.dir + "/" + base.stem + "." + String(object.generation) + ".data"
  }

  func tempPath(_ suffix: String) -> String {
    let n = counter.wrappingAdd(1, ordering: .relaxed).oldValue
    return tmp.path + "/" + tempPrefix + String(n) + "." + suffix
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

  /// The snapshot of the journal's epoch (its objects decoded on another thread, see
  /// `ObjectBatches`), with every object and bucket the journal names read again from its record;
  /// nil (and a log line) when they cannot be used together.
  private func loadFromSnapshot(log: @Sendable (String) -> Void) -> LoadedState? {
    guard FileManager.default.fileExists(atPath: snapshotPath) else { return nil }
    let opened: IndexSnapshot.Opened
    do {
      opened = try IndexSnapshot.open(snapshotPath)
    } catch {
      log("index: index.snapshot is not usable (\(error)); reading every record instead")
      return nil
    }
    guard let journal = IndexJournal.read(journalPath), journal.epoch == opened.epoch else {
      log("index: index.journal does not match index.snapshot; reading every record instead")
      return nil
    }
    do {
      try openJournal()
    } catch {
      log("index: \(error)")
      return nil
    }
    var state = LoadedState()
    // The snapshot holds names and creation times; settings live in each bucket's record.
    state.buckets = opened.buckets.map { readBucketRecord($0.info.name) ?? $0.info }
    for bucket in opened.buckets { state.expectedCounts[bucket.info.name] = bucket.count }
    damaged.withLock { $0 = Set(opened.damaged) }
    var removedBuckets = Set<String>()
    for bucket in journal.buckets {
      let known = state.buckets.contains { $0.name == bucket }
      let info = readBucketRecord(bucket)
      if info == nil && known {
        state.buckets.removeAll { $0.name == bucket }
        removedBuckets.insert(bucket)
      } else if let info, !known {
        state.buckets.append(info)
      }
    }
    let live = Set(state.buckets.map(\.name))
    for bucket in state.buckets { state.noncurrent += loadNoncurrent(bucket.name, log: log) }
    for (key, files) in journal.objects where live.contains(key.bucket) {
      if let object = recoverObject(bucket: key.bucket, name: key.name, files: files, log: log) {
        state.objects.append(object)
      }
    }
    let batches = ObjectBatches()
    state.batches = batches
    let journaled = journal.objects
    let removed = removedBuckets
    let path = snapshotPath
    let thread = Thread {
      do {
        try IndexSnapshot.decodeObjects(
          opened,
          skip: { bucket, name in
            removed.contains(bucket) || (!journaled.isEmpty && journaled[.init(bucket: bucket, object: name)] != nil)
          }, deliver: batches.push)
        batches.finish()
      } catch {
        // Checksummed yet undecodable: a bug, not damage. Remove it so the retry reads every record.
        unlink(path)
        batches.finish(failure: "index.snapshot could not be decoded (\(error))")
      }
    }
    thread.stackSize = 1 << 20
    thread.start()
    loadKind.withLock { $0 = .snapshot(replayed: journal.objects.count + journal.buckets.count) }
    // A long journal (many names to re-read, or many lines to parse: it grows with every write
    // until a clean stop) is folded into a new snapshot once the store is built.
    state.wantsSnapshot = journal.objects.count + journal.buckets.count > 10_000 || journal.lineCount > 200_000
    return state
  }

  /// Reads every record (the start-up of a folder without a usable snapshot), cleaning up what
  /// interrupted writes left.
  private func scanRecords(log: @Sendable (String) -> Void) -> LoadedState {
    let fm = FileManager.default
    var state = LoadedState()
    damaged.withLock { $0 = [] }
    let buckets = (try? fm.contentsOfDirectory(atPath: bucketsDir.path)) ?? []
    for bucket in buckets.sorted() {
      guard let info = readBucketRecord(bucket) else {
        log("recovery: skipped buckets/\(bucket): its bucket.json is missing or damaged")
        continue
      }
      state.buckets.append(info)
      state.noncurrent += loadNoncurrent(bucket, log: log)
      let objectsDir = bucketDir(bucket) + "/objects"
      for shard in ((try? fm.contentsOfDirectory(atPath: objectsDir)) ?? []).sorted() {
        let shardDir = objectsDir + "/" + shard
        let files = (try? fm.contentsOfDirectory(atPath: shardDir)) ?? []
        var live = Set<String>()
        for file in files where file.hasSuffix(".json") {
          let path = shardDir + "/" + file
          do {
            let object = try readRecord(path, bucket: bucket)
            live.insert((dataPath(object) as NSString).lastPathComponent)
            state.objects.append(object)
          } catch {
            log("recovery: skipped the damaged record buckets/\(bucket)/objects/\(shard)/\(file): \(error)")
            live.insert(String(file.dropLast(5)))  // keep its data for inspection
            damaged.withLock { _ = $0.insert(path) }
          }
        }
        for file in files where file.hasSuffix(".data") && !live.contains(file) {
          let stem = String(file.prefix { $0 != "." })
          if live.contains(stem) { continue }
          try? fm.removeItem(atPath: shardDir + "/" + file)
          log("recovery: removed buckets/\(bucket)/objects/\(shard)/\(file), data of an unfinished or replaced write")
        }
      }
    }
    return state
  }

  private func readBucketRecord(_ bucket: String) -> BucketInfo? {
    guard let bytes = FileManager.default.contents(atPath: bucketDir(bucket) + "/bucket.json").map(Array.init),
      let document = try? JSONValue.parse(bytes), let name = document["name"]?.stringValue,
      let created = document["timeCreated"]?.stringValue.flatMap({ Int64($0) }), name == bucket
    else { return nil }
    // Records written before buckets had settings hold only the name and creation time.
    var info = BucketInfo(name: name, timeCreated: created, settings: document["settings"])
    if let updated = document["updated"]?.stringValue.flatMap({ Int64($0) }) { info.updated = updated }
    if let metageneration = document["metageneration"]?.stringValue.flatMap({ Int64($0) }) {
      info.metageneration = metageneration
    }
    return info
  }

  private func readRecord(_ path: String, bucket: String) throws(StorageError) -> ObjectMetadata {
    guard let bytes = FileManager.default.contents(atPath: path) else { throw StorageError.io("unreadable") }
    let object = try ObjectMetadata(record: Array(bytes))
    guard object.bucket == bucket, recordPath(object) == path else {
      throw StorageError.io("the record names another object")
    }
    guard FileManager.default.fileExists(atPath: dataPath(object)) else {
      throw StorageError.io("its data file is missing")
    }
    return object
  }

  /// One object's state from the folder, as a full scan would find it (damaged records noted,
  /// data files of unfinished writes removed).
  private func recoverObject(
    bucket: String, name: String, files: IndexJournal.DataFiles, log: @Sendable (String) -> Void
  ) -> ObjectMetadata? {
    let base = objectBase(bucket: bucket, name: name)
    let path = base.dir + "/" + base.stem + ".json"
    var keep: String?
    var object: ObjectMetadata?
    damaged.withLock { _ = $0.remove(path) }
    if FileManager.default.fileExists(atPath: path) {
      do {
        let found = try readRecord(path, bucket: bucket)
        keep = (dataPath(found) as NSString).lastPathComponent
        object = found
      } catch {
        log("recovery: skipped the damaged record \(path.dropFirst(root.path.count + 1)): \(error)")
        damaged.withLock { _ = $0.insert(path) }
        return nil
      }
    }
    // The data files the journaled changes created or dropped, or (`*`) every one of this name.
    let candidates =
      files.all
      ? ((try? FileManager.default.contentsOfDirectory(atPath: base.dir)) ?? []).filter {
        $0.hasPrefix(base.stem + ".") && $0.hasSuffix(".data")
      }
      : files.generations.map { base.stem + ".\($0).data" }
    for file in candidates where file != keep && FileManager.default.fileExists(atPath: base.dir + "/" + file) {
      try? FileManager.default.removeItem(atPath: base.dir + "/" + file)
      log(
        "recovery: removed \(base.dir.dropFirst(root.path.count + 1))/\(file), data of an unfinished or replaced write")
    }
    return object
  }

  // MARK: Snapshot and journal

  private var snapshotPath: String { root.path + "/index.snapshot" }
  private var journalPath: String { root.path + "/index.journal" }

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

  private func openJournal() throws(StorageError) {
    guard access(journalPath, W_OK) == 0 else { throw Self.error("open the index journal", errno) }
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
  private func journal(_ line: [UInt8], once: Bool = false) throws(StorageError) {
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

  public func saveBucket(_ bucket: BucketInfo) throws(StorageError) {
    try journal(IndexJournal.bucketLine(bucket.name))
    let dir = bucketDir(bucket.name)
    try files.makeDirectory(dir)
    try files.makeDirectory(dir + "/objects")
    var json = JSONWriter()
    json.beginObject()
    json.string("name", bucket.name)
    json.string("timeCreated", String(bucket.timeCreated))
    json.string("updated", String(bucket.updated))
    json.string("metageneration", String(bucket.metageneration))
    json.key("settings")
    bucket.settings.write(into: &json)
    json.endObject()
    try files.writeAtomically(json.bytes, to: dir + "/bucket.json", temp: tempPath("record"))
  }

  public func removeBucket(_ name: String) throws(StorageError) {
    try journal(IndexJournal.bucketLine(name))
    let dir = bucketDir(name)
    // Remove the record first: a bucket folder without one is skipped at start-up.
    let code = files.calls.unlink(dir + "/bucket.json")
    if code != 0 && code != ENOENT { throw Self.error("remove the bucket", code) }
    do {
      try FileManager.default.removeItem(atPath: dir)
    } catch {
      throw StorageError.io("cannot remove the bucket folder: \(error.localizedDescription)")
    }
    files.syncDirectory(bucketsDir.path)
  }

  public func stage(_ bytes: [UInt8]) throws(StorageError) -> StagedData {
    let path = tempPath("upload")
    try files.writeFile(bytes, to: path)
    return StagedData(id: path, size: Int64(bytes.count))
  }

  /// The file (a spooled body, or a resumable session's bytes) is moved into `tmp/` and, with
  /// `fsync`, synced there: whoever wrote it did not sync it.
  public func stage(file path: String) throws(StorageError) -> StagedData {
    let target = tempPath("upload")
    let code = files.calls.rename(path, target)
    if code == 0 {
      do {
        try files.syncFile(target)
      } catch {
        files.calls.unlink(target)
        throw error
      }
    } else {
      // Another file system: copy (synced with `fsync`), then drop the original.
      guard code == EXDEV else { throw Self.error("stage the upload", code) }
      let source = Glibc.open(path, O_RDONLY | O_CLOEXEC)
      guard source >= 0 else { throw Self.error("read the upload", errno) }
      defer {
        close(source)
        unlink(path)
      }
      try files.copy(from: source, to: target)
    }
    var info = stat()
    guard stat(target, &info) == 0 else { throw Self.error("stage the upload", errno) }
    return StagedData(id: target, size: Int64(info.st_size))
  }

  public func stageConcatenation(of objects: [ObjectMetadata]) throws(StorageError) -> StagedData {
    let target = tempPath("compose")
    if objects.count == 1 {
      // Data files are immutable once written (a new generation is a new file): share it.
      if files.calls.link(dataPath(objects[0]), target) == 0 {
        return StagedData(id: target, size: objects[0].size)
      }
    }
    let out = files.calls.create(target)
    guard out >= 0 else { throw Self.error("create a file", errno) }
    close(out)
    var total: Int64 = 0
    for object in objects {
      let source = openData(object)
      guard source >= 0 else {
        unlink(target)
        throw StorageError.objectNotFound(bucket: object.bucket, name: object.name)
      }
      defer { close(source) }
      try files.copy(from: source, to: target, append: true, sync: false)
      total += object.size
    }
    do {
      try files.syncFile(target)
    } catch {
      files.calls.unlink(target)
      throw error
    }
    return StagedData(id: target, size: total)
  }

  public func digest(_ staged: StagedData) throws(StorageError) -> (md5: [UInt8], crc32c: UInt32) {
    let fd = Glibc.open(staged.id, O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else { throw Self.error("read the staged data", errno) }
    defer { close(fd) }
    var digester = Digester()
    var buffer = [UInt8](repeating: 0, count: 1 << 20)
    while true {
      let count = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
      if count < 0 && errno == EINTR { continue }
      guard count >= 0 else { throw Self.error("read the staged data", errno) }
      if count == 0 { break }
      buffer.withUnsafeBytes { digester.update(UnsafeRawBufferPointer(rebasing: $0[0..<count])) }
    }
    return digester.finalize()
  }

  public func isDamaged(bucket: String, name: String) -> Bool {
    let path = recordPath(
      ObjectMetadata(bucket: bucket, name: name, generation: 0, size: 0, md5: nil, crc32c: 0, now: 0))
    return damaged.withLock { $0.contains(path) }
  }

  public func removeDamaged(bucket: String, name: String) throws(StorageError) {
    let probe = ObjectMetadata(bucket: bucket, name: name, generation: 0, size: 0, md5: nil, crc32c: 0, now: 0)
    let path = recordPath(probe)
    guard damaged.withLock({ $0.contains(path) }) else { return }
    try journal(IndexJournal.objectLine(bucket: bucket, name: name, generations: nil))
    let base = objectBase(probe)
    guard unlink(path) == 0 || errno == ENOENT else { throw Self.error("delete the damaged object", errno) }
    for file in (try? FileManager.default.contentsOfDirectory(atPath: base.dir)) ?? []
    where file.hasPrefix(base.stem + ".") && file.hasSuffix(".data") {
      unlink(base.dir + "/" + file)
    }
    damaged.withLock { _ = $0.remove(path) }
  }

  public func open(_ object: ObjectMetadata) throws(StorageError) -> ObjectData {
    let fd = openData(object)
    guard fd >= 0 else {
      if errno == ENOENT { throw StorageError.objectNotFound(bucket: object.bucket, name: object.name) }
      throw Self.error("read the object data", errno)
    }
    return .file(OpenFile(fd: fd, size: Int(object.size)))
  }

  public func discard(_ staged: StagedData) {
    files.calls.unlink(staged.id)
  }

  public func commit(_ object: ObjectMetadata, data: StagedData?, previous: ObjectMetadata?) throws(StorageError) {
    let base = objectBase(object)
    let record = base.dir + "/" + base.stem + ".json"
    defer { damaged.withLock { if !$0.isEmpty { _ = $0.remove(record) } } }
    guard let data else {
      // A metadata change: the record exists (unless removed by hand: then it is written anew).
      try journal(IndexJournal.objectLine(bucket: object.bucket, name: object.name, generations: []), once: true)
      try files.writeAtomically(object.recordJSON(), to: record, temp: tempPath("record"), replacing: true)
      return
    }
    var generations = [object.generation]
    if let previous, previous.generation != object.generation { generations.append(previous.generation) }
    try journal(IndexJournal.objectLine(bucket: object.bucket, name: object.name, generations: generations))
    try files.makeDirectory(base.dir)
    let target = dataPath(object)
    let code = files.calls.rename(data.id, target)
    guard code == 0 else { throw Self.error("store the object data", code) }
    do {
      // The data file's name is durable before the record that points at it.
      files.syncDirectory(base.dir)
      try files.writeAtomically(object.recordJSON(), to: record, temp: tempPath("record"))
    } catch {
      files.calls.unlink(target)
      throw error
    }
    if let previous, previous.generation != object.generation { files.calls.unlink(dataPath(previous)) }
  }

  public func remove(_ object: ObjectMetadata) throws(StorageError) {
    try journal(IndexJournal.objectLine(bucket: object.bucket, name: object.name, generations: [object.generation]))
    let record = recordPath(object)
    let code = files.calls.unlink(record)
    guard code == 0 || code == ENOENT else { throw Self.error("delete the object", code) }
    files.syncDirectory((record as NSString).deletingLastPathComponent)
    files.calls.unlink(dataPath(object))
  }

  public func read(_ object: ObjectMetadata) throws(StorageError) -> [UInt8] {
    let fd = openData(object)
    guard fd >= 0 else {
      if errno == ENOENT { throw StorageError.objectNotFound(bucket: object.bucket, name: object.name) }
      throw Self.error("read the object data", errno)
    }
    defer { close(fd) }
    var bytes = [UInt8](repeating: 0, count: Int(object.size))
    var offset = 0
    while offset < bytes.count {
      let count = bytes.withUnsafeMutableBytes { pread(fd, $0.baseAddress! + offset, $0.count - offset, off_t(offset)) }
      if count < 0 && errno == EINTR { continue }
      guard count > 0 else { throw StorageError.io("the object's data file is shorter than its recorded size") }
      offset += count
    }
    return bytes
  }

  static func error(_ action: String, _ code: Int32) -> StorageError {
    let reason = String(cString: strerror(code))
    if code == ENOSPC || code == EDQUOT || code == EFBIG {
      return .insufficientStorage("Could not \(action): \(reason). Nothing was changed.")
    }
    return .io("Could not \(action): \(reason) (errno \(code)). Nothing was changed.")
  }
}
