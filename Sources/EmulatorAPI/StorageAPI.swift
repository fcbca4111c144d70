import EmulatorHTTP
import EmulatorRules
import EmulatorStorage
import Foundation

/// Limits the API applies on top of the HTTP layer's.
public struct APILimits: Sendable, Equatable {
  /// JSON metadata bodies (PATCH, PUT, bucket create…). Larger: 413.
  public var maxMetadataBytes = 1 << 20
  /// One uploaded object. Larger: 413.
  public var maxUploadBytes = 1 << 30
  /// When set, a write on a GCS surface to a missing bucket creates it (the old lenient
  /// behaviour); otherwise it is 404 as on GCS. Firebase `/v0` writes always create it.
  public var lenientBuckets = false
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
  let renderCache = RenderCache()
  /// Called with every XML API request before it is handled (where signed URLs are checked).
  let xmlGate: XMLGate?
  /// XML multipart uploads, beside the resumable sessions' folder (nil: it could not be made).
  let multipart: MultipartUploads?

  public init(
    store: ObjectStore, sessions: UploadSessions, limits: APILimits = APILimits(),
    rules: RulesRegistry = RulesRegistry(), xmlGate: XMLGate? = nil,
    signing: SignedURLVerifier = SignedURLVerifier()
  ) {
    self.store = store
    self.sessions = sessions
    self.limits = limits
    self.signing = signing
    self.rules = rules
    self.xmlGate = xmlGate
    signing.madeKeys.attach(store)
    self.multipart = try? MultipartUploads(
      directory: URL(fileURLWithPath: sessions.directory + "-xml-multipart"), maxBytes: Int64(limits.maxUploadBytes))
  }

  /// The `host:port` used in links when a request has no `Host` header (HTTP/1.0).
  public func setFallbackHost(_ host: String) {
    fallbackHost.withLock { $0 = host }
  }

  public func bodyLimit(for head: HTTPRequestHead) -> Int {
    if head.method == "POST", Self.postPolicyBucket(head, virtualHost: limits.xmlVirtualHost) != nil {
      return limits.maxUploadBytes
    }
    // XML: a PUT carries an object or a part; a POST a CompleteMultipartUpload document (any
    // other method gets the metadata limit either way).
    if head.method == "PUT" || head.method == "POST", case .success? = xmlRoute(head) {
      return head.method == "PUT" ? limits.maxUploadBytes : limits.maxMetadataBytes
    }
    return BodyLimits.limit(for: head, limits)
  }

  public func errorResponse(for error: HTTPParseError) -> HTTPResponse {
    APIError(error.status, Self.reason(forStatus: error.status), error.message).response(firebase: false)
  }

  public func handle(_ request: HTTPRequest) -> HTTPResponse {
    if let response = setRulesResponse(request) { return response }
    if Self.isBatch(request.head) { return batch(request) }
    if let bucket = Self.postPolicyBucket(request.head, virtualHost: limits.xmlVirtualHost) {
      return postPolicyUpload(request, bucket: bucket)
    }
    switch xmlRoute(request.head) {
    case .success(let route)?: return xml(request, route)
    case .failure(let error)?: return error.response
    case nil: break
    }
    switch prepare(request) {
    case .success(let context): return run(context)
    case .failure(let failure): return failure.response
    }
  }

