import Crypto
import Foundation
import Synchronization

#if canImport(Glibc)
  import Glibc
#endif

/// The storage service: buckets, objects, update and precondition rules, over a backend.
///
/// Concurrency: the index (buckets, sorted names, metadata) sits behind one lock, held only
/// for in-memory work. Writes to one object are serialised by a striped lock: a new generation or
/// a delete holds it across "check preconditions → write to the backend → publish in the index";
/// metadata changes are checked and applied under it in order, then committed as a group (see
/// `WriteStripe`). So racing writers of the same object take turns and a precondition is checked
/// atomically with its write. Readers see the last published (committed) version.
public final class ObjectStore: Sendable {
  public struct Options: Sendable {
    /// Without it a first upload to a missing bucket creates the bucket.
    public var strictBuckets = false

    public init(strictBuckets: Bool = false) { self.strictBuckets = strictBuckets }
  }

  struct BucketIndex {
    var info: BucketInfo
    var keys: [ObjectKey] = []
    var objects: [ObjectKey: ObjectMetadata] = [:]
    /// Noncurrent generations (versioned buckets), oldest first per name.
    var noncurrent: [ObjectKey: [NoncurrentObject]] = [:]

    mutating func put(_ object: ObjectMetadata) {
      let key = ObjectKey(object.name)
      if objects.updateValue(object, forKey: key) == nil {
        keys.insert(key, at: Self.lowerBound(keys, key))
      }
    }

    mutating func remove(_ name: String) {
      let key = ObjectKey(name)
      guard objects.removeValue(forKey: key) != nil else { return }
      let index = Self.lowerBound(keys, key)
      if index < keys.count && keys[index] == key { keys.remove(at: index) }
    }

    static func lowerBound(_ keys: [ObjectKey], _ key: ObjectKey) -> Int {
      var low = 0
      var high = keys.count
      while low < high {
        let mid = (low + high) / 2
        if keys[mid] < key { low = mid + 1 } else { high = mid }
      }
      return low
    }
  }

  public let options: Options
  /// Observers of every change (see `ChangeHook`).
  public let changes = ChangeHook()
  let backend: any StorageBackend
  let index = Locked<[String: BucketIndex]>([:])
  private let stripes: [WriteStripe] = (0..<256).map { _ in WriteStripe() }
  let lastGeneration = Atomic<Int64>(0)
  /// Tests: told the size of each chunk a listing copied out of the index, after the index
  /// lock is released again.
  let listChunkObserver = Locked<(@Sendable (Int) -> Void)?>(nil)
  /// Writes in progress, and whether the store is closed to new ones.
  private let writes = Locked<(active: Int, closed: Bool)>((0, false))

  /// Opens the store, loading what the backend holds (and letting it clean up interrupted writes).
  public init(backend: any StorageBackend, options: Options = Options(), log: @Sendable (String) -> Void = { _ in })
    throws(StorageError)
  {
    self.backend = backend
    self.options = options
    var loaded = try backend.load(log: log)
    var built: (buckets: [String: BucketIndex], highest: Int64)
    do {
      built = try Self.buildIndex(loaded)
    } catch {
      log("index: \(error); reading every record instead")
      loaded = try backend.load(log: log)
      built = try Self.buildIndex(loaded)
    }
    var buckets = built.buckets
    let highest = max(built.highest, loaded.noncurrent.map(\.object.generation).max() ?? 0)
    Self.addNoncurrent(loaded.noncurrent, to: &buckets, backend: backend, log: log)
    index.withLock { $0 = buckets }
    lastGeneration.store(highest, ordering: .relaxed)
    if loaded.wantsSnapshot {
      do {
        try backend.saveSnapshot(snapshotState())
      } catch {
        log("index: no snapshot saved (\(error)); the next start-up reads every record again")
      }
    }
  }

