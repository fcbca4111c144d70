import EmulatorHTTP
import EmulatorStorage

/// One route outside the storage surfaces, such as `POST /internal/reset`: an exact method and
/// path (the query is the handler's business).
public struct ExtraRoute: Sendable {
  public enum Handling: Sendable {
    /// Answered on the connection's thread: must be quick and must not block (health checks).
    case inline
    /// Run on a blocking lane (file I/O, whole-store work).
    case blocking
    /// Started on the connection's thread, answered later through a responder (long polls).
    case deferred(@Sendable (HTTPRequest, HTTPResponder) -> Void)
  }

  public var method: String
  public var path: String
  public var handling: Handling
  public var handler: @Sendable (HTTPRequest) -> HTTPResponse

  public init(
    _ method: String, _ path: String, _ handling: Handling = .blocking,
    handler: @escaping @Sendable (HTTPRequest) -> HTTPResponse
  ) {
    self.method = method
    self.path = path
    self.handling = handling
    self.handler = handler
  }

  /// A route answered later: `start` must not block and must reply exactly once.
  public init(_ method: String, _ path: String, deferred start: @escaping @Sendable (HTTPRequest, HTTPResponder) -> Void) {
    self.method = method
    self.path = path
    self.handling = .deferred(start)
    self.handler = { request in StorageAPI.waitForReply { start(request, $0) } }
  }
}

/// The server's handler: the emulator's own routes (`/internal/...`, which other parts of the
/// emulator add to with `ExtraRoute`s) first, then the storage surfaces (`StorageAPI`). Only
/// paths under the extra routes' prefixes are looked up here, so storage requests pay one byte
/// comparison.
public final class FrontDoor: HTTPHandler {
  public let api: StorageAPI
  /// Route lists by exact path.
  private let routes: [String: [ExtraRoute]]
  /// First path segments (such as `/internal/`) that belong to the extra routes.
  private let prefixes: [String]
  /// Routes of one segment (`/`, `/ui`): they take only their own methods; other methods of the
  /// same path go on to the storage API.
  private let singles: [String]

  public init(api: StorageAPI, routes: [ExtraRoute]) {
    self.api = api
    var byPath: [String: [ExtraRoute]] = [:]
    var prefixes: [String] = []
    var singles: [String] = []
    for route in routes {
      byPath[route.path, default: []].append(route)
      if let slash = route.path.utf8.dropFirst().firstIndex(of: UInt8(ascii: "/")) {
        let segment = String(route.path[...slash])
        if !prefixes.contains(segment) { prefixes.append(segment) }
      } else if !singles.contains(route.path) {
        singles.append(route.path)
      }
    }
    self.routes = byPath
    self.prefixes = prefixes
    self.singles = singles
  }

  /// The extra route for this request, a 405 for a path of extra routes with another method, or
  /// nil for the storage API.
  private func match(_ head: HTTPRequestHead) -> Result<ExtraRoute, ResponseFailure>? {
    let path = head.rawPath
    if singles.contains(where: { path.utf8.elementsEqual($0.utf8) }) {
      return routes[String(path)]?.first { $0.method == head.method }.map { .success($0) }
    }
    guard prefixes.contains(where: { path.utf8.starts(with: $0.utf8) }) else { return nil }
    // A path of no extra route goes to the API (which answers 404, or serves a route of its own
    // under the same prefix).
    guard let candidates = routes[String(path)] else { return nil }
    guard let route = candidates.first(where: { $0.method == head.method }) else {
      let allow = candidates.map(\.method).joined(separator: ", ")
      return .failure(ResponseFailure(StorageAPI.notAllowed(head.method, allow).response(firebase: false)))
    }
    return .success(route)
  }

  public func bodyLimit(for head: HTTPRequestHead) -> Int {
    if match(head) != nil { return api.limits.maxMetadataBytes }
    return api.bodyLimit(for: head)
  }

  /// A state-changing extra route (`POST /internal/reset`, `/internal/export`…) called by a web
  /// page of another origin (a browser sends `Origin`; tools and SDKs do not): refused with 403,
  /// so a page the developer happens to visit cannot empty or export the emulator.
  static func crossSiteRefusal(_ head: HTTPRequestHead) -> HTTPResponse? {
    guard head.method != "GET" && head.method != "HEAD", let origin = head.headers["origin"] else { return nil }
    let host = head.headers["host"] ?? ""
    if !host.isEmpty && (origin == "http://" + host || origin == "https://" + host) { return nil }
    return APIError(
      403, .forbidden, "\(head.method) \(head.rawPath) is refused from a web page of another origin (\(origin)).")
      .response(firebase: false)
  }

  /// Refused heads get the API's GCS-shaped errors.
  public func errorResponse(for error: HTTPParseError) -> HTTPResponse { api.errorResponse(for: error) }

  public func errorResponse(for error: HTTPParseError, head: HTTPRequestHead) -> HTTPResponse {
    api.errorResponse(for: error, head: head)
  }

  /// For CORS preflights and `Allow`: an extra route's methods, or the storage API's.
  public func allowedMethods(for head: HTTPRequestHead) -> [String]? {
    if let candidates = routes[String(head.rawPath)] { return candidates.map(\.method) }
    return api.allowedMethods(for: head)
  }

  /// A bucket's own CORS configuration applies to storage downloads only.
  public func crossOriginRules(for head: HTTPRequestHead) -> [CrossOriginRule]? {
    routes[String(head.rawPath)] == nil ? api.crossOriginRules(for: head) : nil
  }

  public func handle(_ request: HTTPRequest) -> HTTPResponse {
    switch match(request.head) {
    case nil: return api.handle(request)
    case .success(let route): return Self.crossSiteRefusal(request.head) ?? route.handler(request)
    case .failure(let failure): return failure.response
    }
  }

  public func start(_ request: HTTPRequest) -> HTTPHandling {
    switch match(request.head) {
    case nil: return api.start(request)
    case .failure(let failure): return .respond(failure.response)
    case .success(let route):
      if let refusal = Self.crossSiteRefusal(request.head) { return .respond(refusal) }
      switch route.handling {
      case .inline: return .respond(route.handler(request))
      case .blocking: return .blocking { route.handler(request) }
      case .deferred(let start): return .deferred { start(request, $0) }
      }
    }
  }
}

extension HTTPResponse {
  /// A 200 (or other) answer with a JSON body.
  public static func json(_ body: [UInt8], status: Int = 200) -> HTTPResponse {
    HTTPResponse(status: status, headers: ["content-type": "application/json; charset=UTF-8"], body: body)
  }
}
