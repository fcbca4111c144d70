import EmulatorHTTP

/// The GCS JSON API resources beside buckets and objects (issue #15): ACLs, IAM, notification
/// configurations, and the project's service account and HMAC keys. `Route.match` finds them
/// with `ClientResource.match…`; `StorageAPI.clientRequest` serves them.
public enum ClientResource: Sendable, Equatable {
  /// `/b/{b}/acl[/{entity}]` and `/b/{b}/defaultObjectAcl[/{entity}]`.
  case bucketACL(bucket: String, entity: String?, defaultObject: Bool)
  /// `/b/{b}/o/{o}/acl[/{entity}]`.
  case objectACL(bucket: String, name: String, entity: String?)
  /// `/b/{b}/iam` and `/b/{b}/iam/testPermissions`.
  case iam(bucket: String, testPermissions: Bool)
  /// `/b/{b}/notificationConfigs[/{id}]`.
  case notifications(bucket: String, id: String?)
  /// `/projects/{p}/serviceAccount`.
  case serviceAccount(project: String)
  /// `/projects/{p}/hmacKeys[/{accessId}]`.
  case hmacKeys(project: String, accessID: String?)

  /// Its slot in the route table (`StorageAPI.clientRoutes`).
  var kind: ResourceKind {
    switch self {
    case .bucketACL(_, nil, false): .bucketACLs
    case .bucketACL(_, _, false): .bucketACL
    case .bucketACL(_, nil, true): .defaultObjectACLs
    case .bucketACL(_, _, true): .defaultObjectACL
    case .objectACL(_, _, nil): .objectACLs
    case .objectACL: .objectACL
    case .iam(_, false): .iamPolicy
    case .iam(_, true): .iamTestPermissions
    case .notifications(_, nil): .notificationConfigs
    case .notifications: .notificationConfig
    case .serviceAccount: .serviceAccount
    case .hmacKeys(_, nil): .hmacKeys
    case .hmacKeys: .hmacKey
    }
  }

  /// The bucket in the path; nil for the project resources.
  var bucket: String? {
    switch self {
    case .bucketACL(let bucket, _, _), .objectACL(let bucket, _, _), .iam(let bucket, _),
      .notifications(let bucket, _):
      bucket
    case .serviceAccount, .hmacKeys: nil
    }
  }

  /// `/storage/v1/projects/{p}/serviceAccount` and `…/hmacKeys[/{id}]`; nil for other paths.
  static func matchProject(rawPath: Substring) throws(APIError) -> ClientResource? {
    let prefix = "/storage/v1/projects/"
    guard rawPath.utf8HasPrefix(prefix) else { return nil }
    let parts = rawPath.utf8.dropFirst(prefix.utf8.count).split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false)
    guard parts.count >= 2, !parts[0].isEmpty else { return nil }
    let project = try decode(parts[0].asSubstring(of: rawPath))
    switch (Substring(parts[1].asSubstring(of: rawPath)), parts.count) {
    case ("serviceAccount", 2): return .serviceAccount(project: project)
    case ("hmacKeys", 2): return .hmacKeys(project: project, accessID: nil)
    case ("hmacKeys", 3) where !parts[2].isEmpty:
      return .hmacKeys(project: project, accessID: try decode(parts[2].asSubstring(of: rawPath)))
    default: return nil
    }
  }

  /// What follows `/b/{bucket}` on the JSON surfaces: `/acl…`, `/defaultObjectAcl…`, `/iam…`,
  /// `/notificationConfigs…`; nil for anything else.
  static func matchBucket(_ bucket: String, tail: Substring) throws(APIError) -> ClientResource? {
    func rest(after marker: String) throws(APIError) -> String?? {
      guard tail.utf8HasPrefix(marker) else { return nil }
      let after = tail.utf8.dropFirst(marker.utf8.count).asSubstring(of: tail)
      if after.isEmpty { return .some(nil) }
      guard after.utf8.first == UInt8(ascii: "/"), after.utf8.count > 1 else { return nil }
      let segment = after.utf8.dropFirst().asSubstring(of: after)
      guard !segment.utf8.contains(UInt8(ascii: "/")) else { return nil }
      return .some(try decode(segment))
    }
    if let entity = try rest(after: "/acl") { return .bucketACL(bucket: bucket, entity: entity, defaultObject: false) }
    if let entity = try rest(after: "/defaultObjectAcl") {
      return .bucketACL(bucket: bucket, entity: entity, defaultObject: true)
    }
    if let id = try rest(after: "/notificationConfigs") { return .notifications(bucket: bucket, id: id) }
    switch try rest(after: "/iam") {
    case .some(nil): return .iam(bucket: bucket, testPermissions: false)
    case .some("testPermissions"?): return .iam(bucket: bucket, testPermissions: true)
    default: return nil
    }
  }

  /// `{name}/acl` or `{name}/acl/{entity}` in the raw object part of the path (a name's own `/`
  /// is sent as `%2F` by the clients, so a raw `/acl` is the ACL, as on GCS).
  static func matchObject(_ bucket: String, rawName: Substring) throws(APIError) -> ClientResource? {
    if rawName.utf8.count > 4, rawName.utf8HasSuffix("/acl") {
      let name = try decode(rawName.utf8.dropLast(4).asSubstring(of: rawName))
      return .objectACL(bucket: bucket, name: name, entity: nil)
    }
    guard let marker = rawName.utf8Range(of: "/acl/"), marker.lowerBound != rawName.startIndex else { return nil }
    let entity = rawName[marker.upperBound...]
    guard !entity.isEmpty, !entity.utf8.contains(UInt8(ascii: "/")) else { return nil }
    return .objectACL(bucket: bucket, name: try decode(rawName[..<marker.lowerBound]), entity: try decode(entity))
  }

  private static func decode(_ raw: Substring) throws(APIError) -> String {
    guard let text = URLCoding.percentDecode(raw) else {
      throw APIError(400, .invalid, "A path segment has a malformed percent-escape or is not valid UTF-8.")
    }
    return text
  }
}
