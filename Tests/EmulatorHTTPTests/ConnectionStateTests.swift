import Testing

@testable import EmulatorHTTP

/// The connection's state machine without a socket: the paths a connection takes, and every
/// transition the table does not list is refused and leaves the state as it was.
@Suite struct ConnectionStateTests {
  typealias Event = ConnectionState.Event

  /// Applies `events` in order, expecting each to be accepted.
  private func state(after events: [Event]) -> ConnectionState {
    var state = ConnectionState()
    for event in events {
      let accepted = state.apply(event)
      #expect(accepted, "\(event) refused in \(state.phase)")
    }
    return state
  }

  @Test func aKeepAliveRequestGoesBackToReading() {
    var state = ConnectionState()
    #expect(state.phase == .reading && state.acceptsRequests)
    #expect(state.apply(.requestDispatched))
    #expect(state.phase == .handling && !state.acceptsRequests)
    #expect(state.apply(.responseQueued(last: false)))
    #expect(state.phase == .writing(thenClose: false, blocked: false))
    #expect(state.apply(.writeFinished))
    #expect(state.phase == .reading)
  }

  @Test func theLastResponseEndsInLingeringThenClosed() {
    var state = state(after: [.requestDispatched, .responseQueued(last: true), .writeBlocked])
    #expect(state.phase == .writing(thenClose: true, blocked: true))
    #expect(state.apply(.writeFinished))
    #expect(state.phase == .lingering)
    #expect(state.apply(.close))
    #expect(state.phase == .closed)
  }

  @Test func aFailureBeforeDispatchIsTheLastResponse() {
    let state = state(after: [.failureQueued])
    #expect(state.phase == .writing(thenClose: true, blocked: false))
  }

  @Test func anInterimResponseReturnsToReadingTheBody() {
    let state = state(after: [.interimQueued, .writeBlocked, .writeFinished])
    #expect(state.phase == .reading)
  }

  @Test func quiescingMakesTheNextResponseTheLast() {
    var state = state(after: [.requestDispatched, .quiesce])
    #expect(state.apply(.responseQueued(last: false)))
    #expect(state.phase == .writing(thenClose: true, blocked: false))
    // A response already being written when the server quiesces ends the connection too.
    var writing = self.state(after: [.requestDispatched, .responseQueued(last: false), .quiesce])
    #expect(writing.apply(.writeFinished))
    #expect(writing.phase == .lingering)
  }

  @Test func endOfInputIsRememberedAndStopsReading() {
    var state = state(after: [.requestDispatched])
    #expect(state.interest(backlogFull: false) == .init(reading: true, writing: false))
    #expect(state.apply(.inputEnded))
    #expect(state.inputEnded && state.phase == .handling)
    #expect(state.interest(backlogFull: false) == .init(reading: false, writing: false))
  }

  @Test func interestFollowsThePhase() {
    var state = ConnectionState()
    #expect(state.interest(backlogFull: true) == .init(reading: true, writing: false))
    state.apply(.requestDispatched)
    // A client that pipelined more than the decoder may hold is not read while a request runs.
    #expect(state.interest(backlogFull: true) == .init(reading: false, writing: false))
    state.apply(.responseQueued(last: false))
    #expect(state.interest(backlogFull: false) == .init(reading: false, writing: false))
    state.apply(.writeBlocked)
    #expect(state.interest(backlogFull: false) == .init(reading: false, writing: true))
    state.apply(.writeYielded)
    #expect(state.interest(backlogFull: false) == .init(reading: false, writing: false))
  }

  @Test func theDeadlineFollowsThePhase() {
    var state = ConnectionState()
    #expect(state.deadline(readingBody: false, headStarted: false) == .idle)
    #expect(state.deadline(readingBody: false, headStarted: true) == .header)
    #expect(state.deadline(readingBody: true, headStarted: true) == .bodyStall)
    state.apply(.requestDispatched)
    #expect(state.deadline(readingBody: false, headStarted: true) == .none)
    state.apply(.responseQueued(last: true))
    #expect(state.deadline(readingBody: false, headStarted: false) == .writeStall)
    state.apply(.writeFinished)
    #expect(state.deadline(readingBody: false, headStarted: false) == .linger)
  }

  /// Every (phase, event) pair outside the table: refused, state unchanged. Among them, the
  /// ones that would break pipelining order: a second request dispatched while one is in
  /// flight or while a response is still being written, and a response with nothing in flight.
  @Test func illegalTransitionsAreRefusedAndChangeNothing() {
    let reading = ConnectionState()
    let handling = state(after: [.requestDispatched])
    let writing = state(after: [.requestDispatched, .responseQueued(last: false)])
    let lingering = state(after: [.failureQueued, .writeFinished])
    let closed = state(after: [.close])
    let refused: [(ConnectionState, [Event])] = [
      (reading, [.responseQueued(last: false), .writeBlocked, .writeYielded, .writeFinished]),
      (handling, [.requestDispatched, .interimQueued, .failureQueued, .writeBlocked, .writeFinished]),
      (writing, [.requestDispatched, .interimQueued, .failureQueued, .responseQueued(last: false)]),
      (lingering, [.requestDispatched, .responseQueued(last: true), .failureQueued, .writeFinished, .inputEnded]),
      (closed, [.requestDispatched, .responseQueued(last: false), .writeFinished, .quiesce, .inputEnded, .close]),
    ]
    for (start, events) in refused {
      for event in events {
        var state = start
        #expect(!state.apply(event), "\(event) accepted in \(start.phase)")
        #expect(state == start)
      }
    }
  }

  @Test func closingIsLegalFromEveryOpenPhase() {
    let paths: [[Event]] = [[], [.requestDispatched], [.interimQueued], [.failureQueued, .writeFinished]]
    for path in paths {
      var state = state(after: path)
      #expect(state.apply(.close))
      #expect(state.phase == .closed)
    }
  }
}
