import EmulatorHTTP
import EmulatorStorage
import Foundation
import Testing

@testable import EmulatorAPI

/// The API behind the browser policies, as the server runs them (screen the head, then start),
/// without sockets.
struct BrowserHarness {
  let api: StorageAPI
  let handler: CrossOriginHandler

  init(origins: [String] = [], listeningOn address: String = "127.0.0.1", allowedHosts: [String] = []) throws {
    api = try APIHarness().api
    var configuration = CrossOriginConfiguration()
    for origin in origins { try configuration.origins.allow(origin) }
    configuration.hosts = try HostPolicy.forListening(on: address, allowedHosts: allowedHosts)
    configuration.exposedHeaders = StorageAPI.exposedHeaders
    handler = CrossOriginHandler(api, configuration: configuration)
  }

  @discardableResult
  func call(
    _ method: String, _ target: String, _ body: String = "", origin: String? = nil, host: String? = "localhost:9199",
    headers: [(String, String)] = []
  ) -> Reply {
    var head = HTTPRequestHead(method: method, target: target)
    if let host { head.headers.add("host", host) }
    if let origin { head.headers.add("origin", origin) }
    for (name, value) in headers { head.headers.add(name, value) }
    if let refused = handler.screen(head) { return Reply(refused) }
    switch handler.start(HTTPRequest(head: head, body: Array(body.utf8))) {
    case .respond(let response): return Reply(response)
    case .blocking(let work): return Reply(work())
    case .deferred(let work): return Reply(StorageAPI.waitForReply { work($0) })
    }
  }
}

@Suite struct CrossOriginRouteTests {
  let h: BrowserHarness
  static let app = "http://localhost:3000"
  static let hostile = "https://evil.example"
  static let object = "/v0/b/demo.appspot.com/o/dir%2Fo.txt"

  init() throws {
    h = try BrowserHarness()
    let upload = h.call(
      "POST", "/v0/b/demo.appspot.com/o?name=dir%2Fo.txt", "hello", headers: [("content-type", "text/plain")])
    #expect(upload.status == 200)
    #expect(h.call("PATCH", Self.object, "{\"metadata\":{\"team\":\"web\"}}").status == 200)
  }

  func metageneration() -> String? { h.call("GET", Self.object).string("metageneration") }

  // MARK: Preflights

