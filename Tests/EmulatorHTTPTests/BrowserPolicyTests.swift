import Dispatch
import Testing

@testable import EmulatorHTTP

/// The origin and Host policies from strings, and `CrossOriginHandler` around a stand-in handler
/// (the HTTP layer alone: no storage).
@Suite struct BrowserPolicyTests {
  @Test(arguments: [
    "http://localhost", "http://localhost:3000", "https://localhost:5173", "HTTP://LOCALHOST:8080",
    "http://127.0.0.1:5000", "http://127.255.0.9", "https://127.0.0.1:443", "http://[::1]:4200", "http://[::1]",
    "http://localhost.:3000",
  ])
  func loopbackOriginsAreAllowedByDefault(origin: String) {
    #expect(OriginPolicy().allows(origin))
  }

  /// Look-alikes of loopback origins that a hostile site could own or forge.
  @Test(arguments: [
    "http://localhost.evil.example", "http://evil.example", "http://127.0.0.1.nip.io", "http://128.0.0.1",
    "http://127.0.0.1:99999", "http://127.0.0.01", "http://127.1", "ftp://localhost", "http://localhost/",
    "http://localhost:3000/path", "null", "", "http://[::2]", "http://[::1", "http://localhost:", "file://",
    "http://evil.localhost", "http://user@localhost",
  ])
  func lookAlikeOriginsAreNotLoopback(origin: String) {
    #expect(!OriginPolicy().allows(origin))
  }

  @Test func addedOriginsAreExactAndCaseInsensitive() throws {
    var policy = OriginPolicy()
    try policy.allow("https://App.Example.com/")
    try policy.allow("capacitor://localhost")
    try policy.allow("null")
    #expect(policy.allows("https://app.example.com"))
    #expect(policy.allows("capacitor://localhost"))
    #expect(policy.allows("null"))
    #expect(!policy.allows("https://app.example.com:8443"))
    #expect(!policy.allows("http://app.example.com"))
    #expect(!policy.allows("https://other.example.com"))
    try policy.allow("*")
    #expect(policy.allows("https://anything.example"))
  }

  @Test(arguments: [
    "example.com", "http://", "http://a/b", "http://a?b", "://a", "1http://a", "http://a b", "http://a,b",
  ])
  func malformedConfiguredOriginsAreRefused(origin: String) {
    var policy = OriginPolicy()
    #expect(throws: OriginPolicyError.self) { try policy.allow(origin) }
  }

  @Test func hostPolicyIsRestrictedOnLoopbackOnly() throws {
    #expect(try HostPolicy.forListening(on: "127.0.0.1", allowedHosts: []).restricted)
    #expect(try HostPolicy.forListening(on: "::1", allowedHosts: []).restricted)
    #expect(try HostPolicy.forListening(on: "localhost", allowedHosts: []).restricted)
    #expect(try !HostPolicy.forListening(on: "0.0.0.0", allowedHosts: []).restricted)
    #expect(try !HostPolicy.forListening(on: "::", allowedHosts: []).restricted)
    #expect(try HostPolicy.forListening(on: "0.0.0.0", allowedHosts: ["storage"]).restricted)
    #expect(try !HostPolicy.forListening(on: "127.0.0.1", allowedHosts: ["*"]).restricted)
    #expect(throws: HostPolicyError.self) { try HostPolicy.forListening(on: "127.0.0.1", allowedHosts: ["a:9199"]) }
    #expect(throws: HostPolicyError.self) { try HostPolicy.forListening(on: "127.0.0.1", allowedHosts: [""]) }
  }

  @Test(arguments: [
    "localhost", "localhost:9199", "LOCALHOST:9199", "127.0.0.1:9199", "127.0.0.1", "[::1]:9199", "[::1]",
    "10.0.0.5:9199", "192.168.1.20", "[fe80::1]:9199", "storage:9199", "Storage.Internal.:80",
    "my-bucket.localhost:9199", "a.b.LOCALHOST.", "localhost.",
  ])
  func loopbackNamesIPLiteralsAndAllowedNamesAreAnswered(host: String) throws {
    let policy = try HostPolicy.forListening(on: "127.0.0.1", allowedHosts: ["storage", "storage.internal"])
    #expect(policy.allows(host))
    #expect(policy.allows(nil))
  }

