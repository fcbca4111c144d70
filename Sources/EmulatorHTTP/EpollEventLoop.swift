#if canImport(Glibc)
  import CEpoll
  import Glibc

  /// One thread waiting on one epoll set (Linux; the default there).
  ///
  /// Why not a Dispatch source per connection (shared/docs/DISPATCH.md §1): on this machine a
  /// source costs, per request, two `epoll_ctl`, an `ioctl` and a futex hand-off between
  /// Dispatch's event thread and a worker; with epoll directly a keep-alive request costs one
  /// `read` and one `write` (and an `epoll_wait` shared by every connection that was ready at
  /// once). Dispatch still runs the blocking lanes and the timers.
  ///
  /// Invariant: `handlers` is touched only on the loop's thread; the queued work is guarded by
  /// `LoopWorkQueue`'s lock. That is what makes the `@unchecked Sendable` sound.
  final class EpollEventLoop: EventLoop, @unchecked Sendable {
    private let epollFD: Int32
    private let wakeFD: Int32
    let work: LoopWorkQueue
    let buffers = LoopBuffers()
    /// Indexed by descriptor (descriptors are small and dense): no hashing per event.
    @exclusivity(unchecked) private var handlers: [EventLoopHandler?] = []

    /// The `data` of the wake-up descriptor's events (a file descriptor is never negative).
    private static let wakeToken = UInt64.max

    init(name: String) {
      epollFD = cepoll_create()
      let wakeFD = cepoll_eventfd()
      precondition(epollFD >= 0 && wakeFD >= 0, "epoll_create1/eventfd failed: errno \(errno)")
      self.wakeFD = wakeFD
      work = LoopWorkQueue {
        var one: UInt64 = 1
        _ = withUnsafeBytes(of: &one) { write(wakeFD, $0.baseAddress, 8) }
      }
      _ = cepoll_control(epollFD, 0, wakeFD, cepoll_in, Self.wakeToken)
      work.startThread(name: name) { [self] in run() }
    }

    func register(_ fd: Int32, _ handler: EventLoopHandler, reading: Bool, writing: Bool) -> Bool {
      guard fd >= 0 else { return false }
      if Int(fd) >= handlers.count {
        handlers += repeatElement(EventLoopHandler?.none, count: Int(fd) + 1 - handlers.count)
      }
      handlers[Int(fd)] = handler
      return cepoll_control(epollFD, 0, fd, Self.mask(reading: reading, writing: writing), UInt64(fd)) == 0
    }

    func update(_ fd: Int32, reading: Bool, writing: Bool) {
      _ = cepoll_control(epollFD, 1, fd, Self.mask(reading: reading, writing: writing), UInt64(fd))
    }

    func deregister(_ fd: Int32) {
      _ = cepoll_control(epollFD, 2, fd, 0, 0)
      if fd >= 0 && Int(fd) < handlers.count { handlers[Int(fd)] = nil }
    }

    private static func mask(reading: Bool, writing: Bool) -> UInt32 {
      (reading ? cepoll_in : 0) | (writing ? cepoll_out : 0)
    }

    private func run() {
      let capacity = 256
      var events = [UInt32](repeating: 0, count: capacity)
      var data = [UInt64](repeating: 0, count: capacity)
      // Whether work is queued that the loop's own thread queued (no wake-up was sent for it).
      var busy = false
      while true {
        let count = cepoll_wait(epollFD, &events, &data, Int32(capacity), busy ? 0 : -1)
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
          let fd = Int(truncatingIfNeeded: data[index])
          guard fd >= 0, fd < handlers.count, let handler = handlers[fd] else { continue }
          let bits = events[index]
          handler.handleEvents(
            readable: bits & cepoll_in != 0, writable: bits & cepoll_out != 0,
            failed: bits & (cepoll_err | cepoll_hup) != 0)
        }
        if wake {
          var counter: UInt64 = 0
          _ = withUnsafeMutableBytes(of: &counter) { read(wakeFD, $0.baseAddress, 8) }
        }
        let (stop, more) = work.finishTurn()
        if stop { break }
        busy = more
      }
      close(wakeFD)
      close(epollFD)
    }
  }
#endif
