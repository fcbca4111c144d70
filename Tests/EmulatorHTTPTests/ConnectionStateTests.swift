import Testing

@testable import EmulatorHTTP

/// The connection's state machine without a socket: the paths a connection takes, and every
/// transition the table does not list is refused and leaves the state as it was.
@Suite struct ConnectionStateTests {
  typealias Event = ConnectionState.Event

  /// Applies `events` in order, expecting each to be accepted.
  private func reached(_ events: [Event]) -> ConnectionState {
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
    let accepted1 = state.apply(.requestDispatched)
    #expect(accepted1)
    #expect(state.phase == .handling && !state.acceptsRequests)
    let accepted2 = state.apply(.responseQueued(last: false))
    #expect(accepted2)
    #expect(state.phase == .writing(thenClose: false, blocked: false))
    let accepted3 = state.apply(.writeFinished)
    #expect(accepted3)
    #expect(state.phase == .reading)
  }

  @Test func theLastResponseEndsInLingeringThenClosed() {
    var state = reached([.requestDispatched, .responseQueued(last: true), .writeBlocked])
    #expect(state.phase == .writing(thenClose: true, blocked: true))
    let accepted4 = state.apply(.writeFinished)
    #expect(accepted4)
    #expect(state.phase == .lingering)
    let accepted5 = state.apply(.close)
    #expect(accepted5)
    #expect(state.phase == .closed)
  }

  @Test func aFailureBeforeDispatchIsTheLastResponse() {
    let state = reached([.failureQueued])
    #expect(state.phase == .writing(thenClose: true, blocked: false))
  }

  @Test func anInterimResponseReturnsToReadingTheBody() {
    let state = reached([.interimQueued, .writeBlocked, .writeFinished])
    #expect(state.phase == .reading)
  }

  @Test func quiescingMakesTheNextResponseTheLast() {
    var state = reached([.requestDispatched, .quiesce])
    let accepted6 = state.apply(.responseQueued(last: false))
    #expect(accepted6)
    #expect(state.phase == .writing(thenClose: true, blocked: false))
    // A response already being written when the server quiesces ends the connection too.
    var writing = reached([.requestDispatched, .responseQueued(last: false), .quiesce])
    let accepted7 = writing.apply(.writeFinished)
    #expect(accepted7)
    #expect(writing.phase == .lingering)
  }

  @Test func endOfInputIsRememberedAndStopsReading() {
    var state = reached([.requestDispatched])
    #expect(state.interest(backlogFull: false) == .init(reading: true, writing: false))
    let accepted8 = state.apply(.inputEnded)
    #expect(accepted8)
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
    let handling = reached([.requestDispatched])
    let writing = reached([.requestDispatched, .responseQueued(last: false)])
    let lingering = reached([.failureQueued, .writeFinished])
    let closed = reached([.close])
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
        let accepted9 = state.apply(event)
        #expect(!accepted9, "\(event) accepted in \(start.phase)")
        #expect(state == start)
      }
    }
  }

  @Test func closingIsLegalFromEveryOpenPhase() {
    let paths: [[Event]] = [[], [.requestDispatched], [.interimQueued], [.failureQueued, .writeFinished]]
    for path in paths {
      var state = reached(path)
      let accepted10 = state.apply(.close)
      #expect(accepted10)
      #expect(state.phase == .closed)
    }
  }
}
