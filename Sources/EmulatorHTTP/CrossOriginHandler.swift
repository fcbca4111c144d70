/// What `CrossOriginHandler` applies.
public struct CrossOriginConfiguration: Sendable, Equatable {
  public var origins = OriginPolicy()
  public var hosts = HostPolicy(restricted: false)
  /// Headers named in `Access-Control-Expose-Headers` on every response to an allowed origin
  /// (besides the response's own headers, which are always listed).
  public var exposedHeaders: [String] = []
  /// `Access-Control-Max-Age` of a preflight answer: how long a browser may reuse it.
  public var maxAgeSeconds = 3600

  public init() {}
}

/// Browser policies around any handler: the Host check against DNS rebinding, the origin check
/// against cross-site writes, CORS preflights and CORS headers on every answer. It knows nothing
/// of what the inner handler serves: the methods of a resource come from
/// `HTTPHandler.allowedMethods(for:)`.
///
/// - A request whose `Host` the `HostPolicy` refuses gets 403, as does a request that is not
///   GET, HEAD or OPTIONS from an origin the `OriginPolicy` does not allow (`screen`, before its
///   body is read: the inner handler never sees it); a preflight from such an origin gets 403 too.
/// - OPTIONS is answered here and never reaches the inner handler: a preflight from an allowed
///   origin gets 204 with the requested method (when the resource supports it), the requested
///   headers and `Access-Control-Max-Age`; without an `Origin` it gets 204 with `Allow`.
/// - Every other answer, errors included, gets `Vary: Origin`; for an allowed origin also
///   `Access-Control-Allow-Origin` (that origin) and `Access-Control-Expose-Headers`.
/// - A resource with its own configuration (`HTTPHandler.crossOriginRules(for:)`: a bucket's
///   `cors`, for its downloads) is answered by its entries instead of the `OriginPolicy`.
/// - A request without `Origin` is served as if this handler were not there (but for `Vary`).
public struct CrossOriginHandler: HTTPHandler {
  public let inner: any HTTPHandler
  public let configuration: CrossOriginConfiguration
  private let exposedList: String
  private let exposedSet: Set<String>

  public init(_ inner: any HTTPHandler, configuration: CrossOriginConfiguration) {
    self.inner = inner
    self.configuration = configuration
    exposedList = configuration.exposedHeaders.joined(separator: ", ")
    exposedSet = Set(configuration.exposedHeaders.map { $0.lowercased() })
  }

  public func screen(_ head: HTTPRequestHead) -> HTTPResponse? {
    // One pass over the fields (this runs for every request).
    var host: String?
    var origin: String?
    for field in head.headers {
      if host == nil && field.name.sameUTF8("host") {
        host = field.value
      } else if origin == nil && field.name.sameUTF8("origin") {
        origin = field.value
      }
    }
    if !configuration.hosts.allows(host) {
      let name = host ?? ""
      return refusal(
        "Host '\(name)' is not answered here (a guard against DNS rebinding): use localhost or an IP address, "
          + "or start the emulator with --allowed-host \(Self.hostName(name)).", head)
    }
    // OPTIONS only asks (refused, or answered from a resource's own configuration, in `options`).
    if let origin, head.method != "GET" && head.method != "HEAD" && head.method != "OPTIONS",
      !allows(origin, host: host)
    {
      return refusal(
        "Cross-origin \(head.method) from '\(origin)' refused: that origin is not allowed "
          + "(loopback origins are; add others with --cors-origin). Nothing was changed.", head)
    }
    return inner.screen(head)
  }

  public func bodyLimit(for head: HTTPRequestHead) -> Int { inner.bodyLimit(for: head) }

  public var bodyLimitFloor: Int { inner.bodyLimitFloor }

  public func allowedMethods(for head: HTTPRequestHead) -> [String]? { inner.allowedMethods(for: head) }

  public func errorResponse(for error: HTTPParseError) -> HTTPResponse {
    inner.errorResponse(for: error)
  }

