import EmulatorApp
import Foundation
import Testing

/// The browser policies over real sockets, and their settings from flags, the environment and the
/// config file.
@Suite struct BrowserPolicyEndToEndTests {
  static let app = "http://localhost:5173"

  @Test func preflightAndActualRequestOverASocket() throws {
    let server = try RunningEmulator(inMemory: true)
    defer { server.stop() }
    let preflight = try Curl.request(
      "OPTIONS", server.base + "/v0/b/web.appspot.com/o?name=a.txt",
      headers: [
        "Origin: \(Self.app)", "Access-Control-Request-Method: POST",
        "Access-Control-Request-Headers: x-goog-upload-protocol, x-firebase-storage-version",
      ])
    #expect(preflight.status == 204)
    #expect(preflight.header("access-control-allow-origin") == Self.app)
    #expect(preflight.header("access-control-allow-methods") == "POST")
    #expect(preflight.header("access-control-allow-headers") == "x-goog-upload-protocol, x-firebase-storage-version")
    #expect(preflight.header("access-control-max-age") == "3600")
    let upload = try Curl.request(
      "POST", server.base + "/v0/b/web.appspot.com/o?name=a.txt", body: "hi", headers: ["Origin: \(Self.app)"])
    #expect(upload.status == 200)
    #expect(upload.header("access-control-allow-origin") == Self.app)
    #expect(upload.header("vary") == "Origin")
  }

  @Test func aBucketsCORSConfigurationAppliesToItsDownloadsOverASocket() throws {
    let server = try RunningEmulator(inMemory: true)
    defer { server.stop() }
    let created = try Curl.request(
      "POST", server.base + "/storage/v1/b?project=p",
      body: #"{"name":"site","cors":[{"origin":["https://site.example"],"method":["GET"],"responseHeader":["Content-Type"]}]}"#,
      headers: ["Content-Type: application/json"])
    #expect(created.status == 200)
    #expect(created.text.contains("\"cors\""))
    _ = try Curl.request("POST", server.base + "/upload/storage/v1/b/site/o?uploadType=media&name=i.txt", body: "i")
    let download = try Curl.request(
      "GET", server.base + "/download/storage/v1/b/site/o/i.txt", headers: ["Origin: https://site.example"])
    #expect(download.text == "i")
    #expect(download.header("access-control-allow-origin") == "https://site.example")
    #expect(download.header("access-control-expose-headers") == "Content-Type")
  }

  /// A hostile page's upload is refused from its head: the 403 comes back although not one byte of
  /// the announced 50 MB body was sent, and the connection is closed.
  @Test func crossSitePostIsRefusedBeforeItsBodyIsRead() throws {
    let server = try RunningEmulator(inMemory: true)
    defer { server.stop() }
    let socket = try RawSocket(port: server.port)
    socket.send(
      "POST /v0/b/web.appspot.com/o?name=pwned.txt HTTP/1.1\r\nHost: 127.0.0.1:\(server.port)\r\n"
        + "Origin: https://evil.example\r\nContent-Type: text/plain\r\nContent-Length: 50000000\r\n\r\n")
    let (bytes, closed) = socket.receive()
    let text = String(decoding: bytes, as: UTF8.self)
    #expect(text.hasPrefix("HTTP/1.1 403 "))
    #expect(text.lowercased().contains("connection: close"))
    #expect(!text.lowercased().contains("access-control-allow-origin"))
    #expect(closed)
    #expect(try Curl.request("GET", server.base + "/v0/b/web.appspot.com/o/pwned.txt").status == 404)
  }

  /// DNS rebinding: a page at http://attacker.example:<port>, whose name now resolves to
  /// 127.0.0.1, is "same origin" with the emulator; its Host gives it away.
  @Test func dnsRebindingHostIsRefusedOverASocket() throws {
    let server = try RunningEmulator(inMemory: true)
    defer { server.stop() }
    _ = try Curl.request("POST", server.base + "/v0/b/web.appspot.com/o?name=secret.txt", body: "secret")
    let socket = try RawSocket(port: server.port)
    socket.send(
      "GET /v0/b/web.appspot.com/o/secret.txt?alt=media HTTP/1.1\r\nHost: attacker.example:\(server.port)\r\n\r\n")
    let (bytes, closed) = socket.receive()
    let text = String(decoding: bytes, as: UTF8.self)
    #expect(text.hasPrefix("HTTP/1.1 403 "))
    #expect(!text.contains("secret\r\n") && !text.hasSuffix("secret"))
    #expect(closed)
    let local = try Curl.request(
      "GET", server.base + "/v0/b/web.appspot.com/o/secret.txt?alt=media", headers: ["Host: localhost:\(server.port)"])
    #expect(local.text == "secret")
  }

  /// A body over the limit is refused by the HTTP layer, yet the page can read why.
  @Test func bodyOverTheLimitCarriesTheCORSHeaders() throws {
    let server = try RunningEmulator(inMemory: true) { $0.api.maxUploadBytes = 1000 }
    defer { server.stop() }
    let socket = try RawSocket(port: server.port)
    socket.send(
      "POST /v0/b/web.appspot.com/o?name=big HTTP/1.1\r\nHost: 127.0.0.1\r\nOrigin: \(Self.app)\r\n"
        + "Content-Length: 5000\r\n\r\n")
    let text = String(decoding: socket.receive().bytes, as: UTF8.self)
    #expect(text.hasPrefix("HTTP/1.1 413 "))
    #expect(text.contains("access-control-allow-origin: \(Self.app)\r\n"))
    #expect(text.contains("\"code\":413"))
  }

  /// The binary itself, as a Docker Compose file would start it.
  @Test func theBinaryAppliesCORSOriginFlags() throws {
    let server = try EmulatorProcess(arguments: ["--in-memory", "--cors-origin", "https://app.example.com"])
    defer { _ = server.terminate() }
    let allowed = try Curl.request(
      "POST", server.base + "/v0/b/web.appspot.com/o?name=a.txt", body: "a",
      headers: ["Origin: https://app.example.com"])
    #expect(allowed.status == 200)
    #expect(allowed.header("access-control-allow-origin") == "https://app.example.com")
    let refused = try Curl.request(
      "POST", server.base + "/v0/b/web.appspot.com/o?name=b.txt", body: "b", headers: ["Origin: https://b.example"])
    #expect(refused.status == 403)
  }
}
