/// What one connection is doing, and the only legal ways to change it: the connection asks this
/// value, then does the I/O (the pattern of swift-nio's `HTTPServerPipelineHandler`). Pure, so
/// every transition is tested without a socket.
///
/// One request is in flight at a time: the next pipelined request is not started until the
/// response before it is completely written, which keeps responses in request order.
struct ConnectionState: Equatable, Sendable {
  enum Phase: Equatable, Sendable {
    /// Waiting for a request or receiving one (the decoder knows whether its head or its body).
    case reading
    /// One request is with the handler; bytes that arrive meanwhile are only buffered.
    case handling
    /// A response, or an interim `100 Continue`, is being written; `thenClose` when it is the
    /// last; `blocked` while the socket is full (writability is awaited).
    case writing(thenClose: Bool, blocked: Bool)
    /// The last response is written and the sending side shut down: what the peer still sends
    /// is read and dropped until a short timer closes the socket (so unread data does not make
    /// the kernel reset the connection and destroy the response).
    case lingering
    case closed
  }

  enum Event: Equatable, Sendable {
    /// reading → handling: a complete request went to the handler.
    case requestDispatched
    /// reading → writing: a `100 Continue` before the body is read on.
    case interimQueued
    /// handling → writing: the handler's response; `last` when the connection must close after it.
    case responseQueued(last: Bool)
    /// reading → writing(thenClose): an error answered without a handler (malformed or refused
    /// request, header timeout, spool failure).
    case failureQueued
    /// writing → writing(blocked): the socket took less than was queued.
    case writeBlocked
    /// writing → writing(not blocked): a body stream produced nothing yet and the loop's other
    /// work runs before it is asked again.
    case writeYielded
    /// writing → reading, or → lingering after the last response (or any, once quiescing).
    case writeFinished
    /// The peer shut down its sending side: no more requests; what is buffered is answered.
    case inputEnded
    /// The server is shutting down: the response in progress (or next) is the last.
    case quiesce
    /// Any open phase → closed.
    case close
  }

  /// Which readiness the connection wants from its event loop.
  struct Interest: Equatable, Sendable {
    var reading: Bool
    var writing: Bool
  }

  private(set) var phase: Phase = .reading
  /// The peer will send nothing more.
  private(set) var inputEnded = false
  /// Close after the response in progress (server shutdown).
  private(set) var quiescing = false

  init() {}

  /// Applies `event` if it is legal in the current phase and returns true; otherwise leaves
  /// the state unchanged and returns false.
  @discardableResult
  mutating func apply(_ event: Event) -> Bool {
    guard let next = successor(of: event) else { return false }
    switch event {
    case .inputEnded: inputEnded = true
    case .quiesce: quiescing = true
    default: break
    }
    phase = next
    return true
  }

  /// The phase after `event`, or nil when `event` is illegal now: the one table of transitions.
  private func successor(of event: Event) -> Phase? {
    switch (phase, event) {
    case (.closed, _): nil
    case (_, .close): .closed
    case (.reading, .requestDispatched): .handling
    case (.reading, .interimQueued): .writing(thenClose: false, blocked: false)
    case (.reading, .failureQueued): .writing(thenClose: true, blocked: false)
    case (.handling, .responseQueued(let last)): .writing(thenClose: last || quiescing, blocked: false)
    case (.writing(let thenClose, _), .writeBlocked): .writing(thenClose: thenClose, blocked: true)
    case (.writing(let thenClose, _), .writeYielded): .writing(thenClose: thenClose, blocked: false)
    case (.writing(let thenClose, _), .writeFinished): thenClose || quiescing ? .lingering : .reading
    case (.reading, .inputEnded), (.handling, .inputEnded), (.writing, .inputEnded): phase
    case (_, .quiesce): phase
    default: nil
    }
  }

  /// Whether the connection may start decoding and dispatching the next request.
  var acceptsRequests: Bool { phase == .reading }

  /// Whether a response is being written.
  var isWriting: Bool {
    if case .writing = phase { return true }
    return false
  }

  /// Readiness to ask for. `backlogFull`: the client has pipelined more than the decoder may
  /// hold while a request is in flight. Reading goes on while a handler runs (pipelined bytes
  /// are only buffered, and changing the interest costs a system call); it stops while a
  /// response is written.
  func interest(backlogFull: Bool) -> Interest {
    switch phase {
    case .reading: Interest(reading: !inputEnded, writing: false)
    case .handling: Interest(reading: !inputEnded && !backlogFull, writing: false)
    case .writing(_, let blocked): Interest(reading: false, writing: blocked)
    case .lingering: Interest(reading: true, writing: false)
    case .closed: Interest(reading: false, writing: false)
    }
  }

  /// Which timeout applies now (`HTTPTimeouts`); none while a handler runs.
  enum Deadline: Equatable, Sendable {
    case none, idle, header, bodyStall, writeStall, linger
  }

  /// - Parameters: readingBody: a head has been read and its body is arriving; headStarted: the
  ///   first byte of a head has arrived.
  func deadline(readingBody: Bool, headStarted: Bool) -> Deadline {
    switch phase {
    case .handling, .closed: .none
    case .writing: .writeStall
    case .lingering: .linger
    case .reading: readingBody ? .bodyStall : headStarted ? .header : .idle
    }
  }
}
