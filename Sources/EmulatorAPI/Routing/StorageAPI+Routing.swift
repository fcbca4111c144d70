import EmulatorHTTP

/// The route table at work: where a request goes (`resolve`), which entry takes it, its body
/// limit, how it runs, and the methods of its path (405 `Allow`, CORS preflights). `StorageAPI`
/// uses its own table; `FrontDoor` one with the emulator's own routes added.
extension StorageAPI {
  /// Where a head's path leads, in the order the server decides it: the exact paths of the
  /// emulator's own routes, a POST policy form, the XML API (virtual host first), the JSON surfaces.
  enum Destination {
    case path([Int])
    case postPolicy
    case xml(XMLRoute)
    case xmlFailure(XMLError)
    case storage(Route)
    /// No route: 404 (or the path's malformed escape, 400), in the flavour of the path.
    case none(APIError)
  }

  /// - Parameter method: the method the request is made with; nil asks for the path alone (CORS
  ///   preflights). A one-segment exact path (`/`, `/ui`) keeps only its own methods: another
  ///   method goes on to the storage surfaces (`POST /` can be a POST policy upload).
  func resolve(_ head: HTTPRequestHead, method: String?, in table: RouteTable) -> Destination {
    if let candidates = table.pathEntries(head.rawPath) {
      let oneSegment = !head.rawPath.utf8.dropFirst().contains(UInt8(ascii: "/"))
      if let method, oneSegment, !candidates.contains(where: { table.entries[$0].takes(method) }) {
        // falls through to the other surfaces
      } else {
        return .path(candidates)
      }
    }
    if method == "POST", !table.postPolicyEntries.isEmpty,
      Self.postPolicyBucket(head, virtualHost: limits.xmlVirtualHost) != nil
    {
      return .postPolicy
    }
    switch xmlRoute(head) {
    case .success(let route)?: return .xml(route)
    case .failure(let error)?: return .xmlFailure(error)
    case nil: break
    }
    do {
      if let route = try Route.match(rawPath: head.rawPath) { return .storage(route) }
      return .none(APIError(404, .notFound, "No route for \(head.method) \(head.rawPath)."))
    } catch {
      return .none(error)
    }
  }

  /// The facts the entries of a JSON-surface slot test, for this request.
  static func flags(_ head: HTTPRequestHead, _ query: QueryParameters, _ route: Route, testing tested: RouteFlags)
    -> RouteFlags
  {
    var flags: RouteFlags = []
    guard !tested.isEmpty else { return flags }
    if tested.contains(.session), query["upload_id"] != nil { flags.insert(.session) }
    if tested.contains(.uploadType), query["uploadType"] != nil { flags.insert(.uploadType) }
    if tested.contains(.media), query["alt"] == "media" { flags.insert(.media) }
    if tested.contains(.tokenCommand), query["create_token"] != nil || query["delete_token"] != nil {
      flags.insert(.tokenCommand)
    }
    if tested.contains(.action), route.action != nil { flags.insert(.action) }
    if tested.contains(.resumableStart) {
      let start =
        route.surface.flavour.usesGoogUploadProtocol
          ? commands(head.headers).contains("start") : query["uploadType"] == "resumable"
      if start { flags.insert(.resumableStart) }
    }
    return flags
  }

  /// The facts the XML entries test.
  static func xmlFlags(_ head: HTTPRequestHead, _ query: QueryParameters) -> RouteFlags {
    var flags: RouteFlags = []
    if query["uploads"] != nil || query["uploadId"] != nil { flags.insert(.xmlMultipart) }
    if head.headers["x-goog-copy-source"] != nil { flags.insert(.xmlCopy) }
    if head.headers["x-goog-resumable"]?.lowercased() == "start" { flags.insert(.xmlResumableStart) }
    return flags
  }

  static func level(_ route: XMLRoute) -> XMLLevel {
    route.bucket == nil ? .service : route.name == nil ? .bucket : .object
  }

