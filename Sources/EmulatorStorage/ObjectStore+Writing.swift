import EmulatorSupport

#if canImport(Glibc)
  import Glibc
#endif

/// New generations (upload, copy, compose) and deletes: each holds the object's stripe across
/// "check preconditions → write to the backend → publish in the index".
extension ObjectStore {
  /// What an upload carries besides its bytes.
  public struct Upload: Sendable {
    public var patch: MetadataPatch
    /// Hashes the client sent, to verify against the bytes.
    public var expectedMD5: [UInt8]?
    public var expectedCRC32C: UInt32?
    /// Adds a fresh download token (Firebase uploads).
    public var createDownloadToken = false
    /// Whether a write to a missing bucket creates it (unless `strictBuckets`); false: 404 as on GCS.
    public var createsBucket = true

    public init(
      patch: MetadataPatch = MetadataPatch(), expectedMD5: [UInt8]? = nil, expectedCRC32C: UInt32? = nil,
      createDownloadToken: Bool = false, createsBucket: Bool = true
    ) {
      self.patch = patch
      self.expectedMD5 = expectedMD5
      self.expectedCRC32C = expectedCRC32C
      self.createDownloadToken = createDownloadToken
      self.createsBucket = createsBucket
    }
  }

  /// Where an upload's bytes are.
  public enum DataSource: Sendable {
    case bytes([UInt8])
    /// A file the store takes ownership of (moved into the data folder when possible).
    case file(String)
  }

  /// Whether writes wait for the disk (`--fsync`): then they must not run on a connection's
  /// thread. Without it a small write only reaches the page cache, which costs less than handing
  /// the request to another thread and back.
  public var syncsWrites: Bool { (backend as? FileBackend)?.fsync ?? false }

  /// Stores a new generation of the object. An absent or empty content type becomes
  /// `application/octet-stream`.
  public func insert(
    bucket: String, name: String, data: [UInt8], upload: Upload = Upload(),
    conditions: Preconditions = Preconditions()
  ) throws(StorageError) -> ObjectMetadata {
    try insert(bucket: bucket, name: name, source: .bytes(data), upload: upload, conditions: conditions)
  }

  /// `digest`: the MD5 and CRC32C of a file source's bytes when the caller already worked them
  /// out (`RunningDigests`), so they are not read again.
  public func insert(
    bucket: String, name: String, source: DataSource, digest known: (md5: [UInt8], crc32c: UInt32)? = nil,
    upload: Upload = Upload(), conditions: Preconditions = Preconditions()
  ) throws(StorageError) -> ObjectMetadata {
    let (staged, digest) = try stage(source, bucket: bucket, name: name, digest: known) {
      Self.checksumFailure(upload, $0)
    }
    return try commitNew(
      bucket: bucket, name: name, staged: staged, md5: digest.md5, crc32c: digest.crc32c, componentCount: nil,
      upload: upload, conditions: conditions
    ) { _ in }
  }

  /// Checks the names, then stages the source's bytes and digests them; `reject` may refuse the
  /// digest (a checksum the client sent). On any failure nothing stays staged, and a file
  /// source is removed.
  func stage(
    _ source: DataSource, bucket: String, name: String, digest known: (md5: [UInt8], crc32c: UInt32)? = nil,
    reject: ((md5: [UInt8], crc32c: UInt32)) -> StorageError? = { _ in nil }
  ) throws(StorageError) -> (StagedData, (md5: [UInt8], crc32c: UInt32)) {
    do {
      try Naming.validateObjectName(name)
      try Naming.validateBucketName(bucket)
    } catch {
      if case .file(let path) = source { unlink(path) }
      throw error
    }
    switch source {
    case .bytes(let bytes):
      let digest = Digester.digest(bytes)
      if let failure = reject(digest) { throw failure }
      return (try backend.stage(bytes), digest)
    case .file(let path):
      let staged = try backend.stage(file: path)
      do throws(StorageError) {
        let digest: (md5: [UInt8], crc32c: UInt32)
        if let known { digest = known } else { digest = try backend.digest(staged) }
        if let failure = reject(digest) { throw failure }
        return (staged, digest)
      } catch {
        backend.discard(staged)
        throw error
      }
    }
  }

  private static func checksumFailure(_ upload: Upload, _ digest: (md5: [UInt8], crc32c: UInt32)) -> StorageError? {
    if let expected = upload.expectedMD5, expected != digest.md5 {
      return StorageError.checksumMismatch(
        "Provided MD5 hash \"\(Data(expected).base64EncodedString())\" doesn't match calculated MD5 hash \"\(Data(digest.md5).base64EncodedString())\"."
      )
    }
    if let expected = upload.expectedCRC32C, expected != digest.crc32c {
      return StorageError.checksumMismatch(
        "Provided CRC32C \"\(Self.base64(expected))\" doesn't match calculated CRC32C \"\(Self.base64(digest.crc32c))\"."
      )
    }
    return nil
  }

