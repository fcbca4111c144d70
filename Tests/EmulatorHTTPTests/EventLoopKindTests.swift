import Testing

@testable import EmulatorHTTP

/// `STORAGE_EMULATOR_EVENT_LOOP` picks the event loop; a name that is neither loop is refused by
/// the server with a message, before it binds anything.
@Suite struct EventLoopKindTests {
  @Test func theEnvironmentVariablePicksTheLoop() {
    let name = EventLoopKind.environmentVariable
    #expect(EventLoopKind.fromEnvironment([name: "portable"]) == .portable)
    #expect(EventLoopKind.fromEnvironment([name: "EPOLL"]) == .epoll)
    #expect(EventLoopKind.fromEnvironment([:]) == .platformDefault)
    #expect(EventLoopKind.fromEnvironment([name: ""]) == .platformDefault)
    #expect(EventLoopKind.fromEnvironment([name: "kqueue"]) == .unrecognized("kqueue"))
  }

  struct Handler: HTTPHandler {
    func start(_ request: HTTPRequest) -> HTTPHandling { .respond(HTTPResponse(status: 200)) }
  }

  @Test func anUnknownLoopNameIsRefusedWithAMessage() {
    var configuration = HTTPServerConfiguration()
    configuration.port = 0
    configuration.eventLoop = .unrecognized("kqueue")
    let server = HTTPServer(configuration: configuration, handler: Handler())
    do {
      _ = try server.start()
      Issue.record("an unknown event loop was accepted")
      server.shutdown(gracePeriod: 0)
    } catch {
      #expect(error.description.contains("unknown event loop 'kqueue'"))
      #expect(error.description.contains("portable"))
    }
  }

  /// The same pipelined keep-alive exchange over each loop.
  @Test(arguments: [EventLoopKind.epoll, .portable])
  func eachLoopServesPipelinedRequestsInOrder(kind: EventLoopKind) throws {
    struct Echo: HTTPHandler {
      func start(_ request: HTTPRequest) -> HTTPHandling {
        let path = request.head.rawPath
        let response = HTTPResponse(status: 200, headers: [:], body: Array(path.utf8))
        return path.hasSuffix("/lane") ? .blocking { response } : .respond(response)
      }
    }
    var configuration = HTTPServerConfiguration()
    configuration.port = 0
    configuration.eventLoop = kind
    let server = HTTPServer(configuration: configuration, handler: Echo())
    let port = try server.start()
    defer { server.shutdown(gracePeriod: 1) }
    let client = try RawSocket(port: port)
    let paths = (0..<20).map { $0 % 3 == 0 ? "/\($0)/lane" : "/\($0)" }
    client.send(paths.map { "GET \($0) HTTP/1.1\r\nHost: x\r\n\r\n" }.joined())
    let responses = client.receiveResponses(paths.count)
    #expect(responses.map { String($0.split(separator: "\r\n\r\n", maxSplits: 1).last ?? "") } == paths)
  }
}
