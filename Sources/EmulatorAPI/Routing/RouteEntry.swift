import EmulatorHTTP

/// What a route's request body may be. The limit is known from the head alone, before a byte of
/// the body is read; past it the HTTP layer answers 413.
public enum BodyPolicy: Sendable, Equatable {
  /// The handler reads no body; one sent anyway is accepted up to `maxMetadataBytes`.
  case none
  /// A JSON (or XML) document, up to `APILimits.maxMetadataBytes`.
  case document
  /// Object data (uploads, resumable chunks, XML parts), spooled to disk past the in-memory
  /// threshold, up to `APILimits.maxUploadBytes`.
  case objectData
}

/// Where a route's handler runs.
public enum Execution: Sendable, Equatable {
  /// On the connection's thread, answered at once: the handler reads memory only, never blocks.
  case memory
  /// Started on the connection's thread and answered later through a responder (metadata
  /// updates answered once their group write is done, long polls).
  case deferred
  /// On one of the server's blocking lanes (file I/O, fsync, whole-store work).
  case blocking
  /// A write of object data (uploads): when its body is in memory and at most
  /// `StorageAPI.inlineWriteBytes`, on the connection's thread if the store does not sync writes
  /// (the write then only reaches the page cache, cheaper than two thread hand-offs), else
  /// deferred to one of the many `StorageAPI.syncLanes`; otherwise on a blocking lane.
  case smallWrite
}

/// The part of a request path a route addresses.
public enum RoutePattern: Sendable, Equatable {
  /// One exact path (the query is the handler's business): the emulator's own routes, such as
  /// `/internal/reset` or `/ui/app.js`.
  case path(String)
  /// A resource of the JSON surfaces, as `Route.match` decodes it (surface, bucket, object name).
  case storage([Surface], ResourceKind)
  /// The XML API: path style `/<bucket>/<object>` or `Host: <bucket>.<xml_virtual_host>`.
  case xml(XMLLevel)
  /// A V4 POST policy form upload: `POST /<bucket>` or `POST /` on the bucket's virtual host.
  case postPolicy
}

/// The kinds of resource `Route.match` finds on the JSON surfaces.
public enum ResourceKind: Int, Sendable, CaseIterable {
  case buckets, bucket, storageLayout, managedFolders, objects, object
  /// `ClientResource`s: ACL collections and entries, IAM, notifications, project resources.
  case bucketACLs, bucketACL, defaultObjectACLs, defaultObjectACL, objectACLs, objectACL
  case iamPolicy, iamTestPermissions, notificationConfigs, notificationConfig, serviceAccount, hmacKeys, hmacKey
}

/// What an XML API request addresses.
public enum XMLLevel: Int, Sendable, CaseIterable {
  /// `GET /`: ListBuckets.
  case service
  case bucket
  case object
}

/// Facts about a request, beyond its method and path, that choose between routes of one path.
/// Each is a cheap look at the parsed query, a header, or the path's action suffix.
public struct RouteFlags: OptionSet, Sendable, Hashable {
  public let rawValue: UInt16
  public init(rawValue: UInt16) { self.rawValue = rawValue }

  /// `?upload_id=`: the URL of a resumable session.
  public static let session = RouteFlags(rawValue: 1 << 0)
  /// `?uploadType=`: a POST on a JSON surface's `/o` is an upload only with it.
  public static let uploadType = RouteFlags(rawValue: 1 << 1)
  /// The start of a resumable upload, whose body is the metadata document: `uploadType=resumable`
  /// (GCS), `X-Goog-Upload-Command: start` (Firebase).
  public static let resumableStart = RouteFlags(rawValue: 1 << 2)
  /// `?alt=media`: a download.
  public static let media = RouteFlags(rawValue: 1 << 3)
  /// `?create_token=` / `?delete_token=`: a Firebase download-token command.
  public static let tokenCommand = RouteFlags(rawValue: 1 << 4)
  /// The path ends in `/copyTo/b/…/o/…`, `/rewriteTo/b/…/o/…` or `/compose`.
  public static let action = RouteFlags(rawValue: 1 << 5)
  /// `?uploads` / `?uploadId=`: an XML multipart upload.
  public static let xmlMultipart = RouteFlags(rawValue: 1 << 6)
  /// `x-goog-copy-source`: an XML copy.
  public static let xmlCopy = RouteFlags(rawValue: 1 << 7)
  /// `x-goog-resumable: start`: the start of an XML resumable upload.
  public static let xmlResumableStart = RouteFlags(rawValue: 1 << 8)
}