  private static func base64(_ crc: UInt32) -> String {
    Data([UInt8(crc >> 24), UInt8((crc >> 16) & 0xFF), UInt8((crc >> 8) & 0xFF), UInt8(crc & 0xFF)])
      .base64EncodedString()
  }

  /// A fresh download token: a random (version 4) UUID in lower case, as Firebase issues them.
  /// Its 16 bytes come from the system generator through `RandomPool` (one system call per 32
  /// tokens); Foundation's `UUID()` reads `/dev/urandom` with three system calls (open, read,
  /// close), on every Firebase upload.
  public static func newDownloadToken(from pool: RandomPool = .shared) -> String {
    var words: (UInt64, UInt64) = (0, 0)
    withUnsafeMutableBytes(of: &words) { pool.fill($0) }
    return withUnsafeMutableBytes(of: &words) { bytes in
      bytes[6] = bytes[6] & 0x0F | 0x40  // version 4
      bytes[8] = bytes[8] & 0x3F | 0x80  // RFC 4122 variant
      var text: [UInt8] = []
      text.reserveCapacity(36)
      for (index, byte) in bytes.enumerated() {
        if index == 4 || index == 6 || index == 8 || index == 10 { text.append(UInt8(ascii: "-")) }
        let (high, low) = Hex.digits(byte)
        text.append(high)
        text.append(low)
      }
      return String(decoding: text, as: UTF8.self)
    }
  }

  /// Publishes staged bytes as a new generation: the write preconditions are checked under the
  /// object's lock, atomically with the commit. `prepare` fills in metadata before the patch.
  /// Commits a new generation whose bytes are staged: the replaced one is kept as noncurrent in a
  /// versioned bucket (and dropped again if the commit fails), then the index is updated and the
  /// change announced. The caller holds the object's stripe and discards `staged` on failure.
  func commitGeneration(
    _ object: ObjectMetadata, staged: StagedData?, previous: ObjectMetadata?
  ) throws(StorageError) -> ObjectMetadata {
    let archived = try archiveIfVersioned(previous)
    let committed: ObjectMetadata
    do {
      committed = try backend.commit(object, data: staged, previous: previous, carrying: nil)
    } catch {
      if let archived { try? backend.removeNoncurrent(archived.object) }
      throw error
    }
    try publish(committed, archived: archived)
    changes.emit(.finalized, committed)
    return committed
  }

  private func commitNew(
    bucket: String, name: String, staged: StagedData, md5: [UInt8]?, crc32c: UInt32, componentCount: Int?,
    upload: Upload, conditions: Preconditions, prepare: (inout ObjectMetadata) -> Void
  ) throws(StorageError) -> ObjectMetadata {
    let phase = try beginWrite()
    defer { endWrite(phase) }
    do throws(StorageError) {
      // The bucket is made (lenient buckets) only when the object's lookup finds none: the usual
      // upload takes the index lock twice, not three times.
      return try withLiveObjectAndDefaults(bucket, name, missingBucket: { () throws(StorageError) in
        try ensureBucket(bucket, create: upload.createsBucket)
      }) { previous, defaults throws(StorageError) -> ObjectMetadata in
        try conditions.checkWrite(previous, bucket: bucket, name: name)
        var object = ObjectMetadata(
          bucket: bucket, name: name, generation: nextGeneration(), size: staged.size, md5: md5, crc32c: crc32c,
          now: Timestamp.nowMilliseconds())
        object.componentCount = componentCount
        // A new generation starts with the bucket's default object ACL and storage class (only
        // these are copied out under the index lock, not the whole bucket).
        (object.acl, object.storageClass) = defaults
        prepare(&object)
        upload.patch.apply(to: &object)
        if object.contentType?.isEmpty ?? true { object.contentType = "application/octet-stream" }
        if upload.createDownloadToken && object.downloadTokens.isEmpty {
          object.downloadTokens = [Self.newDownloadToken()]
        }
        try object.checkCustomMetadataSize()
        return try commitGeneration(object, staged: staged, previous: previous)
      }
    } catch {
      backend.discard(staged)
      throw error
    }
  }

  /// Copies (or rewrites) an object. The destination starts with the source's metadata, then
  /// `upload.patch` applies; `sourceConditions` failing is `conditionNotMet`.
  public func copy(
    from sourceBucket: String, _ sourceName: String, sourceConditions: Preconditions = Preconditions(),
    to bucket: String, _ name: String, upload: Upload = Upload(), conditions: Preconditions = Preconditions()
  ) throws(StorageError) -> ObjectMetadata {
    try Naming.validateObjectName(name)
    try Naming.validateBucketName(bucket)
    // `sourceGeneration` may name a noncurrent generation (how an old version is restored).
    let (sources, staged) = try stageSources {  () throws(StorageError) -> [ObjectMetadata] in
      guard let source = try addressed(sourceBucket, sourceName, generation: sourceConditions.generation) else {
        throw StorageError.objectNotFound(bucket: sourceBucket, name: sourceName)
      }
      try sourceConditions.checkWrite(source, bucket: sourceBucket, name: sourceName)
      return [source]
    }
    let source = sources[0]
    return try commitNew(
      bucket: bucket, name: name, staged: staged, md5: source.md5, crc32c: source.crc32c,
      componentCount: source.componentCount, upload: upload, conditions: conditions
    ) { object in
      object.contentType = source.contentType
      object.cacheControl = source.cacheControl
      object.contentDisposition = source.contentDisposition
      object.contentEncoding = source.contentEncoding
      object.contentLanguage = source.contentLanguage
      object.customTime = source.customTime
      object.custom = source.custom
      object.downloadTokens = source.downloadTokens
    }
  }

