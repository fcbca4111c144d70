import Dispatch
import EmulatorSupport

/// Metadata changes (PATCH, PUT, download tokens): checked and applied in order under the object's
/// stripe, then written as a group (see `WriteStripe`).
extension ObjectStore {
  /// Applies a metadata change (PATCH merge, or PUT replace) to the live object:
  /// metageneration +1, `updated` = now; generation, data and hashes unchanged.
  public func update(
    bucket: String, name: String, patch: MetadataPatch, conditions: Preconditions = Preconditions()
  ) throws(StorageError) -> ObjectMetadata {
    try waitFor {
      update(bucket: bucket, name: name, patch: patch, conditions: conditions, writer: .caller, completion: $0)
    }
  }

  /// `update` without blocking the caller: the change is checked and applied at once, and
  /// `completion` runs exactly once, after the record holding the change is written, on the
  /// thread that writes it (a Dispatch worker, the end of an event loop's turn, or another thread
  /// that needed the group written: see `GroupWriter`), or at once on the caller's thread when
  /// the answer is known without a write. `writer`: where the group write runs when this change
  /// starts a group.
  public func update(
    bucket: String, name: String, patch: MetadataPatch, conditions: Preconditions = Preconditions(),
    writer: GroupWriter = .worker,
    completion: @escaping @Sendable (Result<ObjectMetadata, StorageError>) -> Void
  ) {
    modify(bucket: bucket, name: name, conditions: conditions, writer: writer, completion: completion) {
      patch.apply(to: &$0)
    }
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
      modify(bucket: bucket, name: name, conditions: Preconditions(), writer: .caller, completion: completion) {
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
        writer: .caller, completion: completion
      ) {
        $0.downloadTokens = [Self.newDownloadToken()]
      }
    }
  }

  /// Runs a change started with a completion and blocks until it completes (its changes pass
  /// `writer: .caller`: a thread about to block writes the group itself rather than wait for a
  /// writer that may be scheduled on its own thread).
  private func waitFor(
    _ start: (@escaping @Sendable (Result<ObjectMetadata, StorageError>) -> Void) -> Void
  ) throws(StorageError) -> ObjectMetadata {
    try waitForCallback(start).get()
  }

  /// A metadata change, committed with any that race with it (see `WriteStripe`): checked
  /// against and applied to the newest accepted version now, acknowledged through `completion`
  /// once a record holding it is written and published. The first change of a group schedules
  /// the write through `writer`; later ones join the group. With `.caller` the caller's thread
  /// writes the group unless another thread is writing it already. The change takes the
  /// object's stripe lock, which a new generation or a delete of an object on the same stripe
  /// (1 in 256) holds across its own record write: that is the longest it can wait.
  private func modify(
    bucket: String, name: String, conditions: Preconditions,
    onlyIf needed: (ObjectMetadata) -> Bool = { _ in true }, writer: GroupWriter,
    completion: @escaping @Sendable (Result<ObjectMetadata, StorageError>) -> Void,
    _ change: (inout ObjectMetadata) -> Void
  ) {
    let phase: Int
    do {
      phase = try beginWrite()
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
        ticket = WriteStripe.Ticket(object: object, phase: phase, completion: completion)
        group?.latest = object
      } else {
        // Nothing to change: answer with the newest version once it is on disk.
        ticket = WriteStripe.Ticket(object: current, phase: phase, completion: completion)
        guard group != nil else {
          stripe.unlock()
          endWrite(phase)
          return completion(.success(current))
        }
      }
    } catch {
      stripe.unlock()
      endWrite(phase)
      return completion(.failure(error))
    }
    if let group {
      group.waiting.append(ticket)
    } else {
      let started = WriteStripe.MetadataGroup(latest: ticket.object, published: onDisk)
      started.waiting = [ticket]
      stripe.groups[key] = started
    }
    guard let schedule = writer.schedule else {
      drainGroup(key, stripe)
      stripe.unlock()
      return
    }
    stripe.unlock()
    if group == nil { schedule { [self] in writeGroups(key: key, stripe: stripe) } }
  }

  /// The work a group's first change schedules: writes the group unless another thread has
  /// claimed it meanwhile (or written it already).
  private func writeGroups(key: WriteStripe.Key, stripe: WriteStripe) {
    stripe.lock()
    drainGroup(key, stripe)
    stripe.unlock()
  }

  /// With the stripe locked: claims the object's metadata group unless another thread is writing
  /// it, then writes its newest version, once for every change queued so far, and again while
  /// changes keep queuing during the writes; then removes the group (which lets a waiting insert
  /// or delete go on). The lock is let go across each write and each batch's completions, and is
  /// held again on return.
  func drainGroup(_ key: WriteStripe.Key, _ stripe: WriteStripe) {
    guard let claimed = stripe.groups[key], !claimed.writing else { return }
    claimed.writing = true
    while let group = stripe.groups[key], !group.waiting.isEmpty {
      let batch = group.waiting
      group.waiting = []
      var object = group.latest
      let previous = group.published
      var failure: StorageError?
      // Bytes the record carries (a small object's, `FileBackend`) are read here, under the lock
      // that compaction takes to move them.
      let carried: [UInt8]?
      do {
        carried = try backend.carriedBytes(previous)
      } catch {
        carried = nil
        failure = error
      }
      stripe.unlock()
      if failure == nil {
        do {
          object = try backend.commit(object, data: nil, previous: previous, carrying: carried)
        } catch {
          failure = error
        }
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
        endWrites(finished)
        stripe.lock()
        return
      }
      group.published = object
      group.latest.body = object.body
      stripe.unlock()
      for ticket in batch { ticket.completion(.success(ticket.object)) }
      endWrites(batch)
      stripe.lock()
    }
    stripe.groups[key] = nil
    stripe.condition.broadcast()
  }

  /// With the stripe locked: returns once the object has no metadata group, so a writer of
  /// another kind (new generation, delete) sees the object as it is on disk. A group nobody is
  /// writing yet (its writer is scheduled, perhaps at the end of this very thread's turn) is
  /// written here; one being written is waited for.
  func settleGroups(_ key: WriteStripe.Key, _ stripe: WriteStripe) {
    while let group = stripe.groups[key] {
      if group.writing { stripe.condition.wait() } else { drainGroup(key, stripe) }
    }
  }
}

/// Where the write of a metadata group runs when a change starts one. The change is answered
/// through its completion either way; what differs is the thread that writes.
public struct GroupWriter: Sendable {
  /// nil: the caller's thread, at once (a caller that blocks for the answer anyway).
  let schedule: (@Sendable (@escaping @Sendable () -> Void) -> Void)?

  /// A Dispatch worker: the write never runs on the caller's thread (an event loop's thread
  /// must not wait for an `fsync`).
  public static let worker = GroupWriter(schedule: { DispatchQueue.global().async(execute: $0) })

  /// The caller's own schedule, such as the end of its event loop's turn: every change made to
  /// the object before it runs shares the write, and nobody waits for a thread hand-off.
  /// `schedule` must run its work exactly once and must not run it before returning.
  public static func scheduled(_ schedule: @escaping @Sendable (@escaping @Sendable () -> Void) -> Void) -> GroupWriter {
    GroupWriter(schedule: schedule)
  }

  /// The caller's thread, which then blocks until the change is written.
  static let caller = GroupWriter(schedule: nil)
}
