import Crypto
import Dispatch
import EmulatorSupport
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
  /// Writes in progress, whether the store is closed to new ones, and the background snapshot.
  let writes = Locked(WriteCounts())
  let log: @Sendable (String) -> Void

  /// Opens the store, loading what the backend holds (and letting it clean up interrupted writes).
  public init(
    backend: any StorageBackend, options: Options = Options(), log: @escaping @Sendable (String) -> Void = { _ in }
  )
    throws(StorageError)
  {
    self.backend = backend
    self.options = options
    self.log = log
    let began = DispatchTime.now().uptimeNanoseconds
    var loaded = try backend.load(log: log)
    var built: (buckets: [String: BucketIndex], highest: Int64)
    do {
      defer { loaded.batches?.takeMessages().forEach(log) }
      built = try Self.buildIndex(loaded)
    } catch {
      log("index: \(error); reading every record instead")
      loaded = try backend.load(log: log)
      built = try Self.buildIndex(loaded)
    }
    var buckets = built.buckets
    let highest = max(
      built.highest, loaded.highestGeneration, loaded.noncurrent.map(\.object.generation).max() ?? 0)
    Self.addNoncurrent(loaded.noncurrent, to: &buckets, backend: backend, log: log)
    index.withLock { $0 = buckets }
    lastGeneration.store(highest, ordering: .relaxed)
    // A large index is saved in the background: the store is ready meanwhile, and a crash before
    // the snapshot is installed finds the folder as it was (read again the same way).
    let count = buckets.values.reduce(0) { $0 + $1.keys.count }
    if count >= 10_000 {
      let seconds = Double(DispatchTime.now().uptimeNanoseconds - began) / 1e9
      log("index: \(count) objects loaded in \(Self.seconds(seconds))")
    }
    if loaded.wantsSnapshot {
      do {
        if count < Self.backgroundSnapshotAbove {
          try backend.saveSnapshot(snapshotState())
        } else {
          startSnapshot(begun: try backend.beginSnapshot())
        }
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
    // New names replayed from the log, by bucket: merged into the sorted names at the end.
    var late: [String: [ObjectKey]] = [:]
    func add(_ object: ObjectMetadata, key: ObjectKey, unordered: Bool = false) {
      if current?.name != object.bucket {
        if let done = current { buckets[done.name] = done.index }
        guard let index = buckets.removeValue(forKey: object.bucket) else {
          current = nil
          return
        }
        current = (object.bucket, index)
        // Sized here, once the tables are held only by `current`: sizing them while another
        // reference lived would make the first insert copy a table sized for every object.
        // Room for the replayed objects too (they may be new names), or the tables would double
        // when the last ones arrive.
        if let count = loaded.expectedCounts[object.bucket], current!.index.objects.isEmpty {
          current!.index.objects.reserveCapacity(count + loaded.replayCount)
          current!.index.keys.reserveCapacity(count + loaded.replayCount)
        }
      }
      if current!.index.objects.updateValue(object, forKey: key) == nil {
        if unordered {
          late[object.bucket, default: []].append(key)
        } else {
          if let last = current!.index.keys.last, !(last < key) { sorted = false }
          current!.index.keys.append(key)
        }
      }
      highest = max(highest, object.generation)
    }
    if let batches = loaded.batches {
      while let batch = try batches.next() {
        guard batch.inOrder else {
          for (object, key) in zip(batch.objects, batch.keys) { add(object, key: key, unordered: true) }
          continue
        }
        guard let first = batch.objects.first else { continue }
        add(first, key: batch.keys[0])  // switches tables when the bucket changes
        guard current?.name == batch.bucket else { continue }
        // The rest straight in: a batch is in key order, after what came before, and holds no
        // name twice.
        for position in 1..<batch.objects.count {
          let object = batch.objects[position]
          current!.index.objects.updateValue(object, forKey: batch.keys[position])
          highest = max(highest, object.generation)
        }
        current!.index.keys.append(contentsOf: batch.keys.dropFirst())
      }
    }
    for object in loaded.objects { add(object, key: ObjectKey(object.name)) }
    if let done = current { buckets[done.name] = done.index }
    for (name, keys) in late where buckets[name] != nil {
      buckets[name]!.keys = buckets[name]!.keys.merging(keys.sorted())
    }
    if !sorted {
      for name in buckets.keys { buckets[name]!.keys = SortedKeys(sorted: buckets[name]!.keys.sorted()) }
    }
    return (buckets, highest)
  }

  /// "1.23 s", for start-up's log lines.
  static func seconds(_ value: Double) -> String {
    let hundredths = Int((value * 100).rounded())
    let fraction = String(hundredths % 100)
    return "\(hundredths / 100).\(fraction.count < 2 ? "0" + fraction : fraction) s"
  }

  // MARK: Closing

  /// Counts a write in (returns its phase, for `endWrite`; see `WriteCounts`).
  func beginWrite() throws(StorageError) -> Int {
    let phase = writes.withLock { state -> Int? in
      guard !state.closed else { return nil }
      state.active[state.phase] += 1
      return state.phase
    }
    guard let phase else { throw StorageError.io("the emulator is shutting down") }
    return phase
  }

  func endWrite(_ phase: Int, count: Int = 1) {
    writes.withLock { $0.active[phase] -= count }
    if backend.snapshotDue { startSnapshot() }
  }

  /// Refuses new writes, waits (up to `timeout` seconds) for those in progress and for a
  /// background snapshot, then saves a snapshot of the index so the next start-up is fast.
  /// Returns false when writes were still running (no snapshot then: the log still holds
  /// every change, so nothing is lost).
  @discardableResult
  public func close(timeout: Double = 5) throws(StorageError) -> Bool {
    writes.withLock { $0.closed = true }
    let deadline = DispatchTime.now().uptimeNanoseconds + UInt64(max(timeout, 0) * 1e9)
    while writes.withLock({ $0.active[0] + $0.active[1] }) > 0 {
      guard DispatchTime.now().uptimeNanoseconds < deadline else { return false }
      usleep(1000)
    }
    // Its writes have all ended: it finishes.
    waitForSnapshot()
    try backend.saveSnapshot(snapshotState())
    return true
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

  // MARK: Publishing

  func publish(_ object: ObjectMetadata, archived: NoncurrentObject? = nil) throws(StorageError) {
    let published = index.withLock { buckets -> Bool in
      // One lookup of the bucket (its name hashed once), the table changed in place.
      guard buckets[object.bucket]?.put(object) != nil else { return false }
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

  /// Runs `body` with the object's live version (nil: none) while holding its stripe, once no
  /// metadata group of it is being written: how a new generation or a delete is checked and made
  /// atomically.
  func withLiveObject<Result>(
    _ bucket: String, _ name: String, _ body: (ObjectMetadata?) throws(StorageError) -> Result
  ) throws(StorageError) -> Result {
    try holdingStripe(bucket, name) { _ throws(StorageError) in try body(try lookup(bucket, name)) }
  }

  /// `withLiveObject` for a new generation: `body` also gets the bucket's default object ACL and
  /// storage class, read in the same hold of the index lock as the live version (each upload
  /// takes that lock, shared by every connection, as few times as it can).
  /// `missingBucket`: called (with the stripe held) when the bucket is not there, to make it or
  /// throw; the lookup is then made once more.
  func withLiveObjectAndDefaults<Result>(
    _ bucket: String, _ name: String,
    missingBucket: () throws(StorageError) -> Void = { () throws(StorageError) in },
    _ body: (ObjectMetadata?, (acl: [AccessControl], storageClass: String)) throws(StorageError) -> Result
  ) throws(StorageError) -> Result {
    try holdingStripe(bucket, name) { key throws(StorageError) in
      func find() -> (ObjectMetadata?, (acl: [AccessControl], storageClass: String))? {
        index.withLock { buckets in
          guard let index = buckets[bucket] else { return nil }
          return (index.objects[key.name], (index.info.access.defaultObjectAcl, index.info.defaultStorageClass))
        }
      }
      var found = find()
      if found == nil {
        try missingBucket()
        found = find()
      }
      guard let found else { throw StorageError.bucketNotFound(bucket: bucket) }
      return try body(found.0, found.1)
    }
  }

  /// Runs `body` holding the object's stripe, once no metadata group of it is being written.
  private func holdingStripe<Result>(
    _ bucket: String, _ name: String, _ body: (WriteStripe.Key) throws(StorageError) -> Result
  ) throws(StorageError) -> Result {
    let key = WriteStripe.Key(bucket: bucket, name: ObjectKey(name))
    let lock = stripe(key)
    lock.lock()
    defer { lock.unlock() }
    settleGroups(key, lock)
    return try body(key)
  }

  func stripe(_ bucket: String, _ name: String) -> WriteStripe {
    stripe(WriteStripe.Key(bucket: bucket, name: ObjectKey(name)))
  }

  func stripe(_ key: WriteStripe.Key) -> WriteStripe {
    stripes[Int(UInt(bitPattern: key.hash) % UInt(stripes.count))]
  }
}
