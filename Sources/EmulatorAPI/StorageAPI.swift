import EmulatorHTTP
import EmulatorRules
import EmulatorStorage
import EmulatorSupport
import Synchronization

/// Limits the API applies on top of the HTTP layer's.
public struct APILimits: Sendable, Equatable {
  /// JSON metadata bodies (PATCH, PUT, bucket create…). Larger: 413.
  public var maxMetadataBytes = 1 << 20
  /// One uploaded object. Larger: 413.
  public var maxUploadBytes = 1 << 30
  /// When set, a write on a GCS surface to a missing bucket creates it (the old lenient
  /// behaviour); otherwise it is 404 as on GCS. Firebase `/v0` writes always create it.
  public var lenientBuckets = false
  /// When set, deleting a bucket whose only objects are noncurrent generations discards them
  /// (fake-gcs-server's behaviour); otherwise that is 409 as on GCS.
  public var discardNoncurrentOnBucketDelete = false
  /// The XML API's virtual host: `Host: <bucket>.<this>` addresses a bucket (see `XMLRoute`).
  public var xmlVirtualHost = "localhost"

  public init() {}
}

/// Maps the URL surfaces onto the store (PROTOCOL.md §1–§6). Storage errors become HTTP
/// statuses only here, in the flavour of the surface that was called.
public final class StorageAPI: HTTPHandler {
  public let store: ObjectStore
  public let sessions: UploadSessions
  public let limits: APILimits
  /// Checks signed URLs and POST policies (`StorageAPI+SignedURLs.swift`).
  public let signing: SignedURLVerifier
  /// Security rules for the Firebase surface; empty: everything allowed (see StorageAPI+Rules).
  public let rules: RulesRegistry
  private let fallbackHost = Locked("127.0.0.1:9199")
  /// The last `Host` seen and the base URL made of it (`baseURL(host:)`).
  private let lastBaseURL = Locked<(host: String, base: String)>(("", "http://"))
  let renderCache = RenderCache()
  /// Called with every XML API request before it is handled (where signed URLs are checked).
  let xmlGate: XMLGate?
  /// XML multipart uploads (kept where the backend says; by default in memory).
  public let multipart: MultipartUploads?

  public init(
    store: ObjectStore, sessions: UploadSessions, limits: APILimits = APILimits(),
    rules: RulesRegistry = RulesRegistry(), xmlGate: XMLGate? = nil,
    signing: SignedURLVerifier = SignedURLVerifier(), multipart: MultipartUploads? = nil
  ) {
    self.store = store
    self.sessions = sessions
    self.limits = limits
    self.signing = signing
    self.rules = rules
    self.xmlGate = xmlGate
    signing.madeKeys.attach(store)
    self.multipart =
      multipart ?? MultipartUploads(space: MemoryUploadSpace(), maxBytes: Int64(limits.maxUploadBytes))
  }

  /// The `host:port` used in links when a request has no `Host` header (HTTP/1.0).
  public func setFallbackHost(_ host: String) {
    fallbackHost.withLock { $0 = host }
  }

  /// The API's routes (`StorageRoutes.swift`); `FrontDoor` adds the emulator's own to them.
  public let table = RouteTable(StorageAPI.routes)

  public func bodyLimit(for head: HTTPRequestHead) -> Int { bodyLimit(for: head, in: table) }

  /// Every route's limit is one of these two.
  public var bodyLimitFloor: Int { min(limits.maxMetadataBytes, limits.maxUploadBytes) }

  public func errorResponse(for error: HTTPParseError) -> HTTPResponse {
    APIError(error.status, Self.reason(forStatus: error.status), error.message).response(.gcs)
  }

  public func start(_ request: HTTPRequest) -> HTTPHandling { start(request, in: table) }

