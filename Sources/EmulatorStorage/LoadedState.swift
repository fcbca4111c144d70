/// Everything a store found at start-up.
public struct LoadedState: Sendable {
  public var buckets: [BucketInfo] = []
  /// Objects still being decoded by another thread, delivered before `objects`.
  public var batches: ObjectBatches?
  /// How many objects each bucket will hold (to size tables up front); may be empty.
  public var expectedCounts: [String: Int] = [:]
  public var objects: [ObjectMetadata] = []
  /// How many objects the log's replay may add to `batches` (to size tables up front).
  public var replayCount = 0
  /// Noncurrent generations kept by versioned buckets (in any order).
  public var noncurrent: [NoncurrentObject] = []
  /// The highest generation the backend has seen (deleted objects too): the store makes only
  /// larger ones. Saved with a snapshot (`ObjectStore.snapshotState` fills it in).
  public var highestGeneration: Int64 = 0
  /// The backend asks for `saveSnapshot` once the store is built (its index was slow to load).
  public var wantsSnapshot = false

  public init() {}
}
