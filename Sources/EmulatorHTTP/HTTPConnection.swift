import Dispatch

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// One accepted socket: reads requests, hands them to the handler one at a time and writes the
/// responses in request order (the swift-nio pipelining rule). What it is doing is `state`, a
/// `ConnectionState` whose one table holds the legal transitions; this class does the I/O.
///
/// Invariant: every `var` of this class is read and written only on `loop`'s thread (readiness is
/// delivered there, and every closure that touches it is sent there with `loop.execute`). That is
/// what makes the `@unchecked Sendable` sound; the compiler does not check it. The request,
/// response and state values are `@exclusivity(unchecked)`: their mutating methods call no
/// closure that could reach this connection, so no access to one can overlap another, and the
/// run-time check (~65 instructions an access, ten on every request) guards nothing.
///
/// Pipelined requests wait in the decoder (at most about 1 MiB of them while one is in flight;
/// past that, and while a response is being written, reading stops).
final class HTTPConnection: @unchecked Sendable, EventLoopHandler {
  let id: Int
  let fd: Int32
  let loop: any EventLoop
  private let server: HTTPServer
  @exclusivity(unchecked) private var decoder: HTTPRequestDecoder
  @exclusivity(unchecked) private(set) var state = ConnectionState()
  @exclusivity(unchecked) private var writer: ResponseWriter
  /// Where a large request body is being written.
  @exclusivity(unchecked) private var spool = RequestSpool()
  /// The readiness the loop was last asked for (a system call only when it changes).
  @exclusivity(unchecked) private var registered = ConnectionState.Interest(reading: true, writing: false)
  /// `process` is on the stack: a re-entrant call (a response answered inline completes and
  /// flushes while its loop runs) returns at once, so pipelined requests never nest.
  private var processing = false
  private var deadlineArmed = false
  private var lastProgress = DispatchTime.now()
  /// A deferred request's `work` is running on this thread; its reply, if it came meanwhile.
  private var awaitingInlineReply = false
  private var inlineReply: (@Sendable () -> HTTPResponse)?
  /// When the first byte of the current request head arrived (slowloris deadline).
  private var headStarted: DispatchTime?

  init(id: Int, fd: Int32, server: HTTPServer, loop: any EventLoop) {
    self.id = id
    self.fd = fd
    self.server = server
    self.loop = loop
    self.writer = ResponseWriter(buffers: loop.buffers)
    self.decoder = HTTPRequestDecoder(limits: server.configuration.limits)
    self.decoder.spoolThreshold = server.configuration.spoolThresholdBytes
  }

  func start() {
    _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
    _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
    var one: Int32 = 1
    setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
    guard loop.register(fd, self, reading: registered.reading, writing: registered.writing) else {
      close()
      return
    }
    touch()
  }

  func handleEvents(readable canRead: Bool, writable canWrite: Bool, failed: Bool) {
    if registered.writing && (canWrite || failed) { flush() }
    guard state.phase != .closed else { return }
    if registered.reading && (canRead || failed) {
      readable()
    } else if failed && !registered.writing {
      // The peer is gone (reset) while nothing is read or written: level-triggered, this would
      // be reported again and again.
      close()
    }
  }

  // MARK: Reading

  private func readable() {
    let lingering = state.phase == .lingering
    let buffer = writer.buffers.read
    let count = read(fd, buffer.baseAddress, buffer.count)
    if count > 0 && !lingering {
      decoder.feed(UnsafeRawBufferPointer(rebasing: buffer[0..<count]))
    }
    if count > 0 {
      if lingering { return }
      if decoder.isReadingBody {
        touch()
      } else if headStarted == nil {
        headStarted = .now()
      }
      process()
    } else if count == 0 {
      // Everything complete was decoded as it arrived: with nothing in progress, there is
      // nothing left to answer.
      if state.phase == .reading || lingering {
        close()
      } else {
        transition(.inputEnded)
        updateInterest()
      }
    } else if errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR {
      close()
    }
  }