  /// DNS rebinding: names an attacker's DNS can point at 127.0.0.1.
  @Test(arguments: [
    "evil.example", "evil.example:9199", "localhost.evil.example:9199", "127.0.0.1.evil.example", "storage.evil",
    "127.0.0.1:99999", "[::1", "x", "1.2.3", "01.2.3.4", "evil.example:", "[::1]x",
    "evillocalhost", ".localhost", "localhost.evil", "localhost..",
  ])
  func reboundNamesAreRefused(host: String) throws {
    let policy = try HostPolicy.forListening(on: "127.0.0.1", allowedHosts: ["storage"])
    #expect(!policy.allows(host))
    #expect(try HostPolicy.forListening(on: "0.0.0.0", allowedHosts: []).allows(host))
  }

  // MARK: The handler around a stand-in

  /// Answers every request with 200 and a custom header, in the way the test asks.
  struct StandIn: HTTPHandler {
    enum Mode: Sendable { case respond, deferred, blocking }
    let mode: Mode
    func handle(_ request: HTTPRequest) -> HTTPResponse {
      HTTPResponse(status: 200, headers: ["x-goog-meta-color": "blue", "content-type": "text/plain"], body: [1])
    }
    func start(_ request: HTTPRequest) -> HTTPHandling {
      switch mode {
      case .respond: .respond(handle(request))
      case .blocking: .blocking { handle(request) }
      case .deferred: .deferred { responder in DispatchQueue.global().async { responder.reply(handle(request)) } }
      }
    }
    func allowedMethods(for head: HTTPRequestHead) -> [String]? { head.rawPath == "/r" ? ["GET", "PUT"] : nil }
  }

  static func run(_ handling: HTTPHandling) -> HTTPResponse {
    switch handling {
    case .respond(let response): return response
    case .blocking(let work): return work()
    case .deferred(let work):
      let done = DispatchSemaphore(value: 0)
      let box = Box()
      work(
        HTTPResponder { make in
          box.response = make()
          done.signal()
        })
      done.wait()
      return box.response!
    }
  }

  final class Box: @unchecked Sendable {  // written once before the semaphore is signalled
    var response: HTTPResponse?
  }

  @Test(arguments: [StandIn.Mode.respond, .deferred, .blocking])
  func everyWayOfAnsweringGetsTheCORSHeaders(mode: StandIn.Mode) {
    let handler = CrossOriginHandler(StandIn(mode: mode), configuration: CrossOriginConfiguration())
    let head = HTTPRequestHead(method: "PUT", target: "/r", headers: ["origin": "http://localhost:3000"])
    #expect(handler.screen(head) == nil)
    let response = Self.run(handler.start(HTTPRequest(head: head)))
    #expect(response.headers["access-control-allow-origin"] == "http://localhost:3000")
    #expect(response.headers["vary"] == "Origin")
    #expect(response.headers["access-control-expose-headers"] == "x-goog-meta-color")
    let plain = Self.run(handler.start(HTTPRequest(head: HTTPRequestHead(method: "GET", target: "/r"))))
    #expect(plain.headers["access-control-allow-origin"] == nil)
    #expect(plain.headers["access-control-expose-headers"] == nil)
    #expect(plain.headers["vary"] == "Origin")
  }

  @Test func optionsWithoutOriginListsTheMethodsAndUnknownTargetsAre404() {
    let handler = CrossOriginHandler(StandIn(mode: .respond), configuration: CrossOriginConfiguration())
    let known = handler.answer(HTTPRequest(head: HTTPRequestHead(method: "OPTIONS", target: "/r")))
    #expect(known.status == 204)
    #expect(known.headers["allow"] == "GET, PUT")
    #expect(known.headers["access-control-allow-origin"] == nil)
    let unknown = handler.answer(HTTPRequest(head: HTTPRequestHead(method: "OPTIONS", target: "/nowhere")))
    #expect(unknown.status == 404)
  }

  /// A resource with its own CORS configuration (as a GCS bucket's `cors` applies to its
  /// downloads): its entries, not the server-wide policy, decide.
  struct ConfiguredResource: HTTPHandler {
    static let rules = [
      CrossOriginRule(
        origins: ["https://shop.example"], methods: ["GET", "HEAD"],
        responseHeaders: ["Content-Type", "x-goog-meta-color"], maxAgeSeconds: 600),
      CrossOriginRule(origins: ["*"], methods: ["PUT"]),
    ]
    func start(_ request: HTTPRequest) -> HTTPHandling {
      .respond(
        HTTPResponse(status: 200, headers: ["x-goog-meta-color": "blue", "x-goog-hash": "crc32c=AAAAAA=="], body: [1]))
    }
    func allowedMethods(for head: HTTPRequestHead) -> [String]? { ["GET", "HEAD", "PUT"] }
    func crossOriginRules(for head: HTTPRequestHead) -> [CrossOriginRule]? { head.rawPath == "/d" ? Self.rules : nil }
  }

