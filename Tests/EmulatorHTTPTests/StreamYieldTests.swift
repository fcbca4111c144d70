import Foundation
import Synchronization
import Testing

@testable import EmulatorHTTP

/// A body stream that does a slice of work without output (an empty piece) lets its loop serve
/// other connections before it is asked again: with one event loop, a request on a second
/// connection is answered while the stream is still producing nothing (a gzip body of millions
/// of empty members used to hold the loop until it was done).
@Suite struct StreamYieldTests {
  final class Flags: Sendable {
    let otherAnswered = Atomic<Bool>(false)
  }

  /// Empty pieces until the other request has been answered (or 3 s have passed).
  final class PatientStream: HTTPBodyStream {
    let flags: Flags
    let deadline = Date().addingTimeInterval(3)
    let done = Atomic<Bool>(false)
    init(_ flags: Flags) { self.flags = flags }

    func next() throws -> [UInt8]? {
      if done.load(ordering: .relaxed) { return nil }
      if flags.otherAnswered.load(ordering: .relaxed) {
        done.store(true, ordering: .relaxed)
        return Array("served the other connection first".utf8)
      }
      if Date() > deadline {
        done.store(true, ordering: .relaxed)
        return Array("starved".utf8)
      }
      return []
    }
  }

  struct Handler: HTTPHandler {
    let flags: Flags
    func start(_ request: HTTPRequest) -> HTTPHandling {
      if request.head.rawPath == "/stream" {
        var response = HTTPResponse(status: 200)
        response.bodyStream = PatientStream(flags)
        return .respond(response)
      }
      flags.otherAnswered.store(true, ordering: .relaxed)
      return .respond(HTTPResponse(status: 200, headers: [:], body: Array("other".utf8)))
    }
  }

  private func exchange(_ client: RawSocket, _ request: String, until marker: String) -> String {
    client.send(request)
    let (bytes, _) = client.receive { String(decoding: $0, as: UTF8.self).contains(marker) }
    return String(decoding: bytes, as: UTF8.self)
  }

  @Test func emptyStreamPiecesYieldTheLoopToOtherConnections() throws {
    var configuration = HTTPServerConfiguration()
    configuration.port = 0
    configuration.eventLoops = 1
    let flags = Flags()
    let server = HTTPServer(configuration: configuration, handler: Handler(flags: flags))
    let port = try server.start()
    defer { server.shutdown(gracePeriod: 1) }
    let streaming = try RawSocket(port: port)
    streaming.send("GET /stream HTTP/1.1\r\nHost: x\r\n\r\n")
    Thread.sleep(forTimeInterval: 0.1)
    let other = try RawSocket(port: port)
    let started = Date()
    let answer = exchange(other, "GET /other HTTP/1.1\r\nHost: x\r\n\r\n", until: "other")
    #expect(answer.hasSuffix("other"))
    #expect(Date().timeIntervalSince(started) < 2)
    let streamed = exchange(streaming, "", until: "0\r\n\r\n")
    #expect(streamed.contains("served the other connection first"))
  }
}
