import EmulatorSupport

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// The work handed to an event loop from other threads, and its stop flag: the part both loop
/// implementations share. `wake` pokes the loop's wake-up descriptor; it is called under the
/// lock and never after `stopped`, so it cannot reach a descriptor the stopped loop has closed.
final class LoopWorkQueue: @unchecked Sendable {
  // Invariant: `pending` and `stopped` are touched only under `lock`; `running` only on the
  // loop's thread; `thread` is written once, on the loop's thread, before it runs any work.
  /// A pthread mutex rather than `Mutex`: ThreadSanitizer understands it.
  private let lock = PosixLock()
  private var pending: [@Sendable () -> Void] = []
  private var stopped = false
  private let wake: @Sendable () -> Void
  /// The loop's thread, set once when it starts (before it runs any work, so before anything
  /// that could ask `isCurrentThread` from another thread has been handed out).
  private var thread: pthread_t?
  /// The work being run, swapped with `pending` (so neither array is reallocated); loop thread only.
  private var running: [@Sendable () -> Void] = []

  init(wake: @escaping @Sendable () -> Void) {
    self.wake = wake
  }

  /// Queues `work`, waking the loop when the queue was empty; dropped once stopped.
  func enqueue(_ work: @escaping @Sendable () -> Void) {
    lock.withLock {
      guard !stopped else { return }
      pending.append(work)
      if pending.count == 1 { wake() }
    }
  }

  /// Queues the stop itself, so work queued before it still runs.
  func stop() {
    enqueue { [self] in lock.withLock { stopped = true } }
  }

  var isStopped: Bool { lock.withLock { stopped } }

  /// On the loop's thread, after its wake-up descriptor was drained: runs what is queued.
  /// Returns whether the loop must end.
  func runPending() -> Bool {
    lock.withLock { swap(&pending, &running) }
    for item in running { item() }
    running.removeAll(keepingCapacity: true)
    return isStopped
  }

  /// Whether the caller runs on the loop's thread.
  var isCurrentThread: Bool {
    guard let thread else { return false }
    return pthread_equal(thread, pthread_self()) != 0
  }

  /// Starts a loop's thread (1 MiB of stack: a loop's work is shallow).
  func startThread(name: String, _ body: @escaping @Sendable () -> Void) {
    BackgroundThread.start(name: name, stackSize: 1 << 20) { [self] in
      self.thread = pthread_self()
      body()
    }
  }
}
