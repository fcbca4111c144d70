import Foundation
import Crypto

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// A bucket as stored.
public struct BucketInfo: Sendable, Equatable {
  public var name: String
  /// Milliseconds since the epoch.
  public var timeCreated: Int64
  /// Milliseconds since the epoch.
  public var updated: Int64
  /// 1 at creation, +1 for every PATCH or PUT.
  public var metageneration: Int64 = 1
  /// The writable fields in GCS's canonical form (see `BucketSettings`): a JSON object.
  public var settings: JSONValue

  public init(name: String, timeCreated: Int64, settings: JSONValue? = nil) {
    self.name = name
    self.timeCreated = timeCreated
    self.updated = timeCreated
    self.settings = settings ?? BucketSettings.defaults(now: timeCreated)
  }

  /// Whether an overwrite or a delete keeps the live generation as a noncurrent one.
  public var versioningEnabled: Bool { settings["versioning"]?["enabled"] == .bool(true) }
}

/// A generation that is no longer live, kept because its bucket has versioning enabled.
public struct NoncurrentObject: Sendable, Equatable {
  public var object: ObjectMetadata
  /// When it stopped being live (milliseconds since the epoch): GCS's `timeDeleted`.
  public var timeDeleted: Int64

  public init(object: ObjectMetadata, timeDeleted: Int64) {
    self.object = object
    self.timeDeleted = timeDeleted
  }
}

/// Bytes written ahead of a commit (a temporary file, or memory), not yet visible.
public struct StagedData: Sendable {
  public let id: String
  public let size: Int64

  public init(id: String, size: Int64) {
    self.id = id
    self.size = size
  }
}

/// Everything a store found at start-up.
public struct LoadedState: Sendable {
  public var buckets: [BucketInfo] = []
  /// Objects still being decoded by another thread, delivered before `objects`.
  public var batches: ObjectBatches?
  /// How many objects each bucket will hold (to size tables up front); may be empty.
  public var expectedCounts: [String: Int] = [:]
  public var objects: [ObjectMetadata] = []
  /// Noncurrent generations kept by versioned buckets (in any order).
  public var noncurrent: [NoncurrentObject] = []
  /// The backend asks for `saveSnapshot` once the store is built (its index was slow to load).
  public var wantsSnapshot = false

  public init() {}
}

/// Objects with their keys (made on the producer's thread too), all in one bucket, in key order
/// and not yet in the index.
public struct ObjectBatch: Sendable {
  public var bucket: String
  public var keys: [ObjectKey] = []
  public var objects: [ObjectMetadata] = []

  public init(bucket: String) { self.bucket = bucket }
}

/// Objects handed from a producer thread to the consumer in batches (a bounded queue), so
/// decoding and indexing a large snapshot overlap on two cores.
///
/// Invariant: every `var` is touched only with `condition` locked.
public final class ObjectBatches: @unchecked Sendable {
  private let condition = NSCondition()
  private var queue: [ObjectBatch] = []
  private var finished = false
  private var failure: String?
  private let capacity = 8

  public init() {}

  /// Producer: waits while the consumer is `capacity` batches behind.
  public func push(_ batch: ObjectBatch) {
    condition.lock()
    defer { condition.unlock() }
    while queue.count >= capacity { condition.wait() }
    queue.append(batch)
    condition.broadcast()
  }

  /// Producer: no more batches (with the reason, when decoding failed).
  public func finish(failure: String? = nil) {
    condition.lock()
    defer { condition.unlock() }
    finished = true
    self.failure = failure
    condition.broadcast()
  }

  /// Consumer: the next batch, nil at the end; throws when the producer failed.
  public func next() throws(StorageError) -> ObjectBatch? {
    condition.lock()
    defer { condition.unlock() }
    while queue.isEmpty && !finished { condition.wait() }
    if !queue.isEmpty {
      condition.broadcast()
      return queue.removeFirst()
    }
    if let failure { throw StorageError.io(failure) }
    return nil
  }
}

