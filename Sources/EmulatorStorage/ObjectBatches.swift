import EmulatorSupport

/// Objects with their keys (made on the producer's thread too), not yet in the index: either all
/// in one bucket, in key order and after the previous batch's (`inOrder`, the snapshot's), or in
/// any order and buckets (the log's replay).
public struct ObjectBatch: Sendable {
  public var bucket: String
  public var keys: [ObjectKey] = []
  public var objects: [ObjectMetadata] = []
  public var inOrder = true

  public init(bucket: String) { self.bucket = bucket }

  /// Objects in any order and buckets.
  public init(unordered objects: [ObjectMetadata]) {
    bucket = ""
    keys = objects.map { ObjectKey($0.name) }
    self.objects = objects
    inOrder = false
  }
}

/// Objects handed from producer threads to the consumer in batches (a bounded queue), so
/// decoding and indexing a large snapshot, and handing over the records the log replays, overlap
/// on every core.
///
/// Invariant: every `var` is touched only with `condition` locked.
public final class ObjectBatches: @unchecked Sendable {
  private let condition = PosixCondition()
  private var queue: [ObjectBatch] = []
  /// Producers that have called `finish`, of `producers`.
  private var finished = 0
  private let producers: Int
  private var failure: String?
  private let capacity = 8
  /// Log lines of the producers, for the consumer to write.
  private var messages: [String] = []

  public init(producers: Int = 1) { self.producers = producers }

  /// Producer: waits while the consumer is `capacity` batches behind.
  public func push(_ batch: ObjectBatch) {
    condition.lock()
    defer { condition.unlock() }
    while queue.count >= capacity { condition.wait() }
    queue.append(batch)
    condition.broadcast()
  }

  /// Producer: no more batches from this one (with the reason, when decoding failed).
  public func finish(failure: String? = nil) {
    condition.lock()
    defer { condition.unlock() }
    finished += 1
    if let failure { self.failure = failure }
    condition.broadcast()
  }

  /// Producer: a log line for the consumer to write (a producer may outlive its caller's log).
  public func report(_ line: String) {
    condition.lock()
    defer { condition.unlock() }
    messages.append(line)
  }

  /// Consumer: the producers' log lines so far.
  public func takeMessages() -> [String] {
    condition.lock()
    defer { condition.unlock() }
    defer { messages = [] }
    return messages
  }

  /// Consumer: the next batch, nil once every producer has finished; throws then when one
  /// failed (so no producer is left blocked on a full queue, and none is still working when a
  /// caller starts over).
  public func next() throws(StorageError) -> ObjectBatch? {
    condition.lock()
    defer { condition.unlock() }
    while queue.isEmpty && finished < producers { condition.wait() }
    if !queue.isEmpty {
      condition.broadcast()
      return queue.removeFirst()
    }
    if let failure { throw StorageError.io(failure) }
    return nil
  }
}
