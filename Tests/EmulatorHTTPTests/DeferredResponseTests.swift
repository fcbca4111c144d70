import Foundation
import Synchronization
import Testing

@testable import EmulatorHTTP

/// `HTTPHandling.deferred` over a real socket, without the storage or API layers: replies made
/// later on another thread, and replies made at once inside the work, reach the right requests,
/// in order, on a keep-alive connection.
@Suite struct DeferredResponseTests {
  /// `/later/N` replies from a Dispatch worker after N ms, rendering on the connection's thread;
  /// `/now` replies inside the work itself; anything else is answered inline.
  struct Handler: HTTPHandler {

    func start(_ request: HTTPRequest) -> HTTPHandling {
      let path = request.head.rawPath
      if path.hasPrefix("/later/") {
        let delay = Int(path.dropFirst("/later/".count)) ?? 0
        return .deferred { responder in
          DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(delay)) {
            responder.reply { HTTPResponse(status: 200, headers: [:], body: Array("later \(delay)".utf8)) }
          }
        }
      }
      if path == "/now" {
        return .deferred { $0.reply(HTTPResponse(status: 201, headers: [:], body: Array("now".utf8))) }
      }
      if path == "/turn-end" {
        // Replied from the end of the loop's turn: the work has returned by then, and the reply
        // is made on the connection's own thread.
        return .deferred { responder in
          let returned = Atomic<Bool>(false)
          guard let turnEnd = responder.turnEnd else {
            return responder.reply(HTTPResponse(status: 500, headers: [:], body: Array("no turn end".utf8)))
          }
          turnEnd.run {
            let ok = returned.load(ordering: .acquiring)
            responder.reply(HTTPResponse(status: ok ? 200 : 500, headers: [:], body: Array("turn end".utf8)))
          }
          returned.store(true, ordering: .releasing)
        }
      }
      if path == "/racing" {
        // Replied from another thread while the work is still running on the connection's.
        return .deferred { responder in
          let replied = DispatchSemaphore(value: 0)
          DispatchQueue.global().async {
            responder.reply(HTTPResponse(status: 200, headers: [:], body: Array("racing".utf8)))
            replied.signal()
          }
          replied.wait()
        }
      }
      return .respond(HTTPResponse(status: 200, headers: [:], body: Array("inline".utf8)))
    }
  }

  /// A server with `Handler` on a free port, and a client connected to it.
  private func connect() throws -> (server: HTTPServer, client: RawSocket) {
    var configuration = HTTPServerConfiguration()
    configuration.port = 0
    let server = HTTPServer(configuration: configuration, handler: Handler())
    let port = try server.start()
    do {
      return (server, try RawSocket(port: port))
    } catch {
      server.shutdown(gracePeriod: 1)
      throw error
    }
  }

  /// Sends a GET of each path at once (pipelined) and returns the answers, one per path.
  private func pipelined(_ paths: [String], on client: RawSocket) -> [String] {
    client.send(paths.map { "GET \($0) HTTP/1.1\r\nHost: x\r\n\r\n" }.joined())
    let responses = client.receiveResponses(paths.count)
    #expect(responses.count == paths.count)
    return responses
  }

  @Test func deferredRepliesAreSentInRequestOrder() throws {
    let (server, client) = try connect()
    defer { server.shutdown(gracePeriod: 1) }
    // Pipelined: a slow deferred reply must not be overtaken by the quicker ones behind it.
    let responses = pipelined(["/later/50", "/now", "/later/1", "/inline", "/later/20", "/now"], on: client)
    let expected = ["later 50", "now", "later 1", "inline", "later 20", "now"]
    for (response, body) in zip(responses, expected) {
      #expect(response.hasPrefix(body == "now" ? "HTTP/1.1 201" : "HTTP/1.1 200"))
      #expect(response.hasSuffix("\r\n\r\n" + body))
    }
  }

  /// A deferred request's responder carries its loop's turn end; work scheduled there runs after
  /// the handler returned and answers the right request, among pipelined ones of every kind.
  @Test func workScheduledForTheEndOfTheTurnAnswersItsRequest() throws {
    let (server, client) = try connect()
    defer { server.shutdown(gracePeriod: 1) }
    let paths = (0..<12).map { ["/turn-end", "/now", "/turn-end", "/later/1"][$0 % 4] }
    let responses = pipelined(paths, on: client)
    for (response, path) in zip(responses, paths) {
      let body = path == "/later/1" ? "later 1" : path == "/turn-end" ? "turn end" : "now"
      #expect(response.hasPrefix(path == "/now" ? "HTTP/1.1 201" : "HTTP/1.1 200"), "\(path): \(response)")
      #expect(response.hasSuffix("\r\n\r\n" + body))
    }
  }

  /// Replies made inside the work (completed when it returns, without the loop's queue) and
  /// replies made on another thread while the work runs (through the queue) interleave on one
  /// keep-alive connection without a lost or misplaced answer.
  @Test func repliesMadeWhileTheWorkRunsAreAnsweredInOrder() throws {
    let (server, client) = try connect()
    defer { server.shutdown(gracePeriod: 1) }
    let paths = (0..<40).map { ["/now", "/racing", "/inline", "/later/1"][$0 % 4] }
    let responses = pipelined(paths, on: client)
    for (response, path) in zip(responses, paths) {
      let body = path == "/later/1" ? "later 1" : String(path.dropFirst())
      #expect(response.hasSuffix("\r\n\r\n" + body))
    }
    // One at a time too (nothing pipelined behind the inline reply).
    for path in ["/now", "/racing", "/now"] {
      client.send("GET \(path) HTTP/1.1\r\nHost: x\r\n\r\n")
      #expect(client.receiveResponses(1).first?.hasSuffix("\r\n\r\n" + path.dropFirst()) == true)
    }
  }
}
