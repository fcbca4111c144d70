import CEpoll
import Dispatch
import Foundation

#if canImport(Glibc)
  import Glibc
#endif

/// What an event loop calls when a registered descriptor is ready. Called on the loop's thread.
protocol EventLoopHandler: AnyObject {
  func handleEvents(readable: Bool, writable: Bool, failed: Bool)
}

/// One thread waiting on one epoll set: the connections registered with it are served on that
/// thread only (their state needs no lock), with level-triggered readiness.
///
/// Why not a Dispatch source per connection (shared/docs/DISPATCH.md §1): on this machine a
/// source costs, per request, two `epoll_ctl`, an `ioctl` and a futex hand-off between Dispatch's
/// event thread and a worker; with epoll directly a keep-alive request costs one `read` and one
/// `write` (and an `epoll_wait` shared by every connection that was ready at once). Dispatch
/// still runs the blocking lanes and the timers.
///
/// Invariant: `handlers` is touched only on the loop's thread; `pending` only under `lock`. That
/// is what makes the `@unchecked Sendable` sound.
final class EventLoop: @unchecked Sendable {
  private let epollFD: Int32
  private let wakeFD: Int32
  private let lock = NSLock()
  private var pending: [@Sendable () -> Void] = []
  private var handlers: [Int32: EventLoopHandler] = [:]
  private var thread: Thread?
  private var stopped = false

  /// The `data` of the wake-up descriptor's events (a file descriptor is never negative).
  private static let wakeToken = UInt64.max

  init(name: String) {
    epollFD = cepoll_create()
    wakeFD = cepoll_eventfd()
    precondition(epollFD >= 0 && wakeFD >= 0, "epoll_create1/eventfd failed: errno \(errno)")
    _ = cepoll_control(epollFD, 0, wakeFD, cepoll_in, Self.wakeToken)
    let thread = Thread { [self] in run() }
    thread.name = name
    thread.stackSize = 1 << 20
    self.thread = thread
    thread.start()
  }

  /// Runs `work` on the loop's thread, after the events being handled now.
  /// After `stop`, work is dropped. (The wake-up is written under the lock, so no write can reach
  /// the eventfd once the stopped loop has closed it.)
  func execute(_ work: @escaping @Sendable () -> Void) {
    lock.withLock {
      guard !stopped else { return }
      pending.append(work)
      if pending.count == 1 {
        var one: UInt64 = 1
        _ = withUnsafeBytes(of: &one) { write(wakeFD, $0.baseAddress, 8) }
      }
    }
  }

  /// Ends the thread once the work queued before this has run; the descriptors it still watches
  /// are the caller's to close.
  func stop() {
    execute { [self] in lock.withLock { stopped = true } }
  }

  /// Whether `stop` has taken effect.
  var isStopped: Bool { lock.withLock { stopped } }

  /// Runs `work` on the loop's thread after `seconds`.
  func schedule(after seconds: Double, _ work: @escaping @Sendable () -> Void) {
    DispatchQueue.global().asyncAfter(deadline: .now() + seconds) { [self] in execute(work) }
  }

  /// On the loop's thread: starts delivering readiness of `fd` to `handler`.
  func register(_ fd: Int32, _ handler: EventLoopHandler, reading: Bool, writing: Bool) -> Bool {
    handlers[fd] = handler
    return cepoll_control(epollFD, 0, fd, Self.mask(reading: reading, writing: writing), UInt64(fd)) == 0
  }

  /// On the loop's thread: changes which readiness of `fd` is wanted.
  func update(_ fd: Int32, reading: Bool, writing: Bool) {
    _ = cepoll_control(epollFD, 1, fd, Self.mask(reading: reading, writing: writing), UInt64(fd))
  }

  /// On the loop's thread: forgets `fd` (before it is closed, so its number can be reused).
  func deregister(_ fd: Int32) {
    _ = cepoll_control(epollFD, 2, fd, 0, 0)
    handlers[fd] = nil
  }

  private static func mask(reading: Bool, writing: Bool) -> UInt32 {
    (reading ? cepoll_in : 0) | (writing ? cepoll_out : 0)
  }

  private func run() {
    let capacity = 256
    var events = [UInt32](repeating: 0, count: capacity)
    var data = [UInt64](repeating: 0, count: capacity)
    while true {
      let count = cepoll_wait(epollFD, &events, &data, Int32(capacity), -1)
      if count < 0 {
        if errno == EINTR { continue }
        fatalError("epoll_wait failed: errno \(errno)")
      }
      var wake = false
      for index in 0..<Int(count) {
        if data[index] == Self.wakeToken {
          wake = true
          continue
        }
        // A handler may close and deregister another descriptor meanwhile: look it up each time.
        guard let handler = handlers[Int32(truncatingIfNeeded: data[index])] else { continue }
        let bits = events[index]
        handler.handleEvents(
          readable: bits & cepoll_in != 0, writable: bits & cepoll_out != 0,
          failed: bits & (cepoll_err | cepoll_hup) != 0)
      }
      if wake {
        runPending()
        if lock.withLock({ stopped }) { break }
      }
    }
    close(wakeFD)
    close(epollFD)
  }

  private func runPending() {
    var counter: UInt64 = 0
    _ = withUnsafeMutableBytes(of: &counter) { read(wakeFD, $0.baseAddress, 8) }
    let work = lock.withLock {
      defer { pending.removeAll(keepingCapacity: true) }
      return pending
    }
    for item in work { item() }
  }
}
