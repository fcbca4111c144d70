import Dispatch

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// One accepted socket.
///
/// Invariant: every `var` of this class is read and written only on `loop`'s thread (readiness is
/// delivered there, and every closure that touches it is sent there with `loop.execute`). That is
/// what makes the `@unchecked Sendable` sound; the compiler does not check it.
///
/// One request is in flight at a time: pipelined requests wait in the decoder (at most about 1 MiB
/// of them; past that, and while a response is still being written, reading stops) and are
/// answered in order (the swift-nio pipelining rule).
final class HTTPConnection: @unchecked Sendable, EventLoopHandler {
  let id: Int
  let fd: Int32
  let loop: EventLoop
  private let server: HTTPServer
  private var decoder: HTTPRequestDecoder
  /// Readiness asked of the loop now.
  private var readingWanted = true
  /// A response waits for the socket to drain.
  private var waitingWritable = false
  private var outbound: [UInt8] = []
  private var outboundOffset = 0
  private var inFlight = false
  private var processing = false
  private var closeAfterFlush = false
  private var lingering = false
  private var closing = false
  private var closeWhenIdleRequested = false
  /// The peer shut down its sending side: answer what is buffered, then close.
  private var peerClosed = false
  private var lastProgress = DispatchTime.now()
  /// When the first byte of the current request head arrived (slowloris deadline).
  private var headStarted: DispatchTime?
  private var deadlineArmed = false
  /// The file a large request body is being written to.
  private var spool: (fd: Int32, path: String, size: Int)?
  /// A response body still to send after `outbound`.
  private var pendingFile: (region: FileRegion, offset: Int, end: Int)?
  private var pendingStream: (any HTTPBodyStream)?

  init(id: Int, fd: Int32, server: HTTPServer, loop: EventLoop) {
    self.id = id
    self.fd = fd
    self.server = server
    self.loop = loop
    self.decoder = HTTPRequestDecoder(limits: server.configuration.limits)
    self.decoder.spoolThreshold = server.configuration.spoolThresholdBytes
  }

  func start() {
    _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
    _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
    var one: Int32 = 1
    setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
    guard loop.register(fd, self, reading: true, writing: false) else {
      closing = true
      loop.deregister(fd)
      _ = Glibc.close(fd)
      server.connectionDidClose(id)
      return
    }
    touch()
  }

  func handleEvents(readable canRead: Bool, writable canWrite: Bool, failed: Bool) {
    guard !closing else { return }
    if waitingWritable && (canWrite || failed) { flush() }
    guard !closing else { return }
    if readingWanted && (canRead || failed) {
      readable()
    } else if failed && !waitingWritable {
      // The peer is gone (reset) while nothing is read or written: level-triggered, this would
      // be reported again and again.
      close()
    }
  }

  // MARK: Reading

  private func readable() {
    guard !closing else { return }
    let count = withUnsafeTemporaryAllocation(byteCount: 65536, alignment: 16) { buffer -> Int in
      let count = read(fd, buffer.baseAddress, buffer.count)
      if count > 0 && !lingering {
        decoder.feed(UnsafeRawBufferPointer(rebasing: buffer[0..<count]))
      }
      return count
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
      if inFlight || !outbound.isEmpty || pendingFile != nil || pendingStream != nil {
        peerClosed = true
        updateReadInterest()
      } else {
        close()
      }
    } else if errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR {
      close()
    }
  }

  /// Decodes and starts the next request, if any is complete and none is in flight. Re-entrant
  /// calls (a response answered inline completes and flushes while the loop runs) return at once:
  /// the running loop goes on, so pipelined requests never nest on the stack.
  private func process() {
    guard !processing else { return }
    processing = true
    defer { processing = false }
    while !inFlight && !closing && !closeAfterFlush {
      let event: HTTPDecoderEvent
      let handler = server.handler
      var refusal: HTTPResponse?
      do {
        event = try decoder.next(bodyLimit: { head throws(HTTPParseError) in
          if let refused = handler.screen(head) {
            refusal = refused
            throw HTTPParseError(refused.status, "refused")
          }
          return handler.bodyLimit(for: head)
        })
      } catch {
        send((refusal ?? failure(error)).encoded(close: true), thenClose: true)
        return
      }
      switch event {
      case .needMoreData:
        if peerClosed {
          close()
          return
        }
        updateReadInterest()
        return
      case .continueExpected:
        send(Array("HTTP/1.1 100 Continue\r\n\r\n".utf8), thenClose: false)
      case .bodyPart(let part):
        guard spoolPart(part) else {
          let error = HTTPParseError(507, "The request body could not be written to disk.")
          send(failure(error).encoded(close: true), thenClose: true)
          return
        }
      case .request(var request):
        if spool != nil {
          guard spoolPart(request.body), let file = finishSpool() else {
            let error = HTTPParseError(507, "The request body could not be written to disk.")
            send(failure(error).encoded(close: true), thenClose: true)
            return
          }
          request.body = []
          request.bodyFile = file
        }
        dispatch(request)
      }
    }
    updateReadInterest()
  }

