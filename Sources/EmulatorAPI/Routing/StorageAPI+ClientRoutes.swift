import EmulatorHTTP

/// The route table's entries for the JSON API's other resources (`ClientResource`: ACLs, IAM,
/// notification configurations, the project's service account and HMAC keys) and for
/// `POST /batch/storage/v1`. Reads of memory answer on the connection's thread; changes write.
extension StorageAPI {
  /// `/storage/v1/b/{b}/…` and `/b/{b}/…`.
  private static let surfaces: [Surface] = [.json, .bare]
  /// `/storage/v1/projects/{p}/…` only.
  private static let projects: [Surface] = [.json]

  /// One entry per kind, each answered by `clientRequest`.
  private static func serve(
    _ methods: String, _ kinds: [ResourceKind], on surfaces: [Surface] = surfaces, body: BodyPolicy = .none,
    runs execution: Execution = .blocking
  ) -> [RouteEntry] {
    kinds.map { RouteEntry(methods, .storage(surfaces, $0), body: body, runs: execution, .json(StorageAPI.clientRequest)) }
  }

  private static let aclCollections: [ResourceKind] = [.bucketACLs, .defaultObjectACLs, .objectACLs]
  private static let aclEntries: [ResourceKind] = [.bucketACL, .defaultObjectACL, .objectACL]

  static let clientRoutes: [RouteEntry] =
    serve("GET HEAD", aclCollections + aclEntries, runs: .memory)
    + serve("GET HEAD", [.iamPolicy, .iamTestPermissions, .notificationConfigs, .notificationConfig], runs: .memory)
    + serve("GET HEAD", [.serviceAccount, .hmacKeys, .hmacKey], on: projects, runs: .memory)
    + serve("POST", aclCollections + [.notificationConfigs], body: .document)
    + serve("POST", [.hmacKeys], on: projects, body: .document)
    + serve("PATCH PUT", aclEntries, body: .document)
    + serve("PUT", [.iamPolicy], body: .document)
    + serve("PUT", [.hmacKey], on: projects, body: .document)
    + serve("DELETE", aclEntries + [.notificationConfig])
    + serve("DELETE", [.hmacKey], on: projects)
    + [RouteEntry("POST", .path(batchPath), body: .document, .api(StorageAPI.batch))]
}
