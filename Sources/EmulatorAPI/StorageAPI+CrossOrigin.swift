import EmulatorHTTP

/// What the browser policies (`CrossOriginHandler`, in the HTTP layer) need to know of the API:
/// the methods each route serves, the headers the SDKs read, and the error flavour.
extension StorageAPI {
  /// Every header a Firebase or GCS SDK reads from a response, exposed to pages on every answer
  /// (`Access-Control-Expose-Headers`); a response's own other headers, such as its
  /// `x-goog-meta-*`, are exposed as well.
  public static let exposedHeaders = [
    "X-Goog-Upload-URL", "X-Goog-Upload-Status", "X-Goog-Upload-Chunk-Granularity", "X-Goog-Upload-Size-Received",
    "X-Goog-Upload-Control-URL", "X-GUploader-UploadID", "Location", "Range", "ETag", "Content-Range",
    "Content-Length", "Content-Type", "Content-Disposition", "Content-Encoding", "X-Goog-Generation",
    "X-Goog-Metageneration", "X-Goog-Hash", "X-Goog-Stored-Content-Length", "X-Goog-Stored-Content-Encoding",
    "X-Goog-Meta-*", "X-Firebase-Storage-Version",
  ]

  /// The methods the route table serves at this target (what a CORS preflight may be granted
  /// and what `Allow` says); nil when no route has the path.
  public func allowedMethods(for head: HTTPRequestHead) -> [String]? { allowedMethods(for: head, in: table) }

  /// A bucket's `cors` configuration, for its downloads (`/download/storage/v1/…`, and `alt=media`
  /// on every surface, preflights included): as on GCS, its first entry that names the request's
  /// origin (or `*`) and method (or `*`) decides the CORS headers, and no entry means none. nil
  /// (the server-wide policy) for every other request, and for buckets without `cors`.
  public func crossOriginRules(for head: HTTPRequestHead) -> [CrossOriginRule]? {
    guard let bucket = Self.bucketWithOwnCORS(head, xml: xmlRoute(head)),
      case .array(let entries)? = (try? store.bucket(bucket))?.settings["cors"], !entries.isEmpty
    else { return nil }
    return entries.map { entry in
      func strings(_ key: String) -> [String] {
        guard case .array(let items)? = entry[key] else { return [] }
        return items.compactMap(\.stringValue)
      }
      var age: Int?
      if case .number(let text)? = entry["maxAgeSeconds"] { age = Int(text) }
      return CrossOriginRule(
        origins: strings("origin"), methods: strings("method"), responseHeaders: strings("responseHeader"),
        maxAgeSeconds: age)
    }
  }

  /// The bucket whose `cors` decides this request: an XML API request on a bucket or object, or a
  /// JSON download (`/download/storage/v1/…`, or `alt=media`); nil for everything else.
  static func bucketWithOwnCORS(_ head: HTTPRequestHead, xml: Result<XMLRoute, XMLError>?) -> String? {
    if case .success(let route)? = xml { return route.bucket }
    guard let route = try? Route.match(rawPath: head.rawPath), case .object(let bucket, _) = route.resource,
      route.surface == .download || (try? QueryParameters(head.rawQuery))?["alt"] == "media"
    else { return nil }
    return bucket
  }

  /// A request refused or unreadable after its head arrived, in the flavour of its surface.
  public func errorResponse(for error: HTTPParseError, head: HTTPRequestHead) -> HTTPResponse {
    APIError(error.status, Self.reason(forStatus: error.status), error.message)
      .response(Flavour.of(rawPath: head.rawPath))
  }

  static func reason(forStatus status: Int) -> APIError.Reason {
    switch status {
    case 403: .forbidden
    case 404: .notFound
    case 405: .methodNotAllowed
    case 413: .uploadTooLarge
    default: .badRequest
    }
  }
}