  public func errorResponse(for error: HTTPParseError, head: HTTPRequestHead) -> HTTPResponse {
    finish(inner.errorResponse(for: error, head: head), grant: grant(head))
  }

  public func start(_ request: HTTPRequest) -> HTTPHandling {
    if request.method == "OPTIONS" { return .respond(options(request.head)) }
    let grant = grant(request.head)
    switch inner.start(request) {
    case .respond(let response):
      return .respond(finish(response, grant: grant))
    case .blocking(let work):
      return .blocking { finish(work(), grant: grant) }
    case .deferred(let work):
      return .deferred { responder in
        work(
          HTTPResponder(turnEnd: responder.turnEnd) { make in
            responder.reply(making: { finish(make(), grant: grant) })
          })
      }
    }
  }

  // MARK: Answers

  /// What a request's answer may tell its page.
  enum Grant: Sendable {
    /// No `Origin`, or one nothing allows: only `Vary: Origin`.
    case none
    /// Allowed by the server-wide policy: every header is exposed.
    case server(origin: String)
    /// Allowed by the resource's own configuration: the entry's response headers are exposed.
    case rule(origin: String, CrossOriginRule)
  }

  func grant(_ head: HTTPRequestHead) -> Grant {
    guard let origin = head.headers["origin"] else { return .none }
    if let rules = inner.crossOriginRules(for: head) {
      guard let rule = rules.first(where: { $0.matches(origin: origin, method: head.method) }) else { return .none }
      return .rule(origin: origin, rule)
    }
    return allows(origin, host: head.headers["host"]) ? .server(origin: origin) : .none
  }

  /// The `OriginPolicy`, or the request's own origin: a page this server served itself (a web UI
  /// opened at `http://192.168.1.10:9199`), when its `Host` is one no DNS rebinding can forge (a
  /// loopback name, an IP address or an allowed name).
  func allows(_ origin: String, host: String?) -> Bool {
    if configuration.origins.allows(origin) { return true }
    guard let host, !host.isEmpty, configuration.hosts.recognizes(host) else { return false }
    let lower = origin.lowercased()
    let authority = host.lowercased()
    return lower == "http://" + authority || lower == "https://" + authority
  }

  /// Adds `Vary: Origin` (a field of its own, as an inner handler's `Vary` may be there too),
  /// and for an allowed origin the CORS headers of an actual response.
  /// The response is consumed, so its fields are not copied to add one (a request without
  /// `Origin`, the common case, adds only `Vary`).
  func finish(_ response: consuming HTTPResponse, grant: Grant) -> HTTPResponse {
    var response = response
    response.headers.add("vary", "Origin")
    if case .none = grant { return response }
    guard response.headers["access-control-allow-origin"] == nil else { return response }
    switch grant {
    case .none:
      return response
    case .rule(let origin, let rule):
      response.headers.add("access-control-allow-origin", origin)
      if !rule.responseHeaders.isEmpty {
        response.headers.add("access-control-expose-headers", rule.responseHeaders.joined(separator: ", "))
      }
      return response
    case .server(let origin):
      var exposed = exposedList
      for field in response.headers
      where !exposedSet.contains(field.name) && !Self.safelisted(field.name)
        && !field.name.hasPrefix("access-control-") && !field.name.hasPrefix("vary")
      {
        exposed += exposed.isEmpty ? field.name : ", " + field.name
      }
      response.headers.add("access-control-allow-origin", origin)
      if !exposed.isEmpty { response.headers.add("access-control-expose-headers", exposed) }
      return response
    }
  }

