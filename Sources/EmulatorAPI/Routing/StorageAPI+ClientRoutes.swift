import EmulatorHTTP

/// The route table's entries for the JSON API's other resources (`ClientResource`: ACLs, IAM,
/// notification configurations, the project's service account and HMAC keys) and for
/// `POST /batch/storage/v1`. Reads of memory answer on the connection's thread; changes write.
extension StorageAPI {
  private static let surfaces: [Surface] = [.json, .bare]
  /// `/storage/v1/projects/{p}/…` only.
  private static let projects: [Surface] = [.json]

  static let clientRoutes: [RouteEntry] =
    [ResourceKind.bucketACLs, .defaultObjectACLs, .objectACLs, .notificationConfigs, .hmacKeys].flatMap { kind in
      let on = kind == .hmacKeys ? projects : surfaces
      return [
        RouteEntry("GET HEAD", .storage(on, kind), runs: .memory, .json(StorageAPI.clientRequest)),
        RouteEntry("POST", .storage(on, kind), body: .document, .json(StorageAPI.clientRequest)),
      ]
    }
    + [ResourceKind.bucketACL, .defaultObjectACL, .objectACL].flatMap { kind in
      [
        RouteEntry("GET HEAD", .storage(surfaces, kind), runs: .memory, .json(StorageAPI.clientRequest)),
        RouteEntry("PATCH PUT", .storage(surfaces, kind), body: .document, .json(StorageAPI.clientRequest)),
        RouteEntry("DELETE", .storage(surfaces, kind), .json(StorageAPI.clientRequest)),
      ]
    } + [
      RouteEntry("GET HEAD", .storage(surfaces, .iamPolicy), runs: .memory, .json(StorageAPI.clientRequest)),
      RouteEntry("PUT", .storage(surfaces, .iamPolicy), body: .document, .json(StorageAPI.clientRequest)),
      RouteEntry("GET HEAD", .storage(surfaces, .iamTestPermissions), runs: .memory, .json(StorageAPI.clientRequest)),
      RouteEntry("GET HEAD", .storage(surfaces, .notificationConfig), runs: .memory, .json(StorageAPI.clientRequest)),
      RouteEntry("DELETE", .storage(surfaces, .notificationConfig), .json(StorageAPI.clientRequest)),
      RouteEntry("GET HEAD", .storage(projects, .serviceAccount), runs: .memory, .json(StorageAPI.clientRequest)),
      RouteEntry("GET HEAD", .storage(projects, .hmacKey), runs: .memory, .json(StorageAPI.clientRequest)),
      RouteEntry("PUT", .storage(projects, .hmacKey), body: .document, .json(StorageAPI.clientRequest)),
      RouteEntry("DELETE", .storage(projects, .hmacKey), .json(StorageAPI.clientRequest)),
      RouteEntry("POST", .path(batchPath), body: .document, .api(StorageAPI.batch)),
    ]
}
