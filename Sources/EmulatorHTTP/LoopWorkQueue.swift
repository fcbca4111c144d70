import EmulatorSupport
import Synchronization

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
  // loop's thread; `threadID` is written once, on the loop's thread, before it runs any work.
  /// A pthread mutex rather than `Mutex`: ThreadSanitizer understands it.
  private let lock = PosixLock()
  private var pending: [@Sendable () -> Void] = []
  private var stopped = false
  private let wake: @Sendable () -> Void
  /// The loop's thread (`BackgroundThread.currentID`; 0 until it starts), set once when it
  /// starts, before it runs any work. An atomic: another thread may ask `isCurrentThread` while
  /// the loop's thread is starting (ThreadSanitizer found a test doing so).
  private let threadID = Atomic<UInt>(0)
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
    let id = threadID.load(ordering: .acquiring)
    return id != 0 && id == BackgroundThread.currentID()
  }

  /// Starts a loop's thread (1 MiB of stack: a loop's work is shallow).
  func startThread(name: String, _ body: @escaping @Sendable () -> Void) {
    BackgroundThread.start(name: name, stackSize: 1 << 20) { [self] in
      threadID.store(BackgroundThread.currentID(), ordering: .releasing)
      body()
    }
  }
}