  /// Metadata reads, lists and bucket reads on the GCS surfaces touch only the in-memory index, so
  /// they are answered on the connection's thread. Metadata updates are checked and applied there
  /// too and answered once their group write is done (see `ObjectStore.update`), so they never
  /// wait for a lane. (Firebase reads may create a download token, a write; downloads open files;
  /// everything else writes: lanes.)
  public func start(_ request: HTTPRequest) -> HTTPHandling {
    if let response = setRulesResponse(request) { return .respond(response) }
    if Self.isBatch(request.head) { return .blocking { [self] in batch(request) } }
    if let bucket = Self.postPolicyBucket(request.head, virtualHost: limits.xmlVirtualHost) {
      return .blocking { [self] in postPolicyUpload(request, bucket: bucket) }
    }
    switch xmlRoute(request.head) {
    case .success(let route)?: return .blocking { [self] in xml(request, route) }
    case .failure(let error)?: return .respond(error.response)
    case nil: break
    }
    switch prepare(request) {
    case .failure(let failure):
      return .respond(failure.response)
    case .success(let context):
      let surface = context.route.surface
      let readsMemoryOnly =
        (context.method == "GET" || context.method == "HEAD")
        && (surface == .json || surface == .bare)
        && context.query["upload_id"] == nil && context.query["alt"] != "media"
      if readsMemoryOnly { return .respond(run(context)) }
      if case .object(let bucket, let name) = context.route.resource, !name.isEmpty,
        let replace = Self.updateKind(context)
      {
        return .deferred { [self] in update(context, bucket: bucket, name: name, replace: replace, responder: $0) }
      }
      return .blocking { [self] in run(context) }
    }
  }

  /// For a request on an object that is a metadata update: whether it replaces (PUT) or merges
  /// (PATCH); nil for anything else. The same cases `dispatch` routes to `update`.
  private static func updateKind(_ context: RequestContext) -> Bool? {
    switch (context.route.surface, context.method) {
    case (.upload, _), (.download, _): nil
    case (_, "PATCH"): false
    case (.json, "PUT"), (.bare, "PUT"): true
    default: nil
    }
  }

  /// Routing and query parsing: what every request needs before it can be answered.
  private func prepare(_ request: HTTPRequest) -> Result<RequestContext, ResponseFailure> {
    let firebasePath = request.head.rawPath.utf8.starts(with: "/v0/".utf8)
    let route: Route
    do {
      guard let matched = try Route.match(rawPath: request.head.rawPath) else {
        return .failure(
          ResponseFailure(
            APIError(404, .notFound, "No route for \(request.method) \(request.head.rawPath).")
              .response(firebase: firebasePath)))
      }
      route = matched
    } catch {
      return .failure(ResponseFailure(error.response(firebase: firebasePath)))
    }
    if !route.surface.isFirebase, let failure = signedURLFailure(request, xml: false) {
      return .failure(ResponseFailure(failure))
    }
    do {
      let query = try queryParameters(request.head)
      var context = RequestContext(
        request: request, route: route, query: query,
        json: ResourceJSON(
          baseURL: "http://" + (request.headers["host"] ?? fallbackHost.withLock { $0 }),
          fields: RequestOptions.fields(query)))
      context.json.full = query["projection"] == "full"
      context.method = Self.effectiveMethod(request)
      return .success(context)
    } catch {
      return .failure(ResponseFailure(error.response(firebase: route.surface.isFirebase)))
    }
  }

  private func run(_ context: RequestContext) -> HTTPResponse {
    do {
      return try dispatch(context)
    } catch {
      return error.response(firebase: context.route.surface.isFirebase)
    }
  }

  private func queryParameters(_ head: HTTPRequestHead) throws(APIError) -> QueryParameters {
    do {
      return try QueryParameters(head.rawQuery)
    } catch {
      throw APIError(400, .invalid, error.message)
    }
  }

  /// `X-HTTP-Method-Override` on POST/PUT (Java client, Firebase JS).
  static func effectiveMethod(_ request: HTTPRequest) -> String {
    if request.method == "POST" || request.method == "PUT",
      let override = request.headers["x-http-method-override"]?.trimmingASCIIWhitespace().uppercased(),
      ["PATCH", "PUT", "DELETE", "GET"].contains(override)
    {
      return override
    }
    return request.method
  }