  @Test func preflightAnswersWhatWasAskedWithinWhatTheRouteSupports() {
    let reply = h.call(
      "OPTIONS", Self.object, origin: Self.app,
      headers: [
        ("access-control-request-method", "PATCH"),
        ("access-control-request-headers", "authorization,x-firebase-storage-version, content-type,X-Firebase-GMPID"),
      ])
    #expect(reply.status == 204)
    #expect(reply.header("access-control-allow-origin") == Self.app)
    #expect(reply.header("access-control-allow-methods") == "PATCH")
    #expect(
      reply.header("access-control-allow-headers")
        == "authorization, x-firebase-storage-version, content-type, x-firebase-gmpid")
    #expect(reply.header("access-control-max-age") == "3600")
    #expect(reply.header("access-control-allow-private-network") == nil)
    #expect(reply.header("vary")?.contains("Origin") == true)
    #expect(reply.response.body.isEmpty)
  }

  @Test func preflightAllowsPrivateNetworkOnlyWhenAsked() {
    let reply = h.call(
      "OPTIONS", "/v0/b/demo.appspot.com/o?name=x", origin: "http://127.0.0.1:8080",
      headers: [("access-control-request-method", "POST"), ("access-control-request-private-network", "true")])
    #expect(reply.status == 204)
    #expect(reply.header("access-control-allow-private-network") == "true")
    #expect(reply.header("access-control-allow-headers") == nil)
  }

  @Test func preflightForAMethodTheRouteDoesNotServeIs405() {
    let reply = h.call(
      "OPTIONS", Self.object, origin: Self.app, headers: [("access-control-request-method", "PUT")])
    #expect(reply.status == 405)
    #expect(reply.header("allow") == "GET, HEAD, PATCH, POST, DELETE")
    #expect(reply.header("access-control-allow-methods") == nil)
    #expect(reply.json["error"]?["code"]?.description == "405")
  }

  /// OPTIONS asks; it never needs credentials and never reaches the store.
  @Test func preflightNeedsNoAuthAndChangesNothing() {
    let before = metageneration()
    for method in ["DELETE", "PATCH", "POST"] {
      let reply = h.call("OPTIONS", Self.object, origin: Self.app, headers: [("access-control-request-method", method)])
      #expect(reply.status == 204)
    }
    let withBody = h.call("OPTIONS", Self.object, "{\"contentType\":\"x/y\"}", origin: Self.app)
    #expect(withBody.status == 204)
    #expect(h.call("GET", Self.object).status == 200)
    #expect(metageneration() == before)
    #expect(h.call("GET", Self.object).string("contentType") == "text/plain")
  }

  @Test func optionsWithoutOriginListsTheMethods() {
    let reply = h.call("OPTIONS", "/storage/v1/b/demo.appspot.com/o/x")
    #expect(reply.status == 204)
    #expect(reply.header("allow") == "GET, HEAD, PATCH, PUT, DELETE")
    #expect(reply.header("access-control-allow-origin") == nil)
    #expect(h.call("OPTIONS", "/storage/v1/nowhere", origin: Self.app).status == 404)
  }

  /// The table the preflights use against what `dispatch` really serves: a method is in it
  /// exactly when the route does not answer 405.
  @Test func preflightMethodsAreExactlyWhatTheRoutesServe() throws {
    let session = try #require(
      h.call("POST", "/upload/storage/v1/b/demo.appspot.com/o?uploadType=resumable&name=s").header("location"))
    let id = try #require(session.split(separator: "upload_id=").last.map(String.init))
    let targets = [
      "/storage/v1/b", "/b", "/storage/v1/b/other", "/storage/v1/b/demo.appspot.com/storageLayout",
      "/storage/v1/b/demo.appspot.com/managedFolders", "/storage/v1/b/demo.appspot.com/o",
      "/storage/v1/b/demo.appspot.com/o?uploadType=media&name=n", "/b/demo.appspot.com/o?uploadType=media&name=n",
      "/v0/b/demo.appspot.com/o?name=n", "/upload/storage/v1/b/demo.appspot.com/o?uploadType=media&name=n",
      "/storage/v1/b/demo.appspot.com/o/p", "/b/demo.appspot.com/o/p",
      "/storage/v1/b/demo.appspot.com/o/p/copyTo/b/demo.appspot.com/o/q", "/v0/b/demo.appspot.com/o/p",
      "/download/storage/v1/b/demo.appspot.com/o/p", "/v0/b/demo.appspot.com/o?upload_id=\(id)",
      "/storage/v1/b/demo.appspot.com/o?upload_id=\(id)", "/b/demo.appspot.com/o?upload_id=\(id)",
      "/upload/storage/v1/b/demo.appspot.com/o?uploadType=resumable&upload_id=\(id)",
    ]
    for target in targets {
      let allowed = try #require(h.api.allowedMethods(for: HTTPRequestHead(method: "OPTIONS", target: target)))
      for method in ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"] {
        let status = h.call(method, target, "{}").status
        #expect((status == 405) == !allowed.contains(method), "\(method) \(target): \(status), table \(allowed)")
      }
    }
  }

  // MARK: Actual responses

  /// Every header the issue names, and the object's own custom metadata header, are readable.
  @Test func downloadsExposeEveryHeaderTheSDKsRead() throws {
    let token = try #require(h.call("GET", Self.object).string("downloadTokens"))
    let reply = h.call("GET", Self.object + "?alt=media&token=\(token)", origin: Self.app)
    #expect(reply.status == 200)
    #expect(reply.header("access-control-allow-origin") == Self.app)
    #expect(reply.header("vary") == "Origin")
    let exposed = Set(
      (reply.header("access-control-expose-headers") ?? "").split(separator: ",").map {
        $0.trimmingCharacters(in: .whitespaces).lowercased()
      })
    let named = [
      "X-Goog-Upload-URL", "X-Goog-Upload-Status", "X-Goog-Upload-Chunk-Granularity", "X-Goog-Upload-Size-Received",
      "X-Goog-Upload-Control-URL", "X-GUploader-UploadID", "Location", "Range", "ETag", "Content-Range",
      "Content-Length", "Content-Type", "Content-Disposition", "Content-Encoding", "X-Goog-Generation",
      "X-Goog-Metageneration", "X-Goog-Hash", "X-Goog-Stored-Content-Length", "X-Goog-Stored-Content-Encoding",
      "X-Goog-Meta-*", "X-Firebase-Storage-Version",
    ]
    for name in named { #expect(exposed.contains(name.lowercased()), "\(name) is not exposed") }
    #expect(reply.header("x-goog-meta-team") == "web")
    #expect(exposed.contains("x-goog-meta-team"))
  }

  @Test func resumableStartExposesTheSessionURL() {
    let reply = h.call(
      "POST", "/v0/b/demo.appspot.com/o?name=big.bin", "{}", origin: Self.app,
      headers: [
        ("x-goog-upload-protocol", "resumable"), ("x-goog-upload-command", "start"),
        ("x-goog-upload-header-content-length", "3"), ("content-type", "application/json; charset=utf-8"),
      ])
    #expect(reply.status == 200)
    #expect(reply.header("x-goog-upload-url") != nil)
    #expect(reply.header("access-control-allow-origin") == Self.app)
    #expect(reply.header("access-control-expose-headers")?.contains("X-Goog-Upload-URL") == true)
  }

  @Test(arguments: [
    ("GET", "/v0/b/demo.appspot.com/o/missing", "", 404),
    ("PATCH", "/v0/b/demo.appspot.com/o/dir%2Fo.txt", "{\"contentType\": 5}", 400),
    ("PATCH", "/storage/v1/b/demo.appspot.com/o/dir%2Fo.txt?ifMetagenerationMatch=99", "{}", 412),
    ("PUT", "/v0/b/demo.appspot.com/o/dir%2Fo.txt", "{}", 405),
    ("GET", "/storage/v1/nowhere", "", 404),
  ])
  func errorsCarryTheCORSHeaders(method: String, target: String, body: String, status: Int) {
    let reply = h.call(method, target, body, origin: Self.app)
    #expect(reply.status == status)
    #expect(reply.header("access-control-allow-origin") == Self.app)
    #expect(reply.header("vary") == "Origin")
    #expect(reply.header("access-control-expose-headers")?.contains("X-Goog-Upload-Status") == true)
    #expect(reply.json["error"]?["code"]?.description == String(status))
  }

  @Test func aBodyOverTheLimitIsAnsweredForItsOrigin() {
    let head = HTTPRequestHead(
      method: "PATCH", target: Self.object, headers: ["host": "localhost", "origin": Self.app])
    let response = h.handler.errorResponse(for: HTTPParseError(413, "too big"), head: head)
    #expect(response.status == 413)
    #expect(response.headers["access-control-allow-origin"] == Self.app)
    #expect(String(decoding: response.body, as: UTF8.self) == "{\"error\":{\"code\":413,\"message\":\"too big\"}}")
  }

  @Test func requestsWithoutOriginAreUnaffected() {
    let reply = h.call("GET", Self.object)
    #expect(reply.status == 200)
    #expect(reply.header("access-control-allow-origin") == nil)
    #expect(reply.header("access-control-expose-headers") == nil)
    #expect(reply.header("vary") == "Origin")
    #expect(h.call("DELETE", "/v0/b/demo.appspot.com/o/absent").status == 404)
  }

  // MARK: Cross-site requests

  /// A page of another site may send these without a preflight (a text/plain POST) or try them
  /// anyway: each is refused with a JSON 403, and nothing changes.
  @Test(arguments: [
    ("POST", "/v0/b/demo.appspot.com/o?name=pwned.txt", "pwned"),
    ("POST", "/upload/storage/v1/b/demo.appspot.com/o?uploadType=media&name=pwned.txt", "pwned"),
    ("POST", "/storage/v1/b?project=p", "{\"name\":\"pwned-bucket\"}"),
    ("PATCH", "/v0/b/demo.appspot.com/o/dir%2Fo.txt", "{\"contentType\":\"text/html\"}"),
    ("PUT", "/storage/v1/b/demo.appspot.com/o/dir%2Fo.txt", "{\"contentType\":\"text/html\"}"),
    ("DELETE", "/v0/b/demo.appspot.com/o/dir%2Fo.txt", ""),
    ("POST", "/v0/b/demo.appspot.com/o/dir%2Fo.txt?delete_token=x", ""),
    ("OPTIONS", "/v0/b/demo.appspot.com/o/dir%2Fo.txt", ""),
  ])
  func crossSiteWritesAreRefusedAndChangeNothing(method: String, target: String, body: String) {
    let before = metageneration()
    let reply = h.call(
      method, target, body, origin: Self.hostile,
      headers: [("content-type", "text/plain"), ("access-control-request-method", "DELETE")])
    #expect(reply.status == 403)
    #expect(reply.json["error"]?["code"]?.description == "403")
    #expect(reply.text.contains("evil.example"))
    #expect(reply.header("access-control-allow-origin") == nil)
    #expect(h.call("GET", "/v0/b/demo.appspot.com/o/pwned.txt").status == 404)
    #expect(h.call("GET", "/storage/v1/b/pwned-bucket").status == 404)
    #expect(metageneration() == before)
    #expect(h.call("GET", Self.object).string("contentType") == "text/plain")
    #expect(h.call("GET", Self.object + "?alt=media").text == "hello")
  }

  /// A read from another site is served (a browser hides it from that page), without CORS headers.
  @Test func crossSiteReadsGetNoCORSHeaders() {
    let reply = h.call("GET", Self.object, origin: Self.hostile)
    #expect(reply.status == 200)
    #expect(reply.header("access-control-allow-origin") == nil)
    #expect(reply.header("access-control-expose-headers") == nil)
    #expect(reply.header("vary") == "Origin")
  }

  @Test func configuredOriginsAreAllowed() throws {
    let exact = try BrowserHarness(origins: ["https://app.example.com"])
    let allowed = exact.call(
      "POST", "/v0/b/demo.appspot.com/o?name=a.txt", "a", origin: "https://app.example.com")
    #expect(allowed.status == 200)
    #expect(allowed.header("access-control-allow-origin") == "https://app.example.com")
    #expect(
      exact.call("POST", "/v0/b/demo.appspot.com/o?name=b.txt", "b", origin: "https://app.example.org").status == 403)
    let any = try BrowserHarness(origins: ["*"])
    let anywhere = any.call("DELETE", "/v0/b/demo.appspot.com/o/none", origin: "https://anywhere.example")
    #expect(anywhere.status == 404)
    #expect(anywhere.header("access-control-allow-origin") == "https://anywhere.example")
  }

  /// A page the emulator served itself (a web UI opened at a LAN address, in Docker) writes
  /// same-origin; a DNS-rebinding page is same-origin too, but under a name it chose.
  @Test func sameOriginPagesOfAddressesAndAllowedNamesMayWrite() throws {
    let docker = try BrowserHarness(listeningOn: "0.0.0.0")
    let lan = docker.call(
      "POST", "/v0/b/demo.appspot.com/o?name=ui.txt", "ui", origin: "http://192.168.1.10:9199",
      host: "192.168.1.10:9199")
    #expect(lan.status == 200)
    #expect(lan.header("access-control-allow-origin") == "http://192.168.1.10:9199")
    let rebound = docker.call(
      "POST", "/v0/b/demo.appspot.com/o?name=pwned.txt", "x", origin: "http://attacker.example:9199",
      host: "attacker.example:9199")
    #expect(rebound.status == 403)
    #expect(docker.call("GET", "/v0/b/demo.appspot.com/o/pwned.txt").status == 404)
    let named = try BrowserHarness(listeningOn: "0.0.0.0", allowedHosts: ["storage"])
    #expect(
      named.call("DELETE", "/v0/b/demo.appspot.com/o/none", origin: "http://storage:9199", host: "storage:9199").status
        == 404)
    let elsewhere = h.call(
      "POST", "/v0/b/demo.appspot.com/o?name=x.txt", "x", origin: "http://192.168.1.10:9199", host: "127.0.0.1:9199")
    #expect(elsewhere.status == 403)
  }

  // MARK: Host

  @Test func dnsRebindingHostIsRefusedOnLoopback() {
    let reply = h.call("GET", "/v0/b/demo.appspot.com/o", host: "attacker.example:9199")
    #expect(reply.status == 403)
    #expect(reply.text.contains("--allowed-host attacker.example"))
    #expect(!reply.text.contains("dir/o.txt"))
    let write = h.call(
      "DELETE", Self.object, host: "attacker.example:9199", headers: [("origin", "http://attacker.example:9199")])
    #expect(write.status == 403)
    #expect(h.call("GET", Self.object).status == 200)
    for host in ["localhost:9199", "127.0.0.1:9199", "[::1]:9199", "192.168.1.20:9199"] {
      #expect(h.call("GET", "/v0/b/demo.appspot.com/o", host: host).status == 200, "\(host)")
    }
    #expect(h.call("GET", "/v0/b/demo.appspot.com/o", host: nil).status == 200)
  }

  @Test func hostsAreUnrestrictedOnAllInterfacesUnlessConfigured() throws {
    let docker = try BrowserHarness(listeningOn: "0.0.0.0")
    #expect(docker.call("GET", "/storage/v1/b", host: "storage:9199").status == 200)
    #expect(docker.call("GET", "/storage/v1/b", host: "anything.example").status == 200)
    let configured = try BrowserHarness(listeningOn: "0.0.0.0", allowedHosts: ["storage"])
    #expect(configured.call("GET", "/storage/v1/b", host: "storage:9199").status == 200)
    #expect(configured.call("GET", "/storage/v1/b", host: "anything.example").status == 403)
    let named = try BrowserHarness(allowedHosts: ["dev.internal"])
    #expect(named.call("GET", "/storage/v1/b", host: "dev.internal:9199").status == 200)
  }
}