  /// One source of a compose.
  public struct ComposeSource: Sendable {
    public var name: String
    public var generation: Int64?
    public var ifGenerationMatch: Int64?

    public init(name: String, generation: Int64? = nil, ifGenerationMatch: Int64? = nil) {
      self.name = name
      self.generation = generation
      self.ifGenerationMatch = ifGenerationMatch
    }
  }

  /// Concatenates up to 32 objects of one bucket into `name`. Like GCS, the result has a
  /// `crc32c` but no `md5Hash`, and a `componentCount`.
  public func compose(
    bucket: String, name: String, sources: [ComposeSource], upload: Upload = Upload(),
    conditions: Preconditions = Preconditions()
  ) throws(StorageError) -> ObjectMetadata {
    try Naming.validateObjectName(name)
    guard (1...32).contains(sources.count) else {
      throw StorageError.invalid("A compose request needs 1 to 32 source objects, got \(sources.count).")
    }
    let (objects, staged) = try stageSources { () throws(StorageError) -> [ObjectMetadata] in
      var objects: [ObjectMetadata] = []
      for source in sources {
        guard let object = try addressed(bucket, source.name, generation: source.generation) else {
          throw StorageError.objectNotFound(bucket: bucket, name: source.name)
        }
        if let expected = source.ifGenerationMatch, expected != object.generation {
          throw StorageError.conditionNotMet(
            "Source object '\(source.name)' has generation \(object.generation), not \(expected).")
        }
        objects.append(object)
      }
      let components = objects.reduce(0) { $0 + ($1.componentCount ?? 1) }
      guard components <= 1024 else {
        throw StorageError.invalid(
          "A composite object may have at most 1024 components; this one would have \(components).")
      }
      return objects
    }
    let components = objects.reduce(0) { $0 + ($1.componentCount ?? 1) }
    let digest: (md5: [UInt8], crc32c: UInt32)
    do {
      digest = try backend.digest(staged)
    } catch {
      backend.discard(staged)
      throw error
    }
    return try commitNew(
      bucket: bucket, name: name, staged: staged, md5: nil, crc32c: digest.crc32c, componentCount: components,
      upload: upload, conditions: conditions
    ) { _ in }
  }

  /// Looks the sources up (`resolve`) and stages their concatenation. The sources are read
  /// without their locks: compaction may move a small object's bytes meanwhile (`FileBackend`),
  /// which reads as missing, so a missing source is looked up again (twice at most).
  private func stageSources(
    _ resolve: () throws(StorageError) -> [ObjectMetadata]
  ) throws(StorageError) -> ([ObjectMetadata], StagedData) {
    var attempt = 0
    while true {
      let objects = try resolve()
      do {
        return (objects, try backend.stageConcatenation(of: objects))
      } catch .objectNotFound where attempt < 2 {
        attempt += 1
      }
    }
  }

  public func delete(bucket: String, name: String, conditions: Preconditions = Preconditions()) throws(StorageError) {
    let phase = try beginWrite()
    defer { endWrite(phase) }
    try withLiveObject(bucket, name) { live throws(StorageError) in
      if let generation = conditions.generation, live?.generation != generation {
        return try deleteNoncurrent(bucket: bucket, name: name, generation: generation, conditions: conditions)
      }
      guard let current = live else {
        if backend.isDamaged(bucket: bucket, name: name) {
          try backend.removeDamaged(bucket: bucket, name: name)
          return
        }
        throw StorageError.objectNotFound(bucket: bucket, name: name)
      }
      try conditions.checkWrite(current, bucket: bucket, name: name)
      // Without `generation=`, a versioned bucket keeps the live generation as noncurrent; with it,
      // that generation is deleted for good (as GCS does).
      let archived = conditions.generation == nil ? try archiveIfVersioned(current) : nil
      do throws(StorageError) {
        try backend.remove(current)
      } catch {
        if let archived { try? backend.removeNoncurrent(archived.object) }
        throw error
      }
      index.withLock { buckets in
        buckets[bucket]?.remove(name)
        if let archived { buckets[bucket]?.noncurrent[ObjectKey(name), default: []].append(archived) }
      }
      changes.emit(.deleted, current)
    }
  }
}