/// Where objects live. Implementations make each `commit` and `remove` atomic: after a crash an
/// object is wholly its old or wholly its new version. Calls for one object are serialised by
/// the store; calls for different objects may run concurrently.
public protocol StorageBackend: Sendable {
  /// Loads everything, first cleaning leftovers of interrupted writes (reported through `log`).
  func load(log: @Sendable (String) -> Void) throws(StorageError) -> LoadedState
  func saveBucket(_ bucket: BucketInfo) throws(StorageError)
  func removeBucket(_ name: String) throws(StorageError)
  /// Writes the bytes somewhere invisible until `commit`.
  func stage(_ bytes: [UInt8]) throws(StorageError) -> StagedData
  /// Takes ownership of a file (an upload spooled to disk) and stages its bytes.
  func stage(file path: String) throws(StorageError) -> StagedData
  /// Stages the concatenation of the live bytes of `objects` (one object: a copy).
  func stageConcatenation(of objects: [ObjectMetadata]) throws(StorageError) -> StagedData
  /// MD5 and CRC32C of staged bytes.
  func digest(_ staged: StagedData) throws(StorageError) -> (md5: [UInt8], crc32c: UInt32)
  func discard(_ staged: StagedData)
  /// Makes `object` the live version: with `data`, a new generation replacing `previous` (whose
  /// bytes are then dropped); without, a metadata-only update that leaves the bytes alone.
  func commit(_ object: ObjectMetadata, data: StagedData?, previous: ObjectMetadata?) throws(StorageError)
  func remove(_ object: ObjectMetadata) throws(StorageError)
  /// Keeps the bytes and metadata of the live `object` as a noncurrent generation (a versioned
  /// bucket), before a `commit` replaces it or a `remove` removes it; readable by `open`/`read`.
  func archive(_ object: NoncurrentObject) throws(StorageError)
  /// Removes a noncurrent generation for good.
  func removeNoncurrent(_ object: ObjectMetadata) throws(StorageError)
  /// The live bytes of `object`.
  func read(_ object: ObjectMetadata) throws(StorageError) -> [UInt8]
  /// Whether start-up found this object's record damaged (it is then unreadable until it is
  /// overwritten or deleted).
  func isDamaged(bucket: String, name: String) -> Bool
  /// Removes what is left of a damaged object.
  func removeDamaged(bucket: String, name: String) throws(StorageError)
  /// The live bytes of `object`, as an open file when the backend has one (streamed with
  /// `sendfile`; the bytes stay readable even if the object is replaced meanwhile).
  func open(_ object: ObjectMetadata) throws(StorageError) -> ObjectData
  /// Saves the whole index so the next `load` is fast (called with no write in progress).
  func saveSnapshot(_ state: LoadedState) throws(StorageError)
}

extension StorageBackend {
  public func saveSnapshot(_ state: LoadedState) throws(StorageError) {}
}

/// An object's bytes for reading.
public enum ObjectData: Sendable {
  case bytes([UInt8])
  case file(OpenFile)
}

/// An open, read-only file descriptor, closed when the last reference goes.
public final class OpenFile: Sendable {
  public let fd: Int32
  public let size: Int

  public init(fd: Int32, size: Int) {
    self.fd = fd
    self.size = size
  }

  deinit { closeDescriptor(fd) }
}

/// Streaming digests, shared by the backends.
public struct Digester {
  private var md5 = Insecure.MD5()
  private var crc = CRC32C()

  public init() {}

  public mutating func update(_ bytes: UnsafeRawBufferPointer) {
    md5.update(bufferPointer: bytes)
    crc.update(bytes)
  }

  public func finalize() -> (md5: [UInt8], crc32c: UInt32) { (Array(md5.finalize()), crc.value) }

  public static func digest(_ bytes: [UInt8]) -> (md5: [UInt8], crc32c: UInt32) {
    var digester = Digester()
    bytes.withUnsafeBytes { digester.update($0) }
    return digester.finalize()
  }
}

private func closeDescriptor(_ fd: Int32) { _ = close(fd) }