  private func dispatch(_ context: RequestContext) throws(APIError) -> HTTPResponse {
    let method = context.method
    switch context.route.resource {
    case .buckets:
      switch method {
      case "GET", "HEAD": return context.ok(context.json.bucketList(store.listBuckets()))
      case "POST": return try createBucket(context)
      default: throw Self.notAllowed(method, "GET, HEAD, POST")
      }
    case .bucket(let bucket):
      return try bucketRequest(context, bucket: bucket)
    case .storageLayout(let bucket):
      return try storageLayout(context, bucket: bucket)
    case .managedFolders(let bucket):
      return try managedFolders(context, bucket: bucket)
    case .client(let resource):
      return try clientRequest(context, resource)
    case .objects(let bucket):
      if let id = context.query["upload_id"] {
        // A resumable session's URL.
        switch (context.route.surface, method) {
        case (.firebase, "PUT"), (.firebase, "POST"):
          return try firebaseResumableCommand(context, id: id)
        case (.upload, "PUT"), (.upload, "POST"), (.upload, "DELETE"), (.json, "PUT"), (.json, "POST"):
          return try gcsResumableChunk(context, id: id)
        default:
          throw Self.notAllowed(method, context.route.surface.isFirebase ? "PUT, POST" : "PUT, POST, DELETE")
        }
      }
      switch (context.route.surface, method) {
      case (.download, _):
        throw APIError(404, .notFound, "Downloads need an object name: /download/storage/v1/b/{bucket}/o/{object}.")
      case (.upload, "POST"), (.firebase, "POST"):
        return try upload(context, bucket: bucket, pathName: nil)
      case (.json, "POST") where context.query["uploadType"] != nil,
        (.bare, "POST") where context.query["uploadType"] != nil:
        return try upload(context, bucket: bucket, pathName: nil)
      case (.upload, _):
        throw Self.notAllowed(method, "POST")
      case (_, "GET"), (_, "HEAD"):
        return try list(context, bucket: bucket)
      case (.firebase, _):
        throw Self.notAllowed(method, "GET, HEAD, POST")
      default:
        throw Self.notAllowed(method, "GET, HEAD")
      }
    case .object(let bucket, let name) where name.isEmpty:
      throw APIError(404, .notFound, "No such object: \(bucket)/ (an object name cannot be empty).")
    case .object(let bucket, let name):
      switch (context.route.surface, method) {
      case (.upload, _):
        throw APIError(404, .notFound, "Uploads go to /upload/storage/v1/b/{bucket}/o?uploadType=…&name=….")
      case (.download, "GET"), (.download, "HEAD"):
        return try download(context, bucket: bucket, name: name)
      case (.download, _):
        throw Self.notAllowed(method, "GET, HEAD")
      case (_, "GET"), (_, "HEAD"):
        if context.query["alt"] == "media" { return try download(context, bucket: bucket, name: name) }
        return try getMetadata(context, bucket: bucket, name: name)
      case (_, "PATCH"), (.json, "PUT"), (.bare, "PUT"):
        let replace = method == "PUT"
        return Self.waitForReply { update(context, bucket: bucket, name: name, replace: replace, responder: $0) }
      case (.firebase, "POST"):
        if context.query["create_token"] != nil || context.query["delete_token"] != nil {
          return try tokenCommand(context, bucket: bucket, name: name)
        }
        return try upload(context, bucket: bucket, pathName: name)
      case (.json, "POST"), (.bare, "POST"):
        if let action = context.route.action { return try objectAction(context, bucket: bucket, action: action) }
        throw Self.notAllowed(method, "GET, HEAD, PATCH, PUT, DELETE")
      case (_, "DELETE"):
        try Self.validate(name)
        try authorizeDelete(context, bucket: bucket, name: name)
        let conditions = try RequestOptions.preconditions(context.query, context.request.headers, read: false)
        try storage { () throws(StorageError) in try store.delete(bucket: bucket, name: name, conditions: conditions) }
        return HTTPResponse(status: 204)
      case (.firebase, _):
        throw Self.notAllowed(method, "GET, HEAD, PATCH, POST, DELETE")
      default:
        throw Self.notAllowed(method, "GET, HEAD, PATCH, PUT, DELETE")
      }
    }
  }

  /// Whether a write on this surface creates a missing bucket (Firebase always does, as its
  /// emulator creates the default bucket; GCS surfaces only with `lenientBuckets`).
  func createsBucket(_ surface: Surface) -> Bool { surface.isFirebase || limits.lenientBuckets }

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

  /// Runs a store call, turning its error into the API's.
  func storage<T>(_ body: () throws(StorageError) -> T) throws(APIError) -> T {
    do {
      return try body()
    } catch {
      throw APIError(error)
    }
  }

