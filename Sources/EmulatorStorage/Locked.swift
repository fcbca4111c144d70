import Dispatch
import EmulatorSupport

/// A value behind a `PosixLock` (a pthread mutex), with the `withLock` shape of `Synchronization.Mutex`.
///
/// Used instead of `Mutex` for shared state: ThreadSanitizer understands pthread mutexes (which
/// `PosixLock` is) but not `Mutex`'s futex, so with `Mutex` every access it guards is reported as a
/// race and `scripts/sanitizers` could not tell real races from those. Uncontended, the two cost
/// about the same here.
public final class Locked<Value: Sendable>: @unchecked Sendable {
  // Invariant: `value` is touched only while `lock` is held. The lock is not recursive, so a
  // second access to `value` inside `withLock` would deadlock before it could overlap the
  // first: the run-time exclusivity check (~65 instructions a call) could never fire.
  private let lock = PosixLock()
  @exclusivity(unchecked) private var value: Value

  public init(_ value: Value) {
    self.value = value
  }

  public func withLock<Result, Failure: Error>(
    _ body: (inout Value) throws(Failure) -> Result
  ) throws(Failure) -> Result {
    lock.lock()
    defer { lock.unlock() }
    return try body(&value)
  }
}

/// The blocking form of a call that answers through a callback: runs `start`, which must call
/// its argument exactly once (on any thread, or at once), and returns what it was called with.
public func waitForCallback<Value: Sendable>(_ start: (@escaping @Sendable (Value) -> Void) -> Void) -> Value {
  let done = DispatchSemaphore(value: 0)
  let outcome = Locked<Value?>(nil)
  start { value in
    outcome.withLock { $0 = value }
    done.signal()
  }
  done.wait()
  return outcome.withLock { $0! }
}