  /// Runs a request's route from `table`: its entry's `execution` says whether it is answered on
  /// the connection's thread, later through a responder, or on a blocking lane.
  func start(_ request: HTTPRequest, in table: RouteTable) -> HTTPHandling {
    switch resolve(request.head, method: request.method, in: table) {
    case .path(let candidates):
      guard let entry = table.first(candidates, method: request.method, flags: []) else {
        let allow = table.methods(candidates, flags: []).joined(separator: ", ")
        return .respond(Self.notAllowed(request.method, allow).response(.gcs))
      }
      if let refusal = FrontDoor.crossSiteRefusal(request.head) { return .respond(refusal) }
      return run(entry, request)
    case .postPolicy:
      guard let entry = table.first(table.postPolicyEntries, method: request.method, flags: []) else {
        return .respond(HTTPResponse(.notFound))
      }
      return run(entry, request)
    case .xml(let route):
      return .blocking { [self] in xml(request, route, in: table) }
    case .xmlFailure(let error):
      return .respond(error.response)
    case .none(let error):
      return .respond(error.response(Flavour.of(rawPath: request.head.rawPath)))
    case .storage(let route):
      return startStorage(request, route, in: table)
    }
  }

  /// An exact-path or POST policy entry: the handler sees the request alone.
  private func run(_ entry: RouteEntry, _ request: HTTPRequest) -> HTTPHandling {
    switch entry.handler {
    case .request(let handler): return Self.handling(entry.execution) { handler(request) }
    case .requestLater(let start): return .deferred { start(request, $0) }
    case .api(let handler): return Self.handling(entry.execution) { [self] in handler(self)(request) }
    case .json, .jsonLater, .xml: return .respond(HTTPResponse(.internalServerError))
    }
  }

  /// A JSON surface's request: checks and query parsing, then its entry.
  private func startStorage(_ request: HTTPRequest, _ route: Route, in table: RouteTable) -> HTTPHandling {
    let context: RequestContext
    switch prepare(request, route) {
    case .success(let prepared): context = prepared
    case .failure(let failure): return .respond(failure.response)
    }
    let flavour = route.surface.flavour
    if case .object(let bucket, let name) = route.resource, name.isEmpty {
      return .respond(
        APIError(404, .notFound, "No such object: \(bucket)/ (an object name cannot be empty).")
          .response(flavour))
    }
    let kind = route.resource.kind
    let candidates = table.storageEntries(route.surface, kind)
    let flags = Self.flags(
      request.head, context.query, route, testing: table.storageFlagsTested(route.surface, kind))
    guard let entry = table.first(candidates, method: context.method, flags: flags) else {
      let allow = table.methods(candidates, flags: flags).joined(separator: ", ")
      return .respond(Self.notAllowed(context.method, allow).response(flavour))
    }
    switch entry.handler {
    case .json(let handler):
      // Answered here without building an escaping closure: this is the GET hot path.
      if entry.execution == .memory { return .respond(answer(handler, context)) }
      if entry.execution == .smallWrite { return smallWrite(request) { [self] in answer(handler, context) } }
      return .blocking { [self] in answer(handler, context) }
    case .jsonLater(let start):
      return .deferred { [self] in start(self)(context, $0) }
    case .request, .requestLater, .api, .xml:
      return .respond(HTTPResponse(.internalServerError))
    }
  }

  /// A JSON handler's response, its error in the surface's flavour.
  private func answer(
    _ handler: @Sendable (StorageAPI) -> (RequestContext) throws -> HTTPResponse, _ context: RequestContext
  ) -> HTTPResponse {
    do {
      return try handler(self)(context)
    } catch {
      return APIError(mapping: error).response(context.flavour)
    }
  }

  /// Signed URLs and query parsing: what every JSON-surface request needs before its handler.
  private func prepare(_ request: HTTPRequest, _ route: Route) -> Result<RequestContext, ResponseFailure> {
    if route.surface.flavour.checksSignedURLs, let failure = signedURLFailure(request, xml: false) {
      return .failure(ResponseFailure(failure))
    }
    do {
      let query = try queryParameters(request.head)
      var context = RequestContext(
        request: request, route: route, query: query,
        json: ResourceJSON(
          baseURL: baseURL(host: request.headers["host"] ?? fallbackHost.withLock { $0 }),
          fields: RequestOptions.fields(query)))
      context.json.full = query["projection"] == "full"
      return .success(context)
    } catch {
      return .failure(ResponseFailure(error.response(route.surface.flavour)))
    }
  }

  /// `http://<host>`, the base of the links in a rendering: the last one is kept, as a client
  /// sends the same `Host` on every request (building it cost a concatenation, ~550 instructions).
  private func baseURL(host: String) -> String {
    if let base = lastBaseURL.withLock({ $0.host == host ? $0.base : nil }) { return base }
    let base = "http://" + host
    lastBaseURL.withLock { $0 = (host, base) }
    return base
  }

