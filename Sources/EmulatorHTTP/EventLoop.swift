import Dispatch

/// What an event loop calls when a registered descriptor is ready. Called on the loop's thread.
protocol EventLoopHandler: AnyObject {
  func handleEvents(readable: Bool, writable: Bool, failed: Bool)
}

/// One thread that serves the descriptors registered with it, with level-triggered readiness:
/// the connections it serves are touched on that thread only, so their state needs no lock.
/// `register`, `update` and `deregister` are called on the loop's thread; `execute`,
/// `schedule` and `stop` from any thread.
///
/// Two implementations (`EventLoopKind`): `EpollEventLoop` (Linux; the measured hot path) and
/// `PollEventLoop` (poll(2), on every POSIX system).
protocol EventLoop: AnyObject, Sendable {
  /// The work handed to the loop from any thread (the loop's wake-up descriptor behind it).
  var work: LoopWorkQueue { get }
  /// The read buffer and spare response buffer its connections share.
  var buffers: LoopBuffers { get }
  /// Starts delivering readiness of `fd` to `handler`; false when the descriptor cannot be watched.
  func register(_ fd: Int32, _ handler: EventLoopHandler, reading: Bool, writing: Bool) -> Bool
  /// Changes which readiness of `fd` is wanted.
  func update(_ fd: Int32, reading: Bool, writing: Bool)
  /// Forgets `fd` (before it is closed, so its number can be reused).
  func deregister(_ fd: Int32)
}

extension EventLoop {
  /// Runs `work` on the loop's thread, after the events being handled now; dropped after `stop`.
  func execute(_ work: @escaping @Sendable () -> Void) { self.work.enqueue(work) }

  /// Ends the thread once the work queued before this has run; the descriptors it still watches
  /// are the caller's to close.
  func stop() { work.stop() }

  /// Whether `stop` has taken effect.
  var isStopped: Bool { work.isStopped }

  /// Runs `work` on the loop's thread after `seconds` (Dispatch keeps the timers).
  func schedule(after seconds: Double, _ work: @escaping @Sendable () -> Void) {
    DispatchQueue.global().asyncAfter(deadline: .now() + seconds) { [self] in execute(work) }
  }
}

/// Makes a loop of the given kind, running on a new thread called `name`.
func makeEventLoop(_ kind: EventLoopKind, name: String) -> any EventLoop {
  #if canImport(Glibc)
    if kind == .epoll { return EpollEventLoop(name: name) }
  #endif
  return PollEventLoop(name: name)
}