  /// The index from what the backend loaded: per bucket, into tables sized up front, while
  /// batches may still be arriving from the backend's decoding thread (this runs for every object
  /// at start-up).
  private static func buildIndex(
    _ loaded: LoadedState
  ) throws(StorageError) -> (buckets: [String: BucketIndex], highest: Int64) {
    var buckets: [String: BucketIndex] = [:]
    for info in loaded.buckets { buckets[info.name] = BucketIndex(info: info) }
    var highest: Int64 = 0
    // Objects come grouped by bucket: work on one bucket's tables at a time, out of the dictionary
    // (so they are uniquely referenced and grow in place).
    var current: (name: String, index: BucketIndex)?
    var sorted = true
    func add(_ object: ObjectMetadata) {
      if current?.name != object.bucket {
        if let done = current { buckets[done.name] = done.index }
        guard let index = buckets.removeValue(forKey: object.bucket) else {
          current = nil
          return
        }
        current = (object.bucket, index)
        // Sized here, once the tables are held only by `current`: sizing them while another
        // reference lived would make the first insert copy a table sized for every object.
        if let count = loaded.expectedCounts[object.bucket], current!.index.objects.isEmpty {
          current!.index.objects.reserveCapacity(count)
          current!.index.keys.reserveCapacity(count)
        }
      }
      let key = ObjectKey(object.name)
      if current!.index.objects.updateValue(object, forKey: key) == nil {
        if let last = current!.index.keys.last, !(last < key) { sorted = false }
        current!.index.keys.append(key)
      }
      highest = max(highest, object.generation)
    }
    if let batches = loaded.batches {
      while let batch = try batches.next() {
        guard let first = batch.objects.first else { continue }
        add(first)  // switches tables when the bucket changes
        guard current?.name == batch.bucket else { continue }
        // The rest straight in: a batch is in key order, after what came before, and holds no
        // name twice.
        for position in 1..<batch.objects.count {
          let object = batch.objects[position]
          current!.index.objects[batch.keys[position]] = object
          highest = max(highest, object.generation)
        }
        current!.index.keys.append(contentsOf: batch.keys.dropFirst())
      }
    }
    for object in loaded.objects { add(object) }
    if let done = current { buckets[done.name] = done.index }
    if !sorted {
      for name in buckets.keys { buckets[name]!.keys.sort() }
    }
    return (buckets, highest)
  }

  // MARK: Closing

  func beginWrite() throws(StorageError) {
    let open = writes.withLock { state -> Bool in
      guard !state.closed else { return false }
      state.active += 1
      return true
    }
    if !open { throw StorageError.io("the emulator is shutting down") }
  }

  func endWrite(count: Int = 1) {
    writes.withLock { $0.active -= count }
  }

  /// Refuses new writes, waits (up to `timeout` seconds) for those in progress, then saves a
  /// snapshot of the index so the next start-up is fast. Returns false when writes were still
  /// running (no snapshot then: the journal still names every change, so nothing is lost).
  @discardableResult
  public func close(timeout: Double = 5) throws(StorageError) -> Bool {
    writes.withLock { $0.closed = true }
    let deadline = DispatchTime.now().uptimeNanoseconds + UInt64(max(timeout, 0) * 1e9)
    while writes.withLock({ $0.active }) > 0 {
      guard DispatchTime.now().uptimeNanoseconds < deadline else { return false }
      usleep(1000)
    }
    try backend.saveSnapshot(snapshotState())
    return true
  }

  /// Everything in the index, bucket by bucket in name order.
  private func snapshotState() -> LoadedState {
    index.withLock { buckets -> LoadedState in
      var state = LoadedState()
      state.objects.reserveCapacity(buckets.values.reduce(0) { $0 + $1.keys.count })
      for bucket in buckets.values.sorted(by: { $0.info.name < $1.info.name }) {
        state.buckets.append(bucket.info)
        for key in bucket.keys { state.objects.append(bucket.objects[key]!) }
      }
      return state
    }
  }

  // MARK: Buckets

  /// Creates a bucket; `resource` is the bucket resource a client sent (its writable fields are
  /// checked and kept, see `BucketSettings`).
  public func createBucket(_ name: String, resource: JSONValue = .object([])) throws(StorageError) -> BucketInfo {
    try beginWrite()
    defer { endWrite() }
    try Naming.validateBucketName(name)
    let now = Timestamp.nowMilliseconds()
    let settings = try BucketSettings.apply(resource, to: nil, mode: .insert, now: now)
    let info = BucketInfo(name: name, timeCreated: now, settings: settings)
    let result: Result<BucketInfo, StorageError> = index.withLock { buckets in
      if buckets[name] != nil { return .failure(.bucketExists(bucket: name)) }
      do throws(StorageError) {
        try backend.saveBucket(info)
      } catch {
        return .failure(error)
      }
      buckets[name] = BucketIndex(info: info)
      return .success(info)
    }
    return try result.get()
  }

