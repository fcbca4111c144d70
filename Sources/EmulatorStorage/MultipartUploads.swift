import EmulatorSupport

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// XML API multipart uploads: an upload has an id, the metadata of its initiate request, and
/// numbered parts, kept in an `UploadSpace` the backend provides until the upload is completed
/// (the parts are handed to the store as one) or aborted. With the file backend they survive a
/// restart, as resumable sessions do; in memory they touch no disk.
///
/// Crash discipline: the record is written once, at initiate, in one step; a part is written
/// under a temporary name and renamed into place (synced before the rename with `fsync`), so a
/// part found at start-up is whole; a part without its record, and temporary entries, are
/// removed. Bounded as resumable sessions: an upload untouched (initiated, or sent a part) for
/// `ttlSeconds` expires (periodic sweep and start-up), at most `maxUploads` are in progress.
public final class MultipartUploads: Sendable {
  public struct Upload: Sendable {
    public var id: String
    public var bucket: String
    public var name: String
    /// The initiate request's metadata (content type, custom metadata…).
    public var patch: MetadataPatch
    public var initiated: Int64
    /// Part number → its size and MD5.
    public var parts: [Int: PartInfo] = [:]
    /// Initiated or last sent a part (milliseconds since the epoch).
    var touched: Int64

    init(id: String, bucket: String, name: String, patch: MetadataPatch, initiated: Int64) {
      self.id = id
      self.bucket = bucket
      self.name = name
      self.patch = patch
      self.initiated = initiated
      touched = initiated
    }
  }

  public struct PartInfo: Sendable, Equatable {
    public var size: Int64
    public var md5: [UInt8]
    public var modified: Int64
  }

  public static let maxParts = 10_000
  public static let defaultMaxUploads = 1000
  public let space: any UploadSpace
  /// Uploads in progress at once; more: refused.
  public let maxUploads: Int
  /// Bytes of all of one upload's parts together.
  public let maxBytes: Int64
  /// An upload untouched this long expires.
  public let ttlSeconds: Int
  let uploads = Locked<[String: Upload]>([:])
  /// Serialises the writes of one part number of one upload (striped).
  private let locks: [PosixLock] = (0..<64).map { _ in PosixLock() }
  let log: @Sendable (String) -> Void
  let sweeper = PeriodicSweep()

  /// Uploads in a folder of their own (tests).
  public convenience init(
    directory: URL, maxUploads: Int = MultipartUploads.defaultMaxUploads, maxBytes: Int64, ttlSeconds: Int = 86_400
  ) throws(StorageError) {
    self.init(
      space: try FileUploadSpace(directory: directory), maxUploads: maxUploads, maxBytes: maxBytes,
      ttlSeconds: ttlSeconds)
  }

  /// Loads the uploads of `space` (see `load`).
  public init(
    space: any UploadSpace, maxUploads: Int = MultipartUploads.defaultMaxUploads, maxBytes: Int64,
    ttlSeconds: Int = 86_400, now: Int64 = Timestamp.nowMilliseconds(),
    log: @escaping @Sendable (String) -> Void = { _ in }
  ) {
    self.space = space
    self.maxUploads = maxUploads
    self.maxBytes = maxBytes
    self.ttlSeconds = ttlSeconds
    self.log = log
    load(now: now)
  }

  deinit { stopSweeping() }

  /// Uploads in progress.
  public var count: Int { uploads.withLock { $0.count } }

  public func initiate(bucket: String, name: String, patch: MetadataPatch, now: Int64 = Timestamp.nowMilliseconds())
    throws(StorageError) -> Upload
  {
    try Naming.validateObjectName(name)
    let id = RandomPool.shared.hexID()
    let upload = Upload(id: id, bucket: bucket, name: name, patch: patch, initiated: now)
    if !reserve(upload) {
      sweep(now: now)
      // 429 with Retry-After, as for resumable sessions: the client's own unfinished uploads fill it.
      guard reserve(upload) else { throw StorageError.tooManyUploadSessions(limit: maxUploads, retryAfterSeconds: 60) }
    }
    do throws(StorageError) {
      try space.replace(Self.recordName(id), with: upload.record, temp: Self.recordTemp(id))
    } catch {
      _ = uploads.withLock { $0.removeValue(forKey: id) }
      throw error
    }
    return upload
  }

