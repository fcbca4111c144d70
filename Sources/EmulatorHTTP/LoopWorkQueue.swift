import EmulatorSupport
import Synchronization

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// The work handed to an event loop from other threads, its end-of-turn work and its stop flag:
/// the part both loop implementations share. `wake` pokes the loop's wake-up descriptor; it is
/// called under the lock and never after `stopped`, so it cannot reach a descriptor the stopped
/// loop has closed.
///
/// A turn is one pass of the loop: the events one `epoll_wait` (or `poll`) returned, then
/// `finishTurn`, which runs the queued work and the end-of-turn work. Work the loop's own thread
/// queues needs no wake-up: the loop does not block while it has queued work.
final class LoopWorkQueue: @unchecked Sendable {
  // Invariant: `pending` and `stopped` are touched only under `lock`; `running`, `turnEnd` and
  // `turnEndRunning` only on the loop's thread; `threadID` is written once, on the loop's
  // thread, before it runs any work. (So the properties need no run-time exclusivity checks,
  // which cost more than the lock on every turn.)
  /// A pthread mutex rather than `Mutex`: ThreadSanitizer understands it.
  private let lock = PosixLock()
  @exclusivity(unchecked) private var pending: [@Sendable () -> Void] = []
  @exclusivity(unchecked) private var stopped = false
  /// Whether `pending` holds work: set under the lock with each append, read without it at the
  /// end of a turn (work queued from another thread after that read wakes the loop).
  private let hasPending = Atomic<Bool>(false)
  private let wake: @Sendable () -> Void
  /// The loop's thread (`BackgroundThread.currentID`; 0 until it starts), set once when it
  /// starts, before it runs any work. An atomic: another thread may ask `isCurrentThread` while
  /// the loop's thread is starting (ThreadSanitizer found a test doing so).
  private let threadID = Atomic<UInt>(0)
  /// The work being run, swapped with `pending` (so neither array is reallocated); loop thread only.
  @exclusivity(unchecked) private var running: [@Sendable () -> Void] = []
  /// Work for the end of the turn in progress (`afterTurn`); loop thread only.
  @exclusivity(unchecked) private var turnEnd: [@Sendable () -> Void] = []
  @exclusivity(unchecked) private var turnEndRunning: [@Sendable () -> Void] = []

  init(wake: @escaping @Sendable () -> Void) {
    self.wake = wake
  }

  /// Queues `work`, waking the loop when the queue was empty and the caller is another thread;
  /// dropped once stopped.
  func enqueue(_ work: @escaping @Sendable () -> Void) {
    let fromLoop = isCurrentThread
    lock.withLock {
      guard !stopped else { return }
      pending.append(work)
      hasPending.store(true, ordering: .releasing)
      if pending.count == 1 && !fromLoop { wake() }
    }
  }

  /// Runs `work` on the loop's thread once the events of this turn are handled (called on the
  /// loop's thread; from another thread it is queued as `enqueue` does). Work that many requests
  /// of one turn start once, such as a group write of their changes, goes here: each request
  /// joins it, and it runs when they have all been read.
  func afterTurn(_ work: @escaping @Sendable () -> Void) {
    guard isCurrentThread else { return enqueue(work) }
    turnEnd.append(work)
  }

  /// On the loop's thread at the end of each turn: runs the queued work once, then the
  /// end-of-turn work until none is left, then (when there was some: its replies) the queued
  /// work once more. Work queued meanwhile (of either kind: a reply run last may start the next
  /// pipelined request) waits for the next turn, whose wait for events must
  /// then not block (`busy`): a body stream that yields requeues itself, and must not keep the
  /// loop from its other connections. `stop`: the loop must end (`stop`'s work has run).
  func finishTurn() -> (stop: Bool, busy: Bool) {
    var stop = runQueuedOnce()
    if !turnEnd.isEmpty {
      repeat {
        swap(&turnEnd, &turnEndRunning)
        for item in turnEndRunning { item() }
        turnEndRunning.removeAll(keepingCapacity: true)
      } while !turnEnd.isEmpty
      stop = runQueuedOnce() || stop
    }
    return (stop, !turnEnd.isEmpty || hasPending.load(ordering: .acquiring))
  }

  /// Runs the work queued so far (none: no lock taken); returns whether the loop must end.
  private func runQueuedOnce() -> Bool {
    guard hasPending.load(ordering: .acquiring) else { return false }
    let stop = lock.withLock {
      swap(&pending, &running)
      hasPending.store(false, ordering: .relaxed)
      return stopped
    }
    for item in running { item() }
    running.removeAll(keepingCapacity: true)
    return stop
  }

  /// Queues the stop itself, so work queued before it still runs.
  func stop() {
    enqueue { [self] in
      lock.withLock {
        stopped = true
        // So the pass after this one takes the lock and sees `stopped`.
        hasPending.store(true, ordering: .relaxed)
      }
    }
  }

  var isStopped: Bool { lock.withLock { stopped } }

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