/// One line of the route table: which requests it takes and how they are answered. Adding a route
/// is one entry (in `StorageAPI.routes`, or in the list an owner hands to `FrontDoor`) and one
/// handler.
public struct RouteEntry: Sendable {
  /// The methods taken, after `X-HTTP-Method-Override`; an empty list takes every method.
  public let methods: [String]
  public let pattern: RoutePattern
  /// The entry applies only to requests with all of these…
  public let requires: RouteFlags
  /// …and none of these.
  public let excludes: RouteFlags
  public let body: BodyPolicy
  public let execution: Execution
  let handler: RouteHandler

  init(
    _ methods: String, _ pattern: RoutePattern, when requires: RouteFlags = [], unless excludes: RouteFlags = [],
    body: BodyPolicy = .none, runs execution: Execution = .blocking, _ handler: RouteHandler
  ) {
    self.methods = methods.split(separator: " ").map(String.init)
    self.pattern = pattern
    self.requires = requires
    self.excludes = excludes
    self.body = body
    self.execution = execution
    self.handler = handler
  }

  /// An emulator route at one exact path, answered from the request alone (`/internal/health`).
  /// A non-GET one refuses requests from web pages of another origin (`FrontDoor.crossSiteRefusal`).
  public init(
    _ method: String, _ path: String, _ execution: Execution = .blocking, body: BodyPolicy = .none,
    handler: @escaping @Sendable (HTTPRequest) -> HTTPResponse
  ) {
    self.init(method, .path(path), body: body, runs: execution == .deferred ? .blocking : execution, .request(handler))
  }

  /// An emulator route answered later (a long poll): `start` must not block and must reply once.
  public init(
    _ method: String, _ path: String, deferred start: @escaping @Sendable (HTTPRequest, HTTPResponder) -> Void
  ) {
    self.init(method, .path(path), runs: .deferred, .requestLater(start))
  }

  /// Whether the entry applies to a request with these facts.
  func applies(_ flags: RouteFlags) -> Bool { flags.isSuperset(of: requires) && flags.isDisjoint(with: excludes) }

  func takes(_ method: String) -> Bool { methods.isEmpty || methods.contains(method) }
}

/// How an entry answers, by what it needs. API handlers are the API's methods, named unapplied
/// (`.json(StorageAPI.list)`).
enum RouteHandler: Sendable {
  /// An emulator route of its owner.
  case request(@Sendable (HTTPRequest) -> HTTPResponse)
  case requestLater(@Sendable (HTTPRequest, HTTPResponder) -> Void)
  /// A route of the API at an exact path (`/internal/setRules`).
  case api(@Sendable (StorageAPI) -> (HTTPRequest) -> HTTPResponse)
  /// A JSON surface's route; what it throws (`APIError`, `StorageError`) is answered in the
  /// surface's flavour by `APIError(mapping:)`.
  case json(@Sendable (StorageAPI) -> (RequestContext) throws -> HTTPResponse)
  /// A JSON surface's route answered later (metadata updates).
  case jsonLater(@Sendable (StorageAPI) -> (RequestContext, HTTPResponder) -> Void)
  /// An XML API route; what it throws becomes an XML error document (`XMLError(mapping:)`).
  case xml(@Sendable (StorageAPI) -> (XMLContext) throws -> HTTPResponse)
}

/// An XML API request on its way to its handler.
struct XMLContext: Sendable {
  var request: HTTPRequest
  var route: XMLRoute
  var query: QueryParameters
  /// The bucket, for entries on a bucket or object.
  var bucket: String { route.bucket ?? "" }
  /// The object name, for entries on an object.
  var name: String { route.name ?? "" }
}