  // MARK: Spooling large bodies

  /// Appends a piece of a large body to the spool file (page-cache writes of at most
  /// `spoolThresholdBytes`; nothing is synced).
  private func spoolPart(_ part: [UInt8]) -> Bool {
    if spool == nil {
      let path = server.spoolPath()
      let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
      guard fd >= 0 else { return false }
      spool = (fd, path, 0)
    }
    guard let current = spool else { return false }
    var offset = 0
    while offset < part.count {
      let written = part.withUnsafeBytes { write(current.fd, $0.baseAddress! + offset, $0.count - offset) }
      if written < 0 && errno == EINTR { continue }
      guard written > 0 else {
        abandonSpool()
        return false
      }
      offset += written
    }
    spool = (current.fd, current.path, current.size + part.count)
    return true
  }

  private func finishSpool() -> SpooledFile? {
    guard let current = spool else { return nil }
    spool = nil
    guard Glibc.close(current.fd) == 0 else {
      unlink(current.path)
      return nil
    }
    return SpooledFile(path: current.path, size: current.size)
  }

  private func abandonSpool() {
    guard let current = spool else { return }
    spool = nil
    _ = Glibc.close(current.fd)
    unlink(current.path)
  }

  /// The answer to a request that cannot be read further: the handler sees its head when it
  /// arrived (for a body over the limit, say), so the answer can be made for that request.
  private func failure(_ error: HTTPParseError) -> HTTPResponse {
    if let head = decoder.currentHead { return server.handler.errorResponse(for: error, head: head) }
    return server.handler.errorResponse(for: error)
  }

  private func dispatch(_ request: HTTPRequest) {
    inFlight = true
    headStarted = nil
    updateReadInterest()
    switch server.handler.start(request) {
    case .respond(let response):
      // `process` is on the stack and picks up the next pipelined request itself.
      complete(request.head, response)
    case .deferred(let work):
      work(HTTPResponder { [self] make in loop.execute { [self] in complete(request.head, make()) } })
    case .blocking(let work):
      server.lane().async { [self] in
        let response = work()
        loop.execute { [self] in complete(request.head, response) }
      }
    }
  }

  private func complete(_ head: HTTPRequestHead, _ response: HTTPResponse) {
    inFlight = false
    guard !closing else { return }
    touch()
    let close = !head.keepAlive || closeWhenIdleRequested
    let includeBody =
      head.method != "HEAD" && response.status >= 200 && response.status != 204 && response.status != 304
    if includeBody, let region = response.bodyFile {
      pendingFile = (region, region.offset, region.offset + region.length)
    } else if includeBody, let stream = response.bodyStream {
      pendingStream = stream
    }
    send(response.encoded(includeBody: head.method != "HEAD", close: close), thenClose: close)
    if !closing && !closeAfterFlush { process() }
  }

  // MARK: Writing

  private func send(_ bytes: [UInt8], thenClose: Bool) {
    if outbound.isEmpty {
      outbound = bytes
      outboundOffset = 0
    } else {
      outbound.append(contentsOf: bytes)
    }
    if thenClose { closeAfterFlush = true }
    flush()
  }