  /// Decodes and starts the next request while the connection accepts one and one is complete.
  private func process() {
    guard !processing else { return }
    processing = true
    defer { processing = false }
    while state.acceptsRequests {
      let event: HTTPDecoderEvent
      let handler = server.handler
      var refusal: HTTPResponse?
      do {
        event = try decoder.next(bodyLimit: { head throws(HTTPParseError) in
          if let refused = handler.screen(head) {
            refusal = refused
            throw HTTPParseError(refused.status, "refused")
          }
          // A declared length no route refuses needs no lookup (the decoder checks the framing).
          if let declared = head.headers["content-length"],
            case .success(let length) = DecimalInteger.parse(declared), length <= handler.bodyLimitFloor
          {
            return handler.bodyLimitFloor
          }
          return handler.bodyLimit(for: head)
        })
      } catch {
        fail(refusal ?? failure(error))
        return
      }
      switch event {
      case .needMoreData:
        if state.inputEnded {
          close()
          return
        }
      case .continueExpected:
        transition(.interimQueued)
        writer.enqueue(Array("HTTP/1.1 100 Continue\r\n\r\n".utf8))
        flush()
        continue
      case .bodyPart(let part):
        guard spool.append(part, newPath: server.spoolPath) else { return failSpool() }
        continue
      case .request(var request):
        if spool.isActive {
          guard spool.append(request.body, newPath: server.spoolPath), let file = spool.finish() else {
            return failSpool()
          }
          request.body = []
          request.bodyFile = file
        }
        dispatch(request)
        continue
      }
      break
    }
    updateInterest()
  }

  private func failSpool() {
    fail(failure(HTTPParseError(507, "The request body could not be written to disk.")))
  }

  /// The answer to a request that cannot be read further: the handler sees its head when it
  /// arrived (for a body over the limit, say), so the answer can be made for that request.
  private func failure(_ error: HTTPParseError) -> HTTPResponse {
    if let head = decoder.currentHead { return server.handler.errorResponse(for: error, head: head) }
    return server.handler.errorResponse(for: error)
  }

  // MARK: Handling

  private func dispatch(_ request: HTTPRequest) {
    transition(.requestDispatched)
    headStarted = nil
    switch server.handler.start(request) {
    case .respond(let response):
      // `process` is on the stack and picks up the next pipelined request itself.
      complete(request.head, response)
    case .deferred(let work):
      // A reply made on this thread before `work` returns (a change written at once) is kept
      // and completed right after, without a trip through the loop's queue and its wake-up.
      awaitingInlineReply = true
      work(
        HTTPResponder(turnEnd: TurnEnd(queue: loop.work)) { [self] make in
          if loop.work.isCurrentThread && awaitingInlineReply {
            inlineReply = make
            return
          }
          loop.execute { [self] in complete(request.head, make()) }
        })
      awaitingInlineReply = false
      if let make = inlineReply {
        inlineReply = nil
        complete(request.head, make())
      } else {
        updateInterest()
      }
    case .blocking(let work):
      updateInterest()
      server.lane().async { [self] in
        let response = work()
        loop.execute { [self] in complete(request.head, response) }
      }
    }
  }

  private func complete(_ head: HTTPRequestHead, _ response: HTTPResponse) {
    // The connection may have closed while the handler ran.
    guard state.phase == .handling else { return }
    touch()
    transition(.responseQueued(last: !head.keepAlive))
    guard case .writing(let last, _) = state.phase else { return }
    let includeBody =
      head.method != "HEAD" && response.status >= 200 && response.status != 204 && response.status != 304
    let file = includeBody ? response.bodyFile : nil
    let stream = includeBody && file == nil ? response.bodyStream : nil
    var encoded = writer.buffers.take()
    response.encode(into: &encoded, includeBody: head.method != "HEAD", close: last)
    writer.enqueue(encoded, file: file, stream: stream)
    flush()
  }

  // MARK: Writing

  /// Answers an error without the handler, then closes.
  private func fail(_ response: HTTPResponse) {
    guard transition(.failureQueued) else { return }
    writer.enqueue(response.encoded(close: true))
    flush()
  }

