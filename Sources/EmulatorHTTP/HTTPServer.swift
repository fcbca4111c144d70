import Dispatch
import EmulatorSupport
import Synchronization

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// An HTTP/1.1 server over non-blocking POSIX sockets, an event loop (epoll or poll) and Dispatch.
///
/// Design (measured in shared/docs/DISPATCH.md): a Dispatch source accepts; each connection is
/// served by one of a few event loops (one thread each, one per core by default; epoll on Linux,
/// poll(2) when `configuration.eventLoop` is `.portable`), so idle connections cost no thread and a keep-alive request costs one `read` and one
/// `write`. Requests answered from memory are answered on the loop's thread; handlers that do file
/// I/O run on a fixed set of serial Dispatch "blocking lanes", and their responses hop back to the
/// connection's loop.
public final class HTTPServer: @unchecked Sendable {
  // Invariant: `listener`, `listenerSuspended` and `connections` are touched only under `lock`.
  public let configuration: HTTPServerConfiguration
  let handler: any HTTPHandler
  /// Created by `start`.
  private var loops: [any EventLoop] = []
  private let nextLoop = Atomic<Int>(0)
  private let acceptQueue = DispatchQueue(label: "storage-emulator.accept", target: .global())
  private let lanes: [DispatchQueue]
  private let nextLane = Atomic<Int>(0)
  private let nextConnectionID = Atomic<Int>(0)
  /// A pthread mutex rather than `Mutex`: ThreadSanitizer understands it.
  private let lock = PosixLock()
  private var listener: DispatchSourceRead?
  private var listenerFD: Int32 = -1
  private var listenerSuspended = false
  private var connections: [Int: HTTPConnection] = [:]
  private var connectionCap = 0
  private var stopping = false

  public init(configuration: HTTPServerConfiguration, handler: any HTTPHandler) {
    self.configuration = configuration
    self.handler = handler
    self.lanes = (0..<max(1, configuration.blockingLanes)).map {
      DispatchQueue(label: "storage-emulator.lane\($0)")
    }
  }

  /// The number of open connections.
  public var connectionCount: Int { lock.withLock { connections.count } }

