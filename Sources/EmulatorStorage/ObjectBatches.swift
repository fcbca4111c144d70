import EmulatorSupport

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
  private let condition = PosixCondition()
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