  @Test func aResourcesOwnCORSConfigurationDecidesForIt() {
    let handler = CrossOriginHandler(ConfiguredResource(), configuration: CrossOriginConfiguration())
    func get(_ target: String, _ origin: String, method: String = "GET") -> HTTPResponse {
      let head = HTTPRequestHead(method: method, target: target, headers: ["origin": origin])
      return handler.screen(head) ?? handler.answer(HTTPRequest(head: head))
    }
    // The entry's origin, though the server-wide policy does not allow it: its response headers only.
    let shop = get("/d", "https://shop.example")
    #expect(shop.headers["access-control-allow-origin"] == "https://shop.example")
    #expect(shop.headers["access-control-expose-headers"] == "Content-Type, x-goog-meta-color")
    #expect(shop.headers["vary"] == "Origin")
    // A loopback origin the entries do not name gets nothing, as on GCS.
    let local = get("/d", "http://localhost:3000")
    #expect(local.status == 200)
    #expect(local.headers["access-control-allow-origin"] == nil)
    // `*` entries match any origin for their methods.
    #expect(
      get("/d", "http://localhost:3000", method: "PUT").headers["access-control-allow-origin"]
        == "http://localhost:3000")
    // Elsewhere the server-wide policy applies.
    #expect(get("/other", "http://localhost:3000").headers["access-control-allow-origin"] == "http://localhost:3000")
    #expect(get("/other", "https://shop.example").headers["access-control-allow-origin"] == nil)
  }

  @Test func preflightsOfAConfiguredResourceFollowItsEntries() {
    let handler = CrossOriginHandler(ConfiguredResource(), configuration: CrossOriginConfiguration())
    func preflight(_ origin: String, _ method: String) -> HTTPResponse {
      let head = HTTPRequestHead(
        method: "OPTIONS", target: "/d",
        headers: ["origin": origin, "access-control-request-method": method, "access-control-request-headers": "range"])
      return handler.screen(head) ?? handler.answer(HTTPRequest(head: head))
    }
    let shop = preflight("https://shop.example", "GET")
    #expect(shop.status == 204)
    #expect(shop.headers["access-control-allow-methods"] == "GET")
    #expect(shop.headers["access-control-allow-headers"] == "Content-Type, x-goog-meta-color")
    #expect(shop.headers["access-control-max-age"] == "600")
    let anyone = preflight("https://elsewhere.example", "PUT")
    #expect(anyone.status == 204)
    #expect(anyone.headers["access-control-max-age"] == nil)
    let refused = preflight("http://localhost:3000", "GET")
    #expect(refused.status == 403)
    #expect(refused.headers["access-control-allow-origin"] == nil)
  }

  /// The handler's `screen` runs from `bodyLimit`: a refusal ends decoding before the body.
  @Test func aHeadRefusedByTheHandlerEndsDecodingBeforeItsBody() {
    var decoder = HTTPRequestDecoder(limits: HTTPLimits())
    decoder.feed(Array("POST /o HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\nhello".utf8))
    var seen: [String] = []
    #expect(throws: HTTPParseError(403, "refused")) {
      _ = try decoder.next(bodyLimit: { head throws(HTTPParseError) in
        seen.append(head.target)
        throw HTTPParseError(403, "refused")
      })
    }
    #expect(seen == ["/o"])
  }

  /// Errors after a head (a body over the limit, bad framing) are answered for that request; an
  /// error inside a head has no request to answer for.
  @Test func theHeadOfARequestThatFailsIsKnownToTheConnection() {
    for (text, target) in [
      ("PATCH /big HTTP/1.1\r\nHost: a\r\nContent-Length: 50\r\n\r\n", "/big"),
      ("PUT /framing HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n", "/framing"),
      ("POST /chunks HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", "/chunks"),
      ("GET /ok HTTP/1.1\r\nHost: a\r\n\r\nGET /bad HTTP/1.1\r\nHost: a\r\nBad Header: x\r\n\r\n", nil),
    ] as [(String, String?)] {
      var decoder = HTTPRequestDecoder(limits: HTTPLimits())
      decoder.feed(Array(text.utf8))
      var failed = false
      while !failed {
        do {
          if case .needMoreData = try decoder.next(bodyLimit: { _ in 10 }) { break }
        } catch {
          failed = true
        }
      }
      #expect(failed, "\(text)")
      #expect(decoder.currentHead?.target == target, "\(text)")
    }
  }

  @Test func requestedHeadersThatAreNotTokensAreLeftOut() {
    #expect(
      CrossOriginHandler.tokens(["Authorization, X-Firebase-Storage-Version", "bad header, x-a, x-a, (evil)"])
        == ["authorization", "x-firebase-storage-version", "x-a"])
  }
}
