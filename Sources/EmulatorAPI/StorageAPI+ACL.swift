import EmulatorHTTP
import EmulatorStorage

/// ACLs (PROTOCOL.md, "ACLs, IAM and notifications"): `bucketAccessControls`,
/// `defaultObjectAccessControls` and `objectAccessControls`, kept with the bucket or object and
/// returned as GCS shapes them, never enforced. A bucket with uniform bucket-level access refuses
/// every ACL call with a 400, as GCS does.
extension StorageAPI {
  /// Serves the resources of `ClientResource` (the route table has already checked the method).
  func clientRequest(_ context: RequestContext) throws -> HTTPResponse {
    guard case .client(let resource) = context.route.resource else {
      throw APIError(404, .notFound, "No such resource.")
    }
    switch resource {
    case .bucketACL(let bucket, let entity, let defaultObject):
      return try bucketACL(context, bucket: bucket, entity: entity, defaultObject: defaultObject)
    case .objectACL(let bucket, let name, let entity):
      return try objectACL(context, bucket: bucket, name: name, entity: entity)
    case .iam(let bucket, let testPermissions):
      return testPermissions ? try iamTestPermissions(context, bucket: bucket) : try iamPolicy(context, bucket: bucket)
    case .notifications(let bucket, let id):
      return try notificationConfigs(context, bucket: bucket, id: id)
    case .serviceAccount(let project):
      return try serviceAccount(context, project: project)
    case .hmacKeys(let project, let accessID):
      return try hmacKeys(context, project: project, accessID: accessID)
    }
  }

  /// What an ACL call did.
  enum ACLOutcome: Equatable {
    case list
    case entry(AccessControl)
    case deleted
    /// The entity named in the path has no entry.
    case missing(String)
  }

  /// Applies one ACL call (list, get, insert, update, patch, delete) to `entries`.
  static func applyACL(
    _ context: RequestContext, entity: String?, scope: AccessControl.Scope, to entries: inout [AccessControl]
  ) throws(StorageError) -> ACLOutcome {
    let method = context.method
    guard let entity else {
      switch method {
      case "GET", "HEAD": return .list
      case "POST":
        let body = try jsonBody(context)
        let entry = try AccessControl(json: body, scope: scope)
        if let index = entries.firstIndex(where: { $0.entity == entry.entity }) {
          entries[index] = entry
        } else {
          guard entries.count < AccessControl.maxEntries else {
            throw StorageError.invalid("An ACL may have at most \(AccessControl.maxEntries) entries.")
          }
          entries.append(entry)
        }
        return .entry(entry)
      default: throw StorageError.invalid("Method \(method) is not allowed on an ACL; use GET or POST.")
      }
    }
    guard let index = entries.firstIndex(where: { $0.entity == entity }) else { return .missing(entity) }
    switch method {
    case "GET", "HEAD": return .entry(entries[index])
    case "PUT", "PATCH":
      let body = try jsonBody(context)
      if let sent = body["entity"]?.stringValue, sent != entity {
        throw StorageError.invalid("The entity in the body ('\(sent)') differs from the one in the path ('\(entity)').")
      }
      entries[index] = try AccessControl(json: body, scope: scope, entity: entity)
      return .entry(entries[index])
    case "DELETE":
      entries.remove(at: index)
      return .deleted
    default: throw StorageError.invalid("Method \(method) is not allowed on an ACL entry.")
    }
  }

  private static func jsonBody(_ context: RequestContext) throws(StorageError) -> JSONValue {
    do {
      return try RequestOptions.jsonObject(context.request.bodyBytes())
    } catch {
      throw StorageError.invalid(error.message)
    }
  }

  private static func checkACLMethod(_ context: RequestContext, entity: String?) throws(APIError) {
    let allowed = entity == nil ? ["GET", "HEAD", "POST"] : ["GET", "HEAD", "PUT", "PATCH", "DELETE"]
    guard allowed.contains(context.method) else { throw notAllowed(context.method, allowed.joined(separator: ", ")) }
  }

  static func uniformAccessError(_ bucket: String) -> StorageError {
    .invalid(
      "Bucket '\(bucket)' has uniform bucket-level access enabled (iamConfiguration.uniformBucketLevelAccess): its legacy ACLs cannot be read or changed; use IAM."
    )
  }