  private func flush() {
    while true {
      guard drainOutbound() else { return }
      if let file = pendingFile {
        if file.offset >= file.end {
          pendingFile = nil
          continue
        }
        var offset = off_t(file.offset)
        let sent = sendfile(fd, file.region.fd, &offset, min(file.end - file.offset, 1 << 22))
        if sent > 0 {
          pendingFile = (file.region, Int(offset), file.end)
          if waitingWritable { touch() }
          continue
        }
        if sent < 0 && errno == EINTR { continue }
        if sent < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) {
          armWriteSource()
          updateReadInterest()
          return
        }
        // The file ended early or the peer went away: the length promised cannot be kept.
        close()
        return
      }
      if let stream = pendingStream {
        let piece: [UInt8]?
        do {
          piece = try stream.next()
        } catch {
          close()
          return
        }
        if let piece {
          if piece.isEmpty {
            // The stream did a bounded slice of work without output: let the loop's other
            // connections run before asking again.
            loop.execute { [self] in if !closing && pendingStream != nil { flush() } }
            return
          }
          outbound = Array(String(piece.count, radix: 16).utf8) + [13, 10] + piece + [13, 10]
        } else {
          pendingStream = nil
          outbound = Array("0\r\n\r\n".utf8)
        }
        outboundOffset = 0
        continue
      }
      break
    }
    if waitingWritable {
      waitingWritable = false
      updateReadInterest()
    }
    if closeAfterFlush {
      beginLingeringClose()
      return
    }
    // Everything is written: go on with a pipelined request already buffered, or read more.
    if inFlight { updateReadInterest() } else { process() }
  }

  /// Writes `outbound`; false when the socket is full (a write source is then armed) or failed.
  private func drainOutbound() -> Bool {
    while outboundOffset < outbound.count {
      let written = outbound.withUnsafeBytes { bytes in
        write(fd, bytes.baseAddress! + outboundOffset, bytes.count - outboundOffset)
      }
      if written > 0 {
        outboundOffset += written
        if waitingWritable { touch() }
        continue
      }
      if written < 0 && errno == EINTR { continue }
      if written < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) {
        armWriteSource()
        updateReadInterest()
        return false
      }
      close()
      return false
    }
    outbound = []
    outboundOffset = 0
    return true
  }

  private func armWriteSource() {
    guard !waitingWritable, !closing else { return }
    waitingWritable = true
    updateReadInterest()
  }

  /// After a final response: stop sending, then read and discard what the peer still sends for a
  /// short while, so the kernel does not answer unread data with a reset that destroys the response.
  private func beginLingeringClose() {
    guard !lingering else { return }
    lingering = true
    shutdown(fd, Int32(SHUT_WR))
    updateReadInterest()
    loop.schedule(after: 2) { [self] in close() }
  }

  /// Tells the loop which readiness matters now (an `epoll_ctl` only when that changes).
  private func updateReadInterest() {
    guard !closing else { return }
    // Reading goes on while a handler runs (pipelined bytes are only buffered, and changing the
    // interest costs a system call); it stops while a response waits for the socket, and when a
    // client has pipelined more than 1 MiB ahead.
    let wanted =
      lingering
      || (!closeAfterFlush && !peerClosed && !waitingWritable && pendingFile == nil && pendingStream == nil
        && !(inFlight && decoder.bufferedByteCount >= 1 << 20))
    if wanted != readingWanted || waitingWritable != writingRegistered {
      readingWanted = wanted
      writingRegistered = waitingWritable
      loop.update(fd, reading: wanted, writing: waitingWritable)
    }
  }

  /// Whether the loop was last asked for writability.
  private var writingRegistered = false

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

  /// Which deadline applies depends on what the connection is doing: waiting for a request
  /// (idle), receiving a head (header timeout, counted from its first byte, so a drip-fed head
  /// cannot keep the connection), receiving a body (body stall) or sending (write stall). While a
  /// handler runs there is none.
  private func deadlineReached() {
    deadlineArmed = false
    guard !closing, !inFlight else { return }
    let timeouts = server.configuration.timeouts
    let now = DispatchTime.now().uptimeNanoseconds
    func since(_ time: DispatchTime) -> Double { Double(now - min(now, time.uptimeNanoseconds)) / 1e9 }
    let remaining: Double
    var answer408 = false
    if waitingWritable || pendingFile != nil || pendingStream != nil {
      remaining = timeouts.writeStallSeconds - since(lastProgress)
    } else if decoder.isReadingBody {
      remaining = timeouts.bodyStallSeconds - since(lastProgress)
    } else if let headStarted {
      remaining = timeouts.headerSeconds - since(headStarted)
      answer408 = true
    } else {
      remaining = timeouts.idleSeconds - since(lastProgress)
    }
    guard remaining <= 0 else {
      schedule(after: min(remaining, timeouts.shortest))
      return
    }
    if answer408 && outbound.isEmpty && !closeAfterFlush {
      let error = HTTPParseError(408, "The request head did not arrive within \(Int(timeouts.headerSeconds)) seconds.")
      send(server.handler.errorResponse(for: error).encoded(close: true), thenClose: true)
    } else {
      close()
    }
  }

  /// Closes now if nothing is in flight or being written; otherwise after the current response.
  func closeWhenIdle() {
    closeWhenIdleRequested = true
    if !inFlight && outbound.isEmpty && !decoder.isReadingBody { close() }
  }

  /// On the loop's thread: the descriptor leaves the loop before it is closed, so its number,
  /// reused by the next accept, is never mistaken for this connection.
  func close() {
    guard !closing else { return }
    closing = true
    abandonSpool()
    pendingFile = nil
    pendingStream = nil
    loop.deregister(fd)
    _ = Glibc.close(fd)
    server.connectionDidClose(id)
  }
}