  // MARK: Objects

  private func list(_ context: RequestContext, bucket: String) throws(APIError) -> HTTPResponse {
    try authorizeList(context, bucket: bucket)
    let query = try RequestOptions.listQuery(context.query)
    let page = try storage { () throws(StorageError) in try store.list(bucket: bucket, query: query) }
    return context.ok(context.route.surface.isFirebase ? context.json.firebaseList(page) : context.json.gcsList(page))
  }

  private func getMetadata(_ context: RequestContext, bucket: String, name: String) throws(APIError) -> HTTPResponse {
    try Self.validate(name)
    try authorizeRead(context, bucket: bucket, name: name)
    let conditions = try RequestOptions.preconditions(context.query, context.request.headers, read: true)
    var object = try storage { () throws(StorageError) in
      try store.metadata(bucket: bucket, name: name, conditions: conditions)
    }
    if !context.route.surface.isFirebase, let generation = conditions.generation,
      let version = store.noncurrentVersion(bucket: bucket, name: name, generation: generation)
    {
      var response = context.ok(context.json.gcsObject(version.object, timeDeleted: version.timeDeleted))
      response.headers.set("etag", version.object.etag)
      return response
    }
    if context.route.surface.isFirebase && object.downloadTokens.isEmpty {
      object = try storage { () throws(StorageError) in try store.ensureDownloadToken(bucket: bucket, name: name) }
    }
    return context.object(object, cache: renderCache)
  }

  /// A metadata update (PATCH merges, PUT replaces): parsed and applied at once; answered once
  /// the change is written (the response rendered by the connection, not the store's writer), or
  /// at once with an error.
  private func update(
    _ context: RequestContext, bucket: String, name: String, replace: Bool, responder: HTTPResponder
  ) {
    let firebase = context.route.surface.isFirebase
    let patch: MetadataPatch
    let conditions: Preconditions
    do throws(APIError) {
      try Self.validate(name)
      let body = try RequestOptions.jsonObject(context.request.bodyBytes())
      let options = MetadataPatch.Options(
        replace: replace, customTimeWritable: !firebase, tokensInCustomMetadata: !firebase, newGeneration: false,
        predefinedAcl: firebase ? nil : context.query["predefinedAcl"])
      conditions = try RequestOptions.preconditions(context.query, context.request.headers, read: false)
      patch = try storage { () throws(StorageError) in try MetadataPatch(json: body, options: options) }
      try authorizePatch(context, bucket: bucket, name: name, patch: patch)
    } catch {
      return responder.reply(error.response(firebase: firebase))
    }
    store.update(bucket: bucket, name: name, patch: patch, conditions: conditions) { [renderCache] result in
      switch result {
      case .success(let object): responder.reply { context.object(object, cache: renderCache) }
      case .failure(let error): responder.reply(APIError(error).response(firebase: firebase))
      }
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
  var method: String

  init(request: HTTPRequest, route: Route, query: QueryParameters, json: ResourceJSON) {
    self.request = request
    self.route = route
    self.query = query
    self.json = json
    self.method = request.method
  }

  func ok(_ body: [UInt8], headers: HTTPHeaders = [:]) -> HTTPResponse {
    var headers = headers
    headers.set("content-type", "application/json; charset=UTF-8")
    return HTTPResponse(status: 200, headers: headers, body: body)
  }

  /// An object resource in the surface's flavour, with its ETag; rendered once per version of
  /// the metadata when a cache is given.
  func object(_ object: ObjectMetadata, cache: RenderCache? = nil) -> HTTPResponse {
    let firebase = route.surface.isFirebase
    let json = self.json
    let render = { (object: ObjectMetadata) in firebase ? json.firebaseObject(object) : json.gcsObject(object) }
    guard let cache, !json.full else { return ok(render(object), headers: ["etag": object.etag]) }
    let key = RenderCache.Key(
      bucket: object.bucket, name: object.name, firebase: firebase, baseURL: json.baseURL, fields: json.fields)
    let cached = cache.body(for: object, key: key, render: render)
    return ok(cached.body, headers: ["etag": cached.etag])
  }
}
