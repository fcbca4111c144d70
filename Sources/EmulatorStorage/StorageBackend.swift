/// A bucket as stored.
public struct BucketInfo: Sendable, Equatable {
  public var name: String
  /// Milliseconds since the epoch.
  public var timeCreated: Int64

  public init(name: String, timeCreated: Int64) {
    self.name = name
    self.timeCreated = timeCreated
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
  public var objects: [ObjectMetadata] = []

  public init() {}
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
  func discard(_ staged: StagedData)
  /// Makes `object` the live version: with `data`, a new generation replacing `previous` (whose
  /// bytes are then dropped); without, a metadata-only update that leaves the bytes alone.
  func commit(_ object: ObjectMetadata, data: StagedData?, previous: ObjectMetadata?) throws(StorageError)
  func remove(_ object: ObjectMetadata) throws(StorageError)
  /// The live bytes of `object`.
  func read(_ object: ObjectMetadata) throws(StorageError) -> [UInt8]
}
