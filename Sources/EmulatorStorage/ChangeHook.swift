import Synchronization

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
