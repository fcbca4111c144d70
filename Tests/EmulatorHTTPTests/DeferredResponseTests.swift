import Foundation
import Testing

@testable import EmulatorHTTP

#if canImport(Glibc)
  import Glibc
#endif

/// `HTTPHandling.deferred` over a real socket, without the storage or API layers: replies made
/// later on another thread, and replies made at once inside the work, reach the right requests,
/// in order, on a keep-alive connection.
@Suite struct DeferredResponseTests {
  /// `/later/N` replies from a Dispatch worker after N ms, rendering on the connection's thread;
  /// `/now` replies inside the work itself; anything else is answered inline.
  struct Handler: HTTPHandler {
    func handle(_ request: HTTPRequest) -> HTTPResponse { HTTPResponse(status: 500) }

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
      return .respond(HTTPResponse(status: 200, headers: [:], body: Array("inline".utf8)))
    }
  }

  @Test func deferredRepliesAreSentInRequestOrder() throws {
    var configuration = HTTPServerConfiguration()
    configuration.port = 0
    let server = HTTPServer(configuration: configuration, handler: Handler())
    let port = try server.start()
    defer { server.shutdown(gracePeriod: 1) }

    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = in_port_t(UInt16(port).bigEndian)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    let connected = withUnsafePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
      }
    }
    #expect(connected == 0)
    var timeout = timeval(tv_sec: 10, tv_usec: 0)
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))

    // Pipelined: a slow deferred reply must not be overtaken by the quicker ones behind it.
    let paths = ["/later/50", "/now", "/later/1", "/inline", "/later/20", "/now"]
    let requests = paths.map { "GET \($0) HTTP/1.1\r\nHost: x\r\n\r\n" }.joined()
    _ = requests.withCString { send(fd, $0, strlen($0), 0) }
    var received: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 4096)
    let expected = ["later 50", "now", "later 1", "inline", "later 20", "now"]
    while String(decoding: received, as: UTF8.self).components(separatedBy: "HTTP/1.1 ").count <= expected.count {
      let count = recv(fd, &buffer, buffer.count, 0)
      guard count > 0 else { break }
      received += buffer[0..<count]
    }
    let responses = String(decoding: received, as: UTF8.self).components(separatedBy: "HTTP/1.1 ").dropFirst()
    #expect(responses.count == expected.count)
    for (response, body) in zip(responses, expected) {
      #expect(response.hasPrefix(body == "now" ? "201" : "200"))
      #expect(response.hasSuffix("\r\n\r\n" + body))
    }
  }
}