  /// Writes what the socket takes, then follows the state: waits for writability, lets the
  /// loop run a yielding stream later, lingers after the last response, or reads on.
  private func flush() {
    guard case .writing(_, let wasBlocked) = state.phase else { return }
    let (progress, moved) = writer.write(to: fd)
    if moved && wasBlocked { touch() }
    switch progress {
    case .blocked:
      transition(.writeBlocked)
      updateInterest()
    case .yielded:
      // The stream did a bounded slice of work without output: let the loop's other
      // connections run before asking again.
      transition(.writeYielded)
      updateInterest()
      loop.execute { [self] in flush() }
    case .failed:
      close()
    case .finished:
      transition(.writeFinished)
      if state.phase == .lingering {
        beginLingering()
      } else {
        // Go on with a pipelined request already buffered, or read more.
        process()
      }
    }
  }

  /// After the last response: stop sending, read and drop what the peer still sends for a
  /// short while, then close.
  private func beginLingering() {
    Platform.shutdownWrite(fd)
    updateInterest()
    loop.schedule(after: 2) { [self] in close() }
  }

  /// Tells the loop which readiness matters now (an `epoll_ctl` only when that changes).
  private func updateInterest() {
    guard state.phase != .closed else { return }
    let wanted = state.interest(backlogFull: decoder.bufferedByteCount >= 1 << 20)
    guard wanted != registered else { return }
    registered = wanted
    loop.update(fd, reading: wanted.reading, writing: wanted.writing)
  }

  /// Applies a transition the code above makes only when it is legal: a refused one is a bug,
  /// which stops debug builds and closes the connection in release builds.
  @discardableResult
  private func transition(_ event: ConnectionState.Event) -> Bool {
    if state.apply(event) { return true }
    assertionFailure("connection \(id): \(event) is illegal in \(state.phase)")
    close()
    return false
  }

  // MARK: Deadlines and closing

  /// Records progress (a connection, a response, body bytes, written bytes) and makes sure a
  /// deadline check is scheduled.
  private func touch() {
    lastProgress = .now()
    guard !deadlineArmed else { return }
    schedule(after: server.configuration.timeouts.shortest)
  }

  private func schedule(after seconds: Double) {
    deadlineArmed = true
    loop.schedule(after: max(seconds, 0.01)) { [self] in deadlineReached() }
  }

  /// Which deadline applies depends on what the connection is doing (`ConnectionState.deadline`):
  /// waiting for a request (idle), receiving a head (header timeout, counted from its first
  /// byte, so a drip-fed head cannot keep the connection), receiving a body (body stall) or
  /// sending (write stall). While a handler runs there is none (its response re-arms it), and a
  /// lingering connection has its own timer.
  private func deadlineReached() {
    deadlineArmed = false
    let timeouts = server.configuration.timeouts
    let now = DispatchTime.now().uptimeNanoseconds
    func since(_ time: DispatchTime) -> Double { Double(now - min(now, time.uptimeNanoseconds)) / 1e9 }
    let remaining: Double
    switch state.deadline(readingBody: decoder.isReadingBody, headStarted: headStarted != nil) {
    case .none, .linger: return
    case .writeStall: remaining = timeouts.writeStallSeconds - since(lastProgress)
    case .bodyStall: remaining = timeouts.bodyStallSeconds - since(lastProgress)
    case .idle: remaining = timeouts.idleSeconds - since(lastProgress)
    case .header:
      remaining = timeouts.headerSeconds - since(headStarted ?? .now())
      if remaining <= 0 {
        let message = "The request head did not arrive within \(Int(timeouts.headerSeconds)) seconds."
        fail(server.handler.errorResponse(for: HTTPParseError(408, message)))
        return
      }
    }
    guard remaining <= 0 else {
      schedule(after: min(remaining, timeouts.shortest))
      return
    }
    close()
  }

  /// Closes now if nothing is in progress; otherwise after the current request's response.
  func closeWhenIdle() {
    guard state.apply(.quiesce) else { return }
    if state.phase == .reading && !decoder.isReadingBody { close() }
  }

  /// On the loop's thread: the descriptor leaves the loop before it is closed, so its number,
  /// reused by the next accept, is never mistaken for this connection.
  func close() {
    guard state.apply(.close) else { return }
    spool.abandon()
    writer.discard()
    loop.deregister(fd)
    Platform.close(fd)
    server.connectionDidClose(id)
  }
}