  public func bucket(_ name: String) throws(StorageError) -> BucketInfo {
    guard let info = index.withLock({ $0[name]?.info }) else { throw StorageError.bucketNotFound(bucket: name) }
    return info
  }

  public func listBuckets() -> [BucketInfo] {
    index.withLock { $0.values.map(\.info) }.sorted { $0.name < $1.name }
  }

  /// Deletes an empty bucket.
  public func deleteBucket(_ name: String) throws(StorageError) {
    try beginWrite()
    defer { endWrite() }
    let result: Result<Void, StorageError> = index.withLock { buckets in
      guard let bucket = buckets[name] else { return .failure(.bucketNotFound(bucket: name)) }
      guard bucket.objects.isEmpty && bucket.noncurrent.isEmpty else { return .failure(.bucketNotEmpty(bucket: name)) }
      do throws(StorageError) {
        try backend.removeBucket(name)
      } catch {
        return .failure(error)
      }
      buckets[name] = nil
      return .success(())
    }
    try result.get()
  }

  func ensureBucket(_ name: String, create: Bool = true) throws(StorageError) {
    if index.withLock({ $0[name] != nil }) { return }
    if options.strictBuckets || !create { throw StorageError.bucketNotFound(bucket: name) }
    do {
      _ = try createBucket(name)
    } catch .bucketExists {
      return
    }
  }

  // MARK: Reading

  func lookup(_ bucket: String, _ name: String) throws(StorageError) -> ObjectMetadata? {
    let found: ObjectMetadata?? = index.withLock { buckets in
      guard let index = buckets[bucket] else { return nil }
      return .some(index.objects[ObjectKey(name)])
    }
    guard let found else { throw StorageError.bucketNotFound(bucket: bucket) }
    return found
  }

  /// The error for a name that has no live object: a clear one when its record was damaged.
  func missing(_ bucket: String, _ name: String) -> StorageError {
    if backend.isDamaged(bucket: bucket, name: name) {
      return .io(
        "The metadata record of \(bucket)/\(name) is damaged (the start-up log names the file); the object cannot be read until it is overwritten or deleted."
      )
    }
    return .objectNotFound(bucket: bucket, name: name)
  }

  /// The live object's metadata, after the read preconditions.
  public func metadata(
    bucket: String, name: String, conditions: Preconditions = Preconditions()
  ) throws(StorageError) -> ObjectMetadata {
    guard let object = try addressed(bucket, name, generation: conditions.generation) else {
      throw missing(bucket, name)
    }
    try conditions.checkRead(object)
    return object
  }

  /// The live object's metadata and bytes, consistent with each other.
  public func read(
    bucket: String, name: String, conditions: Preconditions = Preconditions()
  ) throws(StorageError) -> (ObjectMetadata, [UInt8]) {
    let lock = stripe(bucket, name)
    lock.lock()
    defer { lock.unlock() }
    let object = try metadata(bucket: bucket, name: name, conditions: conditions)
    return (object, try backend.read(object))
  }

  /// The live object's metadata and an open handle on its bytes (a file descriptor for the file
  /// backend, so large objects are streamed, not loaded).
  public func open(
    bucket: String, name: String, conditions: Preconditions = Preconditions()
  ) throws(StorageError) -> (ObjectMetadata, ObjectData) {
    let lock = stripe(bucket, name)
    lock.lock()
    defer { lock.unlock() }
    let object = try metadata(bucket: bucket, name: name, conditions: conditions)
    return (object, try backend.open(object))
  }

  // MARK: Writing

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

  /// Stores a new generation of the object. An absent or empty content type becomes
  /// `application/octet-stream`.
  public func insert(
    bucket: String, name: String, data: [UInt8], upload: Upload = Upload(),
    conditions: Preconditions = Preconditions()
  ) throws(StorageError) -> ObjectMetadata {
    try insert(bucket: bucket, name: name, source: .bytes(data), upload: upload, conditions: conditions)
  }

