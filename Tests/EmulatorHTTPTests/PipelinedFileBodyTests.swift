import Foundation
import Testing

@testable import EmulatorHTTP

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Pipelining order with bodies sent from a file: while a large file body still waits for a
/// client that reads slowly, the next pipelined request must not be answered into the middle of
/// it (its head written before the rest of the file). The connection starts the next request
/// only once the response before it is completely written.
@Suite struct PipelinedFileBodyTests {
  /// Owns the file's descriptor for as long as a `FileRegion` points at it.
  final class OpenFile: Sendable {
    let fd: Int32
    init(_ path: String) { fd = open(path, O_RDONLY | O_CLOEXEC) }
    deinit { close(fd) }
  }

  struct Handler: HTTPHandler {
    let file: OpenFile
    let size: Int
    func start(_ request: HTTPRequest) -> HTTPHandling {
      if request.head.rawPath == "/file" {
        var response = HTTPResponse(status: 200)
        response.bodyFile = FileRegion(fd: file.fd, offset: 0, length: size, owner: file)
        return .respond(response)
      }
      let answer = HTTPResponse(status: 200, headers: [:], body: Array("small".utf8))
      return request.head.rawPath == "/lane" ? .blocking { answer } : .respond(answer)
    }
  }

  @Test(arguments: ["/lane", "/inline"])
  func aPipelinedRequestIsNotAnsweredIntoAFileBodyStillBeingSent(next: String) throws {
    let folder = try TemporaryFolder.make("se-http-pipeline")
    defer { try? FileManager.default.removeItem(at: folder) }
    let path = folder.appendingPathComponent("big").path
    // 8 MiB, far more than the socket buffers hold, of a pattern with a prime period that shows
    // any bytes out of place. Letters only, so the client's UTF-8 view of the stream needs no
    // repairs.
    let size = 8 << 20
    let period = (0..<4093).map { UInt8(ascii: "a") + UInt8($0 * 7 % 26) }
    var content: [UInt8] = []
    content.reserveCapacity(size + period.count)
    while content.count < size { content += period }
    content.removeLast(content.count - size)
    #expect(FileManager.default.createFile(atPath: path, contents: Data(content)))
    var configuration = HTTPServerConfiguration()
    configuration.port = 0
    configuration.eventLoops = 1
    let server = HTTPServer(configuration: configuration, handler: Handler(file: OpenFile(path), size: size))
    let port = try server.start()
    defer { server.shutdown(gracePeriod: 1) }

    let client = try RawSocket(port: port)
    client.send("GET /file HTTP/1.1\r\nHost: x\r\n\r\nGET \(next) HTTP/1.1\r\nHost: x\r\n\r\n")
    // Let the server fill the socket buffers and wait for writability with the second request
    // already decoded.
    Thread.sleep(forTimeInterval: 0.3)
    let (bytes, _) = client.receive { RawSocket.split($0).count >= 2 }
    let responses = RawSocket.split(bytes)
    #expect(responses.count == 2)
    guard responses.count == 2, let headEnd = bytes.firstRange(of: Array("\r\n\r\n".utf8)) else { return }
    let body = Array(bytes[headEnd.upperBound..<(headEnd.upperBound + size)])
    #expect(body == content, "the file body arrived altered")
    #expect(responses[1].hasPrefix("HTTP/1.1 200") && responses[1].hasSuffix("\r\n\r\nsmall"))
  }
}
