import Synchronization

/// What happened to an object, in the terms of Cloud Storage's notifications.
public enum StoreChangeKind: String, Sendable {
  /// A new generation was written (upload, copy, compose, import, seed).
  case finalized
  /// The live object was deleted.
  case deleted
  /// Its metadata changed (PATCH, PUT, download tokens): one per new metageneration.
  case metadataUpdated
}

public struct StoreChange: Sendable {
  public var kind: StoreChangeKind
  /// The object after the change (for `deleted`, as it was).
  public var object: ObjectMetadata

  public init(kind: StoreChangeKind, object: ObjectMetadata) {
    self.kind = kind
    self.object = object
  }
}

/// Observers of the store's changes (the web UI's live updates, webhooks). Called on the writing
/// thread while the object's write lock is held, so the changes of one object arrive in order;
/// an observer must only hand the change on (queue it), never block. With no observer a change
/// costs one atomic load.
public final class ChangeHook: Sendable {
  private let observers = Locked<[@Sendable (StoreChange) -> Void]>([])
  private let active = Atomic<Bool>(false)

  public init() {}

  public func add(_ observer: @escaping @Sendable (StoreChange) -> Void) {
    observers.withLock { $0.append(observer) }
    active.store(true, ordering: .releasing)
  }

  func emit(_ kind: StoreChangeKind, _ object: ObjectMetadata) {
    guard active.load(ordering: .acquiring) else { return }
    let change = StoreChange(kind: kind, object: object)
    for observer in observers.withLock({ $0 }) { observer(change) }
  }
}
