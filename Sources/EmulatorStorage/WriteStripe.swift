import EmulatorSupport

/// A lock shared by the objects whose names hash to it, and the metadata writes of those objects
/// that are being committed as groups.
///
/// Group commit: metadata changes to one object are serialised (each is checked against, and
/// applied to, the newest accepted version), but they need not each wait for their own record
/// write. While one record write is in progress, later changes queue as tickets; when it ends,
/// the writer (the thread the first change scheduled: a Dispatch worker, or the end of its event
/// loop's turn; or a thread that would otherwise wait for the group) writes the newest version
/// once for the whole queue, and every change in it is acknowledged only after
/// that write. So each acknowledged change is on disk (with `--fsync`:
/// synced), readers see only written versions, and N concurrent changes cost far fewer than N
/// writes.
///
/// Invariant: `groups` and every `MetadataGroup` field are touched only while `condition` is
/// locked; that is what makes the `@unchecked Sendable` sound. Each access is a read or a
/// write that calls nothing, so none can overlap another: they skip the run-time exclusivity
/// check (six accesses on every metadata change).
final class WriteStripe: @unchecked Sendable {
  struct Key: Hashable {
    let bucket: String
    let name: ObjectKey
    /// The bucket and the name hashed once: a change looks its key up five or six times (its
    /// stripe, the group table), and hashing both strings each time cost ~2,500 instructions.
    let hash: Int

    init(bucket: String, name: ObjectKey) {
      self.bucket = bucket
      self.name = name
      var hasher = Hasher()
      hasher.combine(bucket)
      hasher.combine(name)
      hash = hasher.finalize()
    }

    static func == (lhs: Key, rhs: Key) -> Bool {
      lhs.hash == rhs.hash && lhs.bucket == rhs.bucket && lhs.name == rhs.name
    }

    func hash(into hasher: inout Hasher) { hasher.combine(hash) }
  }

  /// One metadata change waiting for a group write, and who to tell when it is written.
  struct Ticket {
    /// The version this change produced (for a change found unneeded: the newest accepted one).
    let object: ObjectMetadata
    /// What `beginWrite` returned for this change.
    let phase: Int
    let completion: @Sendable (Result<ObjectMetadata, StorageError>) -> Void
  }

  /// The metadata writes of one object while any is in progress.
  final class MetadataGroup {
    /// The newest accepted version: every queued change applied.
    @exclusivity(unchecked) var latest: ObjectMetadata
    /// The version on disk and in the index.
    @exclusivity(unchecked) var published: ObjectMetadata
    @exclusivity(unchecked) var waiting: [Ticket] = []
    /// A thread has claimed the group and writes it until its queue is empty (see
    /// `ObjectStore.drainGroup`); until then whoever gets to it first may.
    @exclusivity(unchecked) var writing = false

    init(latest: ObjectMetadata, published: ObjectMetadata) {
      self.latest = latest
      self.published = published
    }
  }

  let condition = PosixCondition()
  @exclusivity(unchecked) var groups: [Key: MetadataGroup] = [:]

  func lock() { condition.lock() }
  func unlock() { condition.unlock() }
}