  private func reserve(_ upload: Upload) -> Bool {
    uploads.withLock { all in
      guard all.count < maxUploads else { return false }
      all[upload.id] = upload
      return true
    }
  }

  public func upload(_ id: String, bucket: String, name: String) throws(StorageError) -> Upload {
    guard let upload = uploads.withLock({ $0[id] }), upload.bucket == bucket, upload.name == name else {
      throw StorageError.uploadNotFound(id)
    }
    return upload
  }

  /// Stores one part (replacing an earlier part of that number). `file`: a spooled body this
  /// takes over; else `bytes`. The parts together stay within `maxBytes`, checked before the
  /// part is written.
  public func putPart(
    _ id: String, bucket: String, name: String, number: Int, bytes: [UInt8], file: String?
  ) throws(StorageError) -> PartInfo {
    var taken = false
    defer { if let file, !taken { unlink(file) } }
    guard (1...Self.maxParts).contains(number) else {
      throw StorageError.invalid("partNumber must be 1 to \(Self.maxParts), got \(number).")
    }
    let upload = try upload(id, bucket: bucket, name: name)
    let size = file.map { FileUploadSpace.size(of: $0) } ?? Int64(bytes.count)
    let total = upload.parts.filter { $0.key != number }.values.reduce(size) { $0 + $1.size }
    guard total <= maxBytes else {
      throw StorageError.tooLarge("The parts of upload \(id) would exceed \(maxBytes) bytes.")
    }
    let lock = locks[Int(UInt(bitPattern: (id.hashValue &* 31) &+ number) % UInt(locks.count))]
    lock.lock()
    defer { lock.unlock() }
    let part = Self.partName(id, number)
    if let file {
      taken = true
      try space.adopt(file: file, as: part, temp: Self.partTemp(id, number))
    } else {
      try space.replace(part, with: bytes, temp: Self.partTemp(id, number))
    }
    let digest = try space.digest(part)
    let now = Timestamp.nowMilliseconds()
    let info = PartInfo(size: digest.size, md5: digest.md5, modified: now)
    let stillThere = uploads.withLock { all -> Bool in
      guard all[id] != nil else { return false }
      all[id]?.parts[number] = info
      all[id]?.touched = now
      return true
    }
    guard stillThere else {
      space.remove(part)  // aborted meanwhile
      throw StorageError.uploadNotFound(id)
    }
    return info
  }

  /// Hands the listed parts (ascending numbers, each present with the given MD5 when one is
  /// given) to `commit` as one piece of data; when it succeeds the upload is forgotten and its
  /// parts removed. When it fails (a precondition, a full disk) the upload stays as it was.
  public func complete(
    _ id: String, bucket: String, name: String, parts: [(number: Int, md5: [UInt8]?)],
    commit: (Upload, ObjectStore.DataSource) throws(StorageError) -> ObjectMetadata
  ) throws(StorageError) -> ObjectMetadata {
    let upload = try upload(id, bucket: bucket, name: name)
    guard !parts.isEmpty else { throw StorageError.invalid("A CompleteMultipartUpload needs at least one part.") }
    var previous = 0
    for part in parts {
      guard part.number > previous else {
        throw StorageError.invalid("InvalidPartOrder: the parts must be listed in ascending order of their numbers.")
      }
      previous = part.number
      guard let info = upload.parts[part.number] else {
        throw StorageError.invalid("InvalidPart: part \(part.number) was not uploaded.")
      }
      if let md5 = part.md5, md5 != info.md5 {
        throw StorageError.invalid("InvalidPart: the ETag given for part \(part.number) is not the part's.")
      }
    }
    let object = try space.commitHandOff(parts.map { Self.partName(id, $0.number) }, as: Self.handOffName(id)) {
      data throws(StorageError) in try commit(upload, data)
    }
    abort(id)
    return object
  }

  /// Forgets an upload and removes its parts.
  @discardableResult
  public func abort(_ id: String) -> Bool {
    guard let upload = uploads.withLock({ $0.removeValue(forKey: id) }) else { return false }
    removeEntries(id, parts: upload.parts.keys)
    return true
  }

  /// Removes an upload's parts numbered `parts`, a hand-off left behind, and its record (last:
  /// a crash in between leaves an upload missing parts, which start-up reads as it is).
  func removeEntries(_ id: String, parts: some Sequence<Int>) {
    space.discard(parts.sorted().map { Self.partName(id, $0) } + [Self.handOffName(id), Self.recordName(id)])
  }
}
