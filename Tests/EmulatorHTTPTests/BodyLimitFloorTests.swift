import Synchronization
import Testing

@testable import EmulatorHTTP

/// `bodyLimitFloor`: a request whose Content-Length is at most the floor is not looked up for its
/// limit; any other (larger, chunked, no length) is, and its limit still decides 413.
@Suite struct BodyLimitFloorTests {
  final class Handler: HTTPHandler {
    let asked = Atomic<Int>(0)
    var bodyLimitFloor: Int { 10 }
    func bodyLimit(for head: HTTPRequestHead) -> Int {
      asked.add(1, ordering: .relaxed)
      return 20
    }
    func start(_ request: HTTPRequest) -> HTTPHandling {
      .respond(HTTPResponse(status: 200, headers: [:], body: Array(String(request.body.count).utf8)))
    }
  }

  @Test func onlyBodiesAboveTheFloorAreLookedUp() throws {
    let handler = Handler()
    var configuration = HTTPServerConfiguration()
    configuration.port = 0
    let server = HTTPServer(configuration: configuration, handler: handler)
    let port = try server.start()
    defer { server.shutdown(gracePeriod: 1) }
    func send(_ request: String) -> String {
      guard let client = try? RawSocket(port: port) else { return "no connection" }
      client.send(request)
      return client.receiveResponses(1).first ?? "no response"
    }
    func post(_ body: String) -> String {
      send("POST /x HTTP/1.1\r\nHost: x\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)")
    }
    #expect(post("12345").hasSuffix("\r\n\r\n5"))
    #expect(post("1234567890").hasSuffix("\r\n\r\n10"))
    #expect(handler.asked.load(ordering: .relaxed) == 0)
    #expect(post("123456789012345").hasSuffix("\r\n\r\n15"))
    #expect(handler.asked.load(ordering: .relaxed) == 1)
    #expect(post(String(repeating: "x", count: 25)).hasPrefix("HTTP/1.1 413"))
    #expect(handler.asked.load(ordering: .relaxed) == 2)
    let chunked = send("POST /x HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5\r\n12345\r\n0\r\n\r\n")
    #expect(chunked.hasSuffix("\r\n\r\n5"))
    #expect(handler.asked.load(ordering: .relaxed) == 3)
  }
}