  /// The index in `table` of the entry a head leads to, with what `bodyLimit` knows (the head
  /// alone); nil for none.
  func entryIndex(for head: HTTPRequestHead, in table: RouteTable) -> Int? {
    switch resolve(head, method: head.method, in: table) {
    case .path(let candidates):
      return table.firstIndex(candidates, method: head.method, flags: [])
    case .postPolicy:
      return table.firstIndex(table.postPolicyEntries, method: head.method, flags: [])
    case .xml(let route):
      guard let query = try? QueryParameters(head.rawQuery) else { return nil }
      return table.firstIndex(
        table.xmlEntries(Self.level(route)), method: head.method, flags: Self.xmlFlags(head, query))
    case .storage(let route):
      guard let query = try? QueryParameters(head.rawQuery) else { return nil }
      let kind = route.resource.kind
      let flags = Self.flags(head, query, route, testing: table.storageFlagsTested(route.surface, kind))
      return table.firstIndex(
        table.storageEntries(route.surface, kind), method: Self.effectiveMethod(head), flags: flags)
    case .xmlFailure, .none:
      return nil
    }
  }

  /// The body limit of the entry the head leads to. A method no entry takes object data with is
  /// not looked up (its limit is the document one whatever the entry); no entry (a 404 or 405 to
  /// come) and an unparsable query get the smaller limit. `X-HTTP-Method-Override` only turns a
  /// POST or PUT into another method, so the sent method decides whether to look.
  func bodyLimit(for head: HTTPRequestHead, in table: RouteTable) -> Int {
    guard table.methodsWithObjectData.contains(head.method) else { return limits.maxMetadataBytes }
    switch entryIndex(for: head, in: table).map({ table.entries[$0].body }) {
    case .objectData?: return limits.maxUploadBytes
    case .document?, .none?, nil: return limits.maxMetadataBytes
    }
  }

  /// The methods the table serves at the head's target (the flags of its query and headers
  /// count: `?upload_id=` makes a session URL); nil when no route has the path.
  func allowedMethods(for head: HTTPRequestHead, in table: RouteTable) -> [String]? {
    switch resolve(head, method: nil, in: table) {
    case .path(let candidates):
      return table.methods(candidates, flags: [])
    case .postPolicy:
      return table.methods(table.postPolicyEntries, flags: [])
    case .xml(let route):
      let query = (try? QueryParameters(head.rawQuery)) ?? QueryParameters()
      return table.methods(xmlPathEntries(head, route, in: table), flags: Self.xmlFlags(head, query))
    case .storage(let route):
      let query = (try? QueryParameters(head.rawQuery)) ?? QueryParameters()
      let kind = route.resource.kind
      let flags = Self.flags(head, query, route, testing: table.storageFlagsTested(route.surface, kind))
      return table.methods(table.storageEntries(route.surface, kind), flags: flags)
    case .xmlFailure, .none:
      return nil
    }
  }

  /// The entries at an XML path, for its methods: a bucket's path is also where POST policy
  /// forms go.
  func xmlPathEntries(_ head: HTTPRequestHead, _ route: XMLRoute, in table: RouteTable) -> [Int] {
    var post = head
    post.method = "POST"
    let forms = Self.postPolicyBucket(post, virtualHost: limits.xmlVirtualHost) == nil ? [] : table.postPolicyEntries
    return table.xmlEntries(Self.level(route)) + forms
  }

  /// Turns an entry's work into the server's `HTTPHandling`, by the entry's `execution`.
  static func handling(_ execution: Execution, _ work: @escaping @Sendable () -> HTTPResponse) -> HTTPHandling {
    execution == .memory ? .respond(work()) : .blocking(work)
  }
}

extension Resource {
  var kind: ResourceKind {
    switch self {
    case .buckets: .buckets
    case .bucket: .bucket
    case .storageLayout: .storageLayout
    case .managedFolders: .managedFolders
    case .objects: .objects
    case .object: .object
    case .client(let resource): resource.kind
    }
  }
}