  private func bucketACL(
    _ context: RequestContext, bucket: String, entity: String?, defaultObject: Bool
  ) throws -> HTTPResponse {
    try Self.checkACLMethod(context, entity: entity)
    let scope: AccessControl.Scope = defaultObject ? .object : .bucket
    let (info, outcome) = try store.changeBucket(bucket, bumpsMetageneration: true) { info throws(StorageError) in
      guard !info.uniformAccess else { throw Self.uniformAccessError(bucket) }
      return defaultObject
        ? try Self.applyACL(context, entity: entity, scope: scope, to: &info.access.defaultObjectAcl)
        : try Self.applyACL(context, entity: entity, scope: scope, to: &info.access.acl)
    }
    let owner: ResourceJSON.ACLOwner = defaultObject ? .defaultObject(bucket) : .bucket(bucket)
    let entries = defaultObject ? info.access.defaultObjectAcl : info.access.acl
    return try aclResponse(context, outcome, entries: entries, owner: owner, etag: ResourceJSON.etag(of: info))
  }

  private func objectACL(
    _ context: RequestContext, bucket: String, name: String, entity: String?
  ) throws -> HTTPResponse {
    try Self.checkACLMethod(context, entity: entity)
    try Self.validate(name)
    let info = try store.bucket(bucket)
    guard !info.uniformAccess else { throw APIError(Self.uniformAccessError(bucket)) }
    let generation = try RequestOptions.int64(context.query, "generation")
    var object = try store.metadata(bucket: bucket, name: name, conditions: Preconditions(generation: generation))
    var entries = object.acl
    let outcome = try Self.applyACL(context, entity: entity, scope: .object, to: &entries)
    if entries != object.acl {
      guard generation == nil || generation == object.generation else {
        throw APIError(400, .invalid, "Only the live generation's ACL can be changed.")
      }
      var patch = MetadataPatch()
      patch.acl = entries
      // Checked against the metageneration read above, so a racing change is a 412, not lost.
      let conditions = Preconditions(ifGenerationMatch: object.generation, ifMetagenerationMatch: object.metageneration)
      object = try store.update(bucket: bucket, name: name, patch: patch, conditions: conditions)
    }
    return try aclResponse(context, outcome, entries: object.acl, owner: .object(object), etag: object.etag)
  }

  private func aclResponse(
    _ context: RequestContext, _ outcome: ACLOutcome, entries: [AccessControl], owner: ResourceJSON.ACLOwner,
    etag: String
  ) throws -> HTTPResponse {
    switch outcome {
    case .list: return context.ok(context.json.accessControls(entries, of: owner, etag: etag))
    case .entry(let entry): return context.ok(context.json.accessControl(entry, of: owner, etag: etag))
    case .deleted: return HTTPResponse(status: 204)
    case .missing(let entity): throw APIError(404, .notFound, "The ACL has no entry for entity '\(entity)'.")
    }
  }

  /// The ACLs a bucket insert, PATCH or PUT asks for: the `predefinedAcl` /
  /// `predefinedDefaultObjectAcl` query parameters, or `acl` / `defaultObjectAcl` in the body; checked before anything
  /// is written. With uniform bucket-level access (on the bucket or in the body) they are a 400.
  func requestedBucketAccess(
    _ context: RequestContext, _ body: JSONValue, current: String?
  ) throws -> (acl: [AccessControl]?, defaultObjectAcl: [AccessControl]?) {
    func read(_ key: String, _ query: String, _ scope: AccessControl.Scope) throws -> [AccessControl]? {
      // The predefined ACL wins: the clients send it with an empty list beside it.
      if let name = context.query[query] { return try AccessControl.predefined(name, scope: scope) }
      if let value = body[key], value != .null { return try AccessControl.list(json: value, scope: scope) }
      return nil
    }
    let acl = try read("acl", "predefinedAcl", .bucket)
    let defaultObjectAcl = try read("defaultObjectAcl", "predefinedDefaultObjectAcl", .object)
    guard acl != nil || defaultObjectAcl != nil else { return (nil, nil) }
    let uniformInBody = body["iamConfiguration"]?["uniformBucketLevelAccess"]?["enabled"] == .bool(true)
    let uniformNow = try current.map { name in
      try store.bucket(name).uniformAccess
    } ?? false
    if uniformInBody || uniformNow { throw APIError(Self.uniformAccessError(current ?? body["name"]?.stringValue ?? "")) }
    return (acl, defaultObjectAcl)
  }

  /// Keeps the ACLs `requestedBucketAccess` read; nil when there were none.
  func applyBucketAccess(
    _ bucket: String, _ access: (acl: [AccessControl]?, defaultObjectAcl: [AccessControl]?)
  ) throws -> BucketInfo? {
    guard access.acl != nil || access.defaultObjectAcl != nil else { return nil }
    return try store.changeBucket(bucket, bumpsMetageneration: false) { info throws(StorageError) in
      if let acl = access.acl { info.access.acl = acl }
      if let defaults = access.defaultObjectAcl { info.access.defaultObjectAcl = defaults }
    }.0
  }
}