  public func insert(
    bucket: String, name: String, source: DataSource, upload: Upload = Upload(),
    conditions: Preconditions = Preconditions()
  ) throws(StorageError) -> ObjectMetadata {
    let (staged, digest) = try stage(source, bucket: bucket, name: name) { Self.checksumFailure(upload, $0) }
    return try commitNew(
      bucket: bucket, name: name, staged: staged, md5: digest.md5, crc32c: digest.crc32c, componentCount: nil,
      upload: upload, conditions: conditions
    ) { _ in }
  }

  /// Checks the names, then stages the source's bytes and digests them; `reject` may refuse the
  /// digest (a checksum the client sent). On any failure nothing stays staged, and a file
  /// source is removed.
  func stage(
    _ source: DataSource, bucket: String, name: String,
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
        let digest = try backend.digest(staged)
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

  /// Publishes staged bytes as a new generation: the write preconditions are checked under the
  /// object's lock, atomically with the commit. `prepare` fills in metadata before the patch.
  /// Commits a new generation whose bytes are staged: the replaced one is kept as noncurrent in a
  /// versioned bucket (and dropped again if the commit fails), then the index is updated and the
  /// change announced. The caller holds the object's stripe and discards `staged` on failure.
  func commitGeneration(
    _ object: ObjectMetadata, staged: StagedData?, previous: ObjectMetadata?
  ) throws(StorageError) -> ObjectMetadata {
    let archived = try archiveIfVersioned(previous)
    do {
      try backend.commit(object, data: staged, previous: previous)
    } catch {
      if let archived { try? backend.removeNoncurrent(archived.object) }
      throw error
    }
    try publish(object, archived: archived)
    changes.emit(.finalized, object)
    return object
  }

  private func commitNew(
    bucket: String, name: String, staged: StagedData, md5: [UInt8]?, crc32c: UInt32, componentCount: Int?,
    upload: Upload, conditions: Preconditions, prepare: (inout ObjectMetadata) -> Void
  ) throws(StorageError) -> ObjectMetadata {
    try beginWrite()
    defer { endWrite() }
    do throws(StorageError) {
      try ensureBucket(bucket, create: upload.createsBucket)
      let key = WriteStripe.Key(bucket: bucket, name: ObjectKey(name))
      let lock = stripe(key)
      lock.lock()
      defer { lock.unlock() }
      lock.waitForGroups(of: key)
      let previous = try lookup(bucket, name)
      try conditions.checkWrite(previous, bucket: bucket, name: name)
      var object = ObjectMetadata(
        bucket: bucket, name: name, generation: nextGeneration(), size: staged.size, md5: md5, crc32c: crc32c,
        now: Timestamp.nowMilliseconds())
      object.componentCount = componentCount
      prepare(&object)
      upload.patch.apply(to: &object)
      if object.contentType?.isEmpty ?? true { object.contentType = "application/octet-stream" }
      if upload.createDownloadToken && object.downloadTokens.isEmpty {
        object.downloadTokens = [UUID().uuidString.lowercased()]
      }
      try object.checkCustomMetadataSize()
      return try commitGeneration(object, staged: staged, previous: previous)
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
    guard let source = try addressed(sourceBucket, sourceName, generation: sourceConditions.generation) else {
      throw StorageError.objectNotFound(bucket: sourceBucket, name: sourceName)
    }
    try sourceConditions.checkWrite(source, bucket: sourceBucket, name: sourceName)
    let staged = try backend.stageConcatenation(of: [source])
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
    let staged = try backend.stageConcatenation(of: objects)
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

  /// Applies a metadata change (PATCH merge, or PUT replace) to the live object:
  /// metageneration +1, `updated` = now; generation, data and hashes unchanged.
  public func update(
    bucket: String, name: String, patch: MetadataPatch, conditions: Preconditions = Preconditions()
  ) throws(StorageError) -> ObjectMetadata {
    try waitFor { update(bucket: bucket, name: name, patch: patch, conditions: conditions, completion: $0) }
  }

  /// `update` without blocking the caller: the change is checked and applied at once, and
  /// `completion` runs (on a Dispatch worker, or at once on the caller's thread when the answer
  /// is known without a write) exactly once, after the record holding the change is written.
  public func update(
    bucket: String, name: String, patch: MetadataPatch, conditions: Preconditions = Preconditions(),
    completion: @escaping @Sendable (Result<ObjectMetadata, StorageError>) -> Void
  ) {
    modify(bucket: bucket, name: name, conditions: conditions, completion: completion) { patch.apply(to: &$0) }
  }

  /// Checks write preconditions against the live object now (a resumable upload checks them when
  /// it starts, and again, atomically, when it commits).
  public func checkWrite(
    bucket: String, name: String, conditions: Preconditions, createsBucket: Bool = true
  ) throws(StorageError) {
    try Naming.validateObjectName(name)
    let current: ObjectMetadata?
    do {
      current = try lookup(bucket, name)
    } catch .bucketNotFound {
      if options.strictBuckets || !createsBucket { throw StorageError.bucketNotFound(bucket: bucket) }
      current = nil
    }
    try conditions.checkWrite(current, bucket: bucket, name: name)
  }

  /// Changes the download tokens (Firebase `create_token` / `delete_token`): a metadata change.
  public func updateTokens(
    bucket: String, name: String, _ change: @escaping @Sendable ([String]) -> [String]
  ) throws(StorageError) -> ObjectMetadata {
    try waitFor { completion in
      modify(bucket: bucket, name: name, conditions: Preconditions(), completion: completion) {
        $0.downloadTokens = change($0.downloadTokens)
      }
    }
  }

  /// Gives the object a download token if it has none (the Firebase surface does this on its
  /// first metadata read, as production does): a metadata change like any other.
  public func ensureDownloadToken(bucket: String, name: String) throws(StorageError) -> ObjectMetadata {
    try waitFor { completion in
      modify(
        bucket: bucket, name: name, conditions: Preconditions(), onlyIf: { $0.downloadTokens.isEmpty },
        completion: completion
      ) {
        $0.downloadTokens = [UUID().uuidString.lowercased()]
      }
    }
  }

  /// Runs a change started with a completion and blocks until it completes.
  private func waitFor(
    _ start: (@escaping @Sendable (Result<ObjectMetadata, StorageError>) -> Void) -> Void
  ) throws(StorageError) -> ObjectMetadata {
    try waitForCallback(start).get()
  }

  /// A metadata change, committed with any that race with it (see `WriteStripe`): checked
  /// against and applied to the newest accepted version now, acknowledged through `completion`
  /// once a record holding it is written and published. Does no I/O itself: the first change of
  /// a group hands the write to a Dispatch worker, later ones join the group. It does take the
  /// object's stripe lock, which a new generation or a delete of an object on the same stripe
  /// (1 in 256) holds across its own record write: that is the longest it can wait.
  private func modify(
    bucket: String, name: String, conditions: Preconditions,
    onlyIf needed: (ObjectMetadata) -> Bool = { _ in true },
    completion: @escaping @Sendable (Result<ObjectMetadata, StorageError>) -> Void,
    _ change: (inout ObjectMetadata) -> Void
  ) {
    do {
      try beginWrite()
    } catch {
      return completion(.failure(error))
    }
    let key = WriteStripe.Key(bucket: bucket, name: ObjectKey(name))
    let stripe = stripe(key)
    stripe.lock()
    let group = stripe.groups[key]
    let ticket: WriteStripe.Ticket
    let onDisk: ObjectMetadata
    do throws(StorageError) {
      let found: ObjectMetadata? = if let group { group.latest } else { try lookup(bucket, name) }
      guard let current = found else { throw missing(bucket, name) }
      onDisk = group?.published ?? current
      try conditions.checkWrite(current, bucket: bucket, name: name)
      if needed(current) {
        var object = current
        change(&object)
        try object.checkCustomMetadataSize()
        object.metageneration += 1
        object.updated = max(Timestamp.nowMilliseconds(), current.updated)
        ticket = WriteStripe.Ticket(object: object, completion: completion)
        group?.latest = object
      } else {
        // Nothing to change: answer with the newest version once it is on disk.
        ticket = WriteStripe.Ticket(object: current, completion: completion)
        guard group != nil else {
          stripe.unlock()
          endWrite()
          return completion(.success(current))
        }
      }
    } catch {
      stripe.unlock()
      endWrite()
      return completion(.failure(error))
    }
    if let group {
      group.waiting.append(ticket)
      stripe.unlock()
      return
    }
    let started = WriteStripe.MetadataGroup(latest: ticket.object, published: onDisk)
    started.waiting = [ticket]
    stripe.groups[key] = started
    stripe.unlock()
    DispatchQueue.global().async { [self] in writeGroups(key: key, stripe: stripe) }
  }

  /// Writes the newest version of an object's metadata group, once for every change queued so
  /// far, and again while changes keep queuing during the writes; then removes the group (which
  /// lets a waiting insert or delete go on). Completions run outside the lock.
  private func writeGroups(key: WriteStripe.Key, stripe: WriteStripe) {
    stripe.lock()
    while let group = stripe.groups[key], !group.waiting.isEmpty {
      let batch = group.waiting
      group.waiting = []
      let object = group.latest
      let previous = group.published
      stripe.unlock()
      var failure: StorageError?
      do {
        try backend.commit(object, data: nil, previous: previous)
      } catch {
        failure = error
      }
      stripe.lock()
      if failure == nil {
        do {
          try publish(object)
          // One change per new metageneration, in order, under the object's lock.
          var last = previous.metageneration
          for ticket in batch where ticket.object.metageneration > last {
            last = ticket.object.metageneration
            changes.emit(.metadataUpdated, ticket.object)
          }
        } catch {
          failure = error
        }
      }
      if let failure {
        let finished = batch + group.waiting
        // Later changes were made on top of this version: they fail with it.
        group.waiting = []
        stripe.groups[key] = nil
        stripe.condition.broadcast()
        stripe.unlock()
        for ticket in finished { ticket.completion(.failure(failure)) }
        endWrite(count: finished.count)
        return
      }
      group.published = object
      stripe.unlock()
      for ticket in batch { ticket.completion(.success(ticket.object)) }
      endWrite(count: batch.count)
      stripe.lock()
    }
    stripe.groups[key] = nil
    stripe.condition.broadcast()
    stripe.unlock()
  }

  public func delete(bucket: String, name: String, conditions: Preconditions = Preconditions()) throws(StorageError) {
    try beginWrite()
    defer { endWrite() }
    let key = WriteStripe.Key(bucket: bucket, name: ObjectKey(name))
    let lock = stripe(key)
    lock.lock()
    defer { lock.unlock() }
    lock.waitForGroups(of: key)
    let live = try lookup(bucket, name)
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
    do {
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

  func publish(_ object: ObjectMetadata, archived: NoncurrentObject? = nil) throws(StorageError) {
    let published = index.withLock { buckets -> Bool in
      guard buckets[object.bucket] != nil else { return false }
      buckets[object.bucket]!.put(object)
      if let archived { buckets[object.bucket]!.noncurrent[ObjectKey(object.name), default: []].append(archived) }
      return true
    }
    if !published {
      // The bucket was deleted while this write was in progress.
      try? backend.remove(object)
      if let archived { try? backend.removeNoncurrent(archived.object) }
      throw StorageError.bucketNotFound(bucket: object.bucket)
    }
  }

  /// Microseconds since the epoch, strictly increasing across the store.
  func nextGeneration() -> Int64 {
    while true {
      let last = lastGeneration.load(ordering: .relaxed)
      let candidate = max(Timestamp.nowMicroseconds(), last + 1)
      if lastGeneration.compareExchange(expected: last, desired: candidate, ordering: .relaxed).exchanged {
        return candidate
      }
    }
  }

  func stripe(_ bucket: String, _ name: String) -> WriteStripe {
    stripe(WriteStripe.Key(bucket: bucket, name: ObjectKey(name)))
  }

  func stripe(_ key: WriteStripe.Key) -> WriteStripe {
    stripes[Int(UInt(bitPattern: key.hashValue) % UInt(stripes.count))]
  }
}