  private func queryParameters(_ head: HTTPRequestHead) throws(APIError) -> QueryParameters {
    do {
      return try QueryParameters(head.rawQuery)
    } catch {
      throw APIError(400, .invalid, error.message)
    }
  }

  /// `X-HTTP-Method-Override` on POST/PUT (Java client, Firebase JS).
  static func effectiveMethod(_ head: HTTPRequestHead) -> String {
    if head.method == "POST" || head.method == "PUT",
      let override = head.headers["x-http-method-override"]?.trimmingASCIIWhitespace().uppercased(),
      ["PATCH", "PUT", "DELETE", "GET"].contains(override)
    {
      return override
    }
    return head.method
  }

  /// Whether a write on this surface creates a missing bucket (`Flavour.createsBucket`).
  func createsBucket(_ surface: Surface) -> Bool { surface.flavour.createsBucket(lenient: limits.lenientBuckets) }

  static func notAllowed(_ method: String, _ allow: String) -> APIError {
    APIError(
      405, .methodNotAllowed, "Method \(method) is not allowed here; allowed: \(allow).", headers: ["allow": allow])
  }

  static func validate(_ name: String) throws(APIError) {
    do {
      try Naming.validateObjectName(name)
    } catch {
      throw APIError(error)
    }
  }

  /// Blocks until work started with a responder replies.
  static func waitForReply(_ start: (HTTPResponder) -> Void) -> HTTPResponse {
    waitForCallback { (done: @escaping @Sendable (HTTPResponse) -> Void) in
      start(HTTPResponder { make in done(make()) })
    }
  }

}

/// A response for a request that failed before it reached a handler (as a `Result` failure).
struct ResponseFailure: Error {
  var response: HTTPResponse
  init(_ response: HTTPResponse) { self.response = response }
}

/// One request on its way through the API.
struct RequestContext: Sendable {
  var request: HTTPRequest
  var route: Route
  var query: QueryParameters
  var json: ResourceJSON
  /// The method after `X-HTTP-Method-Override`: the one the route table matched.
  var method: String { StorageAPI.effectiveMethod(request.head) }

  /// Firebase or GCS: what the answer looks like and which rules apply.
  var flavour: Flavour { route.surface.flavour }

  /// The bucket in the path ("" for the bucket collection).
  var bucket: String {
    switch route.resource {
    case .buckets: ""
    case .bucket(let name), .storageLayout(let name), .managedFolders(let name), .objects(let name): name
    case .object(let bucket, _): bucket
    case .client(let resource): resource.bucket ?? ""
    }
  }

  /// The object name in the path; nil on a bucket's `/o`.
  var objectName: String? {
    if case .object(_, let name) = route.resource { return name }
    return nil
  }

  /// The object name, for routes on one object.
  var name: String { objectName ?? "" }

  func ok(_ body: [UInt8], headers: HTTPHeaders = [:]) -> HTTPResponse {
    var headers = headers
    headers.set("content-type", "application/json; charset=UTF-8")
    return HTTPResponse(.ok, headers: headers, body: body)
  }

  /// An object resource in the surface's flavour, with its ETag; rendered once per version of
  /// the metadata when a cache is given.
  func object(_ object: ObjectMetadata, cache: RenderCache? = nil) -> HTTPResponse {
    let flavour = self.flavour
    let json = self.json
    let render = { (object: ObjectMetadata) in flavour.object(json, object) }
    guard let cache, !json.full else { return ok(render(object), headers: ["etag": object.etag]) }
    let key = RenderCache.Key(
      bucket: object.bucket, name: object.name, flavour: flavour, baseURL: json.baseURL, fields: json.fields)
    let cached = cache.body(for: object, key: key, render: render)
    // Room for what the layers above add (`Vary`, CORS): one allocation for the fields.
    var headers = HTTPHeaders(minimumCapacity: 4)
    headers.add("etag", cached.etag)
    headers.add("content-type", "application/json; charset=UTF-8")
    return HTTPResponse(.ok, headers: headers, body: cached.body)
  }
}