  /// Binds, listens and starts accepting. Returns the bound port.
  public func start() throws(SocketError) -> Int {
    if let problem = configuration.eventLoop.problem { throw SocketError(problem, code: 0) }
    signal(SIGPIPE, SIG_IGN)
    connectionCap = min(configuration.maxConnections, Self.raiseFileLimit() - 64)
    let fd = try Self.bindListener(host: configuration.host, port: configuration.port)
    var address = sockaddr_storage()
    var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
    let port = withUnsafeMutablePointer(to: &address) { pointer -> Int in
      _ = pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
      if pointer.pointee.ss_family == sa_family_t(AF_INET6) {
        return pointer.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) {
          Int(UInt16(bigEndian: $0.pointee.sin6_port))
        }
      }
      return pointer.withMemoryRebound(to: sockaddr_in.self, capacity: 1) {
        Int(UInt16(bigEndian: $0.pointee.sin_port))
      }
    }
    loops = (0..<max(1, configuration.eventLoops)).map {
      makeEventLoop(configuration.eventLoop, name: "storage-emulator.loop\($0)")
    }
    let source = DispatchSource.makeReadSource(fileDescriptor: fd, queue: acceptQueue)
    source.setEventHandler { [self] in acceptPending() }
    source.setCancelHandler { _ = close(fd) }
    lock.withLock {
      listener = source
      listenerFD = fd
    }
    source.activate()
    return port
  }

  /// Stops accepting, lets in-flight requests finish for up to `gracePeriod` seconds, then closes
  /// every connection. Blocks the caller until done.
  public func shutdown(gracePeriod: Double = 5) {
    let open: [HTTPConnection] = lock.withLock {
      stopping = true
      if let listener {
        listener.cancel()
        if listenerSuspended { listener.resume() }
      }
      listener = nil
      return Array(connections.values)
    }
    for connection in open { connection.loop.execute { connection.closeWhenIdle() } }
    let deadline = DispatchTime.now() + gracePeriod
    while connectionCount > 0 && DispatchTime.now() < deadline { usleep(10_000) }
    let remaining: [HTTPConnection] = lock.withLock { Array(connections.values) }
    for connection in remaining { connection.loop.execute { connection.close() } }
    let hardDeadline = DispatchTime.now() + 1
    while connectionCount > 0 && DispatchTime.now() < hardDeadline { usleep(10_000) }
    for loop in loops { loop.stop() }
  }

  private let spoolCounter = Atomic<Int>(0)

  /// A fresh path for a spooled request body.
  func spoolPath() -> String {
    let n = spoolCounter.wrappingAdd(1, ordering: .relaxed).oldValue
    return configuration.spoolDirectory + "/spool-\(getpid())-\(n)-\(UInt32.random(in: 0...UInt32.max))"
  }

  func lane() -> DispatchQueue {
    lanes[nextLane.wrappingAdd(1, ordering: .relaxed).oldValue % lanes.count]
  }

  private func acceptPending() {
    for _ in 0..<256 {
      let fd = lock.withLock { listenerFD }
      let client = accept(fd, nil, nil)
      if client < 0 {
        let code = errno
        if code == EINTR || code == ECONNABORTED { continue }
        if code == EMFILE || code == ENFILE || code == ENOBUFS || code == ENOMEM {
          // Out of descriptors: pause accepting briefly instead of spinning on a readable listener.
          pauseAccepting(for: 0.1)
        }
        return
      }
      let full: Bool = lock.withLock { connections.count >= connectionCap }
      if full {
        refuse(client)
        continue
      }
      let id = nextConnectionID.wrappingAdd(1, ordering: .relaxed).oldValue
      let loop = loops[nextLoop.wrappingAdd(1, ordering: .relaxed).oldValue % loops.count]
      let connection = HTTPConnection(id: id, fd: client, server: self, loop: loop)
      lock.withLock { connections[id] = connection }
      loop.execute { connection.start() }
    }
  }

  /// Past the connection cap: one 503 with `Retry-After`, then close (the descriptor reserve
  /// below RLIMIT_NOFILE leaves room for this).
  private func refuse(_ fd: Int32) {
    let message = "Too many open connections (the cap is \(connectionCap)); retry later."
    var response = handler.errorResponse(for: HTTPParseError(503, message))
    response.headers.set("retry-after", "1")
    let bytes = response.encoded(close: true)
    _ = bytes.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Platform.sendNoWaitFlags) }
    Platform.shutdownWrite(fd)
    Platform.close(fd)
  }

  private func pauseAccepting(for delay: Double) {
    lock.withLock {
      guard let listener, !listenerSuspended else { return }
      listener.suspend()
      listenerSuspended = true
    }
    acceptQueue.asyncAfter(deadline: .now() + delay) { [self] in resumeAccepting() }
  }

  private func resumeAccepting() {
    lock.withLock {
      guard let listener, listenerSuspended, !stopping else { return }
      listener.resume()
      listenerSuspended = false
    }
  }

  func connectionDidClose(_ id: Int) {
    lock.withLock { _ = connections.removeValue(forKey: id) }
  }

  // MARK: Socket set-up

  /// Raises the soft descriptor limit to the hard one and returns the result.
  private static func raiseFileLimit() -> Int {
    var limit = rlimit()
    guard getrlimit(Platform.fileLimitResource, &limit) == 0 else { return 1024 }
    if limit.rlim_cur < limit.rlim_max {
      limit.rlim_cur = limit.rlim_max
      _ = setrlimit(Platform.fileLimitResource, &limit)
      _ = getrlimit(Platform.fileLimitResource, &limit)
    }
    return Int(clamping: limit.rlim_cur)
  }

  private static func bindListener(host: String, port: Int) throws(SocketError) -> Int32 {
    var hints = addrinfo()
    hints.ai_family = AF_UNSPEC
    hints.ai_socktype = Platform.streamSocket
    hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV
    var result: UnsafeMutablePointer<addrinfo>?
    let status = getaddrinfo(host, String(port), &hints, &result)
    guard status == 0, let info = result else {
      throw SocketError("getaddrinfo(\(host))", code: status == EAI_SYSTEM ? errno : EADDRNOTAVAIL)
    }
    defer { freeaddrinfo(info) }
    let fd = socket(info.pointee.ai_family, Platform.streamSocket, 0)
    guard fd >= 0 else { throw SocketError("socket") }
    var one: Int32 = 1
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
    guard bind(fd, info.pointee.ai_addr, info.pointee.ai_addrlen) == 0 else {
      let error = SocketError("bind(\(host):\(port))")
      close(fd)
      throw error
    }
    guard listen(fd, SOMAXCONN) == 0 else {
      let error = SocketError("listen")
      close(fd)
      throw error
    }
    _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
    _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
    return fd
  }
}