  /// OPTIONS: a CORS preflight, or (without `Origin`) a plain question about the methods. It never
  /// reaches the inner handler.
  private func options(_ head: HTTPRequestHead) -> HTTPResponse {
    guard let methods = inner.allowedMethods(for: head) else {
      return finish(
        inner.errorResponse(for: HTTPParseError(404, "No resource at \(head.rawPath)."), head: head),
        grant: grant(head))
    }
    let allow = methods.joined(separator: ", ")
    guard let origin = head.headers["origin"] else {
      return finish(HTTPResponse(status: 204, headers: ["allow": allow]), grant: .none)
    }
    let requested = head.headers["access-control-request-method"]?.trimmingASCIIWhitespace()
    let rules = inner.crossOriginRules(for: head)
    var rule: CrossOriginRule?
    if let rules {
      rule = requested.flatMap { requested in rules.first { $0.matches(origin: origin, method: requested) } }
      guard rule != nil else {
        return refusal(
          "The bucket's CORS configuration does not allow \(requested ?? "this request") from '\(origin)'.", head)
      }
    } else if !allows(origin, host: head.headers["host"]) {
      return refusal(
        "Cross-origin request from '\(origin)' refused: that origin is not allowed "
          + "(loopback origins are; add others with --cors-origin).", head)
    }
    guard let requested else {
      return finish(HTTPResponse(status: 204, headers: ["allow": allow]), grant: .server(origin: origin))
    }
    var headers: HTTPHeaders = ["access-control-allow-origin": origin]
    Self.addVary(&headers, "Origin, Access-Control-Request-Method, Access-Control-Request-Headers")
    guard methods.contains(requested) else {
      var response = inner.errorResponse(
        for: HTTPParseError(405, "Method \(requested) is not allowed here; allowed: \(allow)."), head: head)
      response.headers.set("allow", allow)
      for field in headers { response.headers.set(field.name, field.value) }
      return response
    }
    headers.add("access-control-allow-methods", requested)
    if let rule {
      // GCS: the entry's response headers are also the request headers a page may send.
      if !rule.responseHeaders.isEmpty {
        headers.add("access-control-allow-headers", rule.responseHeaders.joined(separator: ", "))
      }
      if let age = rule.maxAgeSeconds { headers.add("access-control-max-age", String(age)) }
    } else {
      let askedHeaders = Self.tokens(head.headers.values("access-control-request-headers"))
      if !askedHeaders.isEmpty { headers.add("access-control-allow-headers", askedHeaders.joined(separator: ", ")) }
      headers.add("access-control-max-age", String(configuration.maxAgeSeconds))
    }
    if head.headers["access-control-request-private-network"]?.lowercased() == "true" {
      headers.add("access-control-allow-private-network", "true")
    }
    headers.add("allow", allow)
    return HTTPResponse(status: 204, headers: headers)
  }

  private func refusal(_ message: String, _ head: HTTPRequestHead) -> HTTPResponse {
    var response = inner.errorResponse(for: HTTPParseError(403, message), head: head)
    Self.addVary(&response.headers, "Origin")
    return response
  }

  // MARK: Helpers

  /// Merges into an existing `Vary` rather than sending two.
  static func addVary(_ headers: inout HTTPHeaders, _ value: String) {
    guard let existing = headers["vary"] else {
      headers.add("vary", value)
      return
    }
    headers.set("vary", existing + ", " + value)
  }

  /// Response headers a page may always read (Fetch's CORS-safelisted response-header names).
  static func safelisted(_ name: String) -> Bool {
    switch name {
    case "cache-control", "content-language", "content-length", "content-type", "expires", "last-modified",
      "pragma":
      true
    default: false
    }
  }

  /// The header names of `Access-Control-Request-Headers`, lower-cased; anything that is not an
  /// HTTP token is left out.
  static func tokens(_ values: [String]) -> [String] {
    var names: [String] = []
    for value in values {
      for part in value.split(separator: ",") {
        let name = part.trimmingASCIIWhitespace().lowercased()
        if !name.isEmpty && name.utf8.allSatisfy(HTTPSyntax.isToken) && !names.contains(name) { names.append(name) }
      }
    }
    return names
  }

  /// The name part of a `Host` value, for the hint in a refusal.
  private static func hostName(_ host: String) -> String {
    if host.hasPrefix("[") { return host }
    return String(host.prefix { $0 != ":" })
  }
}
