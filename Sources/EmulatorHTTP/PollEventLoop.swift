#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// One thread waiting in poll(2) (POSIX: Linux, macOS and the BSDs), woken through a pipe: the
/// portable event loop. Each wait hands the kernel the whole descriptor list, so it costs more
/// per wake-up than epoll with many idle connections; the behaviour is the same.
///
/// Invariant: `registrations` is touched only on the loop's thread; the queued work is guarded
/// by `LoopWorkQueue`'s lock. That is what makes the `@unchecked Sendable` sound.
final class PollEventLoop: EventLoop, @unchecked Sendable {
  private struct Registration {
    let handler: EventLoopHandler
    var events: Int16
  }

  private let wakeRead: Int32
  private let wakeWrite: Int32
  let work: LoopWorkQueue
  let buffers = LoopBuffers()
  private var registrations: [Int32: Registration] = [:]

  init(name: String) {
    var ends: [Int32] = [-1, -1]
    precondition(pipe(&ends) == 0, "pipe failed: errno \(errno)")
    for fd in ends {
      _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
      _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
    }
    wakeRead = ends[0]
    let wakeWrite = ends[1]
    self.wakeWrite = wakeWrite
    work = LoopWorkQueue {
      var byte: UInt8 = 1
      _ = write(wakeWrite, &byte, 1)
    }
    work.startThread(name: name) { [self] in run() }
  }

  func register(_ fd: Int32, _ handler: EventLoopHandler, reading: Bool, writing: Bool) -> Bool {
    guard fd >= 0 else { return false }
    registrations[fd] = Registration(handler: handler, events: Self.events(reading: reading, writing: writing))
    return true
  }

  func update(_ fd: Int32, reading: Bool, writing: Bool) {
    registrations[fd]?.events = Self.events(reading: reading, writing: writing)
  }

  func deregister(_ fd: Int32) {
    registrations[fd] = nil
  }

  private static func events(reading: Bool, writing: Bool) -> Int16 {
    (reading ? Int16(POLLIN) : 0) | (writing ? Int16(POLLOUT) : 0)
  }

  private func run() {
    var fds: [pollfd] = []
    // Whether work is queued that the loop's own thread queued (no wake-up was sent for it).
    var busy = false
    while true {
      fds.removeAll(keepingCapacity: true)
      fds.append(pollfd(fd: wakeRead, events: Int16(POLLIN), revents: 0))
      for (fd, registration) in registrations {
        fds.append(pollfd(fd: fd, events: registration.events, revents: 0))
      }
      let count = poll(&fds, nfds_t(fds.count), busy ? 0 : -1)
      if count < 0 {
        if errno == EINTR { continue }
        fatalError("poll failed: errno \(errno)")
      }
      for entry in fds.dropFirst() where entry.revents != 0 {
        // A handler may close and deregister another descriptor meanwhile, and a new one may
        // take its number: look it up each time and report only what it asked for (plus errors).
        guard let registration = registrations[entry.fd] else { continue }
        let bits = entry.revents
        let wanted = registration.events
        let failed = bits & Int16(POLLERR | POLLHUP | POLLNVAL) != 0
        let readable = bits & Int16(POLLIN) != 0 && wanted & Int16(POLLIN) != 0
        let writable = bits & Int16(POLLOUT) != 0 && wanted & Int16(POLLOUT) != 0
        guard readable || writable || failed else { continue }
        registration.handler.handleEvents(readable: readable, writable: writable, failed: failed)
      }
      if fds[0].revents != 0 {
        var drain = [UInt8](repeating: 0, count: 64)
        while read(wakeRead, &drain, drain.count) > 0 {}
      }
      let (stop, more) = work.finishTurn()
      if stop { break }
      busy = more
    }
    close(wakeRead)
    close(wakeWrite)
  }
}
