#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// A pthread mutex: the lock of the state threads share, in place of Foundation's `NSLock` (the
/// server's modules leave full Foundation out).
///
/// A pthread mutex rather than `Synchronization.Mutex`: ThreadSanitizer understands pthread
/// mutexes but not `Mutex`'s futex, so with `Mutex` every access it guards is reported as a race
/// and `scripts/sanitizers` could not tell real races from those.
public final class PosixLock: @unchecked Sendable {
  /// On the heap, never moved: a pthread mutex must keep its address.
  @usableFromInline let mutex: UnsafeMutablePointer<pthread_mutex_t>

  public init() {
    mutex = .allocate(capacity: 1)
    mutex.initialize(to: pthread_mutex_t())
    let result = pthread_mutex_init(mutex, nil)
    precondition(result == 0, "pthread_mutex_init failed (\(result))")
  }

  deinit {
    pthread_mutex_destroy(mutex)
    mutex.deallocate()
  }

  @inlinable
  public func lock() {
    let result = pthread_mutex_lock(mutex)
    assert(result == 0, "pthread_mutex_lock failed (\(result))")
  }

  @inlinable
  public func unlock() {
    let result = pthread_mutex_unlock(mutex)
    assert(result == 0, "pthread_mutex_unlock failed (\(result))")
  }

  /// Runs `body` with the lock held.
  @inlinable
  public func withLock<Result, Failure: Error>(_ body: () throws(Failure) -> Result) throws(Failure) -> Result {
    lock()
    defer { unlock() }
    return try body()
  }
}

/// A pthread mutex with its condition variable, in place of Foundation's `NSCondition`: `wait`
/// releases the lock while it sleeps and holds it again when it returns (which may be spurious:
/// callers wait in a loop on their own predicate).
public final class PosixCondition: @unchecked Sendable {
  @usableFromInline let mutex: UnsafeMutablePointer<pthread_mutex_t>
  @usableFromInline let condition: UnsafeMutablePointer<pthread_cond_t>

  public init() {
    mutex = .allocate(capacity: 1)
    mutex.initialize(to: pthread_mutex_t())
    condition = .allocate(capacity: 1)
    condition.initialize(to: pthread_cond_t())
    let locked = pthread_mutex_init(mutex, nil)
    let waited = pthread_cond_init(condition, nil)
    precondition(locked == 0 && waited == 0, "pthread_mutex_init/pthread_cond_init failed")
  }

  deinit {
    pthread_cond_destroy(condition)
    pthread_mutex_destroy(mutex)
    condition.deallocate()
    mutex.deallocate()
  }

  @inlinable
  public func lock() { pthread_mutex_lock(mutex) }

  @inlinable
  public func unlock() { pthread_mutex_unlock(mutex) }

  /// With the lock held: sleeps until `signal` or `broadcast` (or spuriously).
  @inlinable
  public func wait() { pthread_cond_wait(condition, mutex) }

  /// Wakes one waiter.
  @inlinable
  public func signal() { pthread_cond_signal(condition) }

  /// Wakes every waiter.
  @inlinable
  public func broadcast() { pthread_cond_broadcast(condition) }
}
