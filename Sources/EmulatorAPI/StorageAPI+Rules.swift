import EmulatorHTTP
import EmulatorRules
import EmulatorStorage
import EmulatorSupport

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Security rules on the Firebase surface (`/v0`): reads are `get` and `list`, writes `create`
/// (no object yet), `update` (the object exists: metadata PATCH and overwrite by upload) and
/// `delete`. Checked before the object's existence, so a denied request on a missing object is
/// 403, not 404. With no rules configured nothing here runs.
extension StorageAPI {
  /// The Firebase SDKs' `storage/unauthorized`: `Permission denied. No READ|LIST|WRITE permission.`
  static func denied(_ method: RulesMethod, headers: HTTPHeaders = [:]) -> APIError {
    let kind =
      switch method {
      case .get: "READ"
      case .list: "LIST"
      case .create, .update, .delete: "WRITE"
      }
    return APIError(403, .forbidden, "Permission denied. No \(kind) permission.", headers: headers)
  }

  /// Evaluates the bucket's rules; throws the 403 when they deny.
  func authorize(
    _ method: RulesMethod, bucket: String, path: [String], delimiter: String? = nil, authorization: String?,
    resource: ObjectMetadata?, proposed: RulesValue = .null, headers: HTTPHeaders = [:]
  ) throws(APIError) {
    let ruleset: Ruleset
    switch rules.lookup(bucket: bucket) {
    case .unrestricted: return
    case .noRuleset:
      throw APIError(
        403, .forbidden, "Permission denied. Storage Emulator has no loaded ruleset.", headers: headers)
    case .ruleset(let found): ruleset = found
    }
    let auth: RulesValue
    switch FirebaseCredentials.of(authorization) {
    case .admin: return
    case .user(let value): auth = value
    }
    let request = RulesRequest(
      method: method, bucket: bucket, pathSegments: path, delimiter: delimiter, auth: auth,
      resource: resource.map(RulesViewCache.view(of:)) ?? .null, requestResource: proposed,
      time: .timestamp(milliseconds: Timestamp.nowMilliseconds()))
    guard ruleset.evaluate(request) else {
      // Denials are the rare case: evaluated again to say why.
      var notes: [String] = []
      _ = ruleset.evaluate(request, log: { notes.append($0) })
      let log = rules.log
      let name = "/" + path.joined(separator: "/")
      log(
        "rules: denied \(method.rawValue) b/\(bucket)/o\(name)\(notes.isEmpty ? "" : ": " + notes.joined(separator: "; "))"
      )
      throw Self.denied(method, headers: headers)
    }
  }

  static func segments(_ name: String) -> [String] {
    name.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
  }

  /// The object as it is, or nil when it does not exist (or the name is invalid: the handler
  /// reports that after the rules).
  func existing(_ bucket: String, _ name: String) -> ObjectMetadata? {
    try? store.metadata(bucket: bucket, name: name)
  }

  /// A Firebase GET (metadata or download). A `token` that is one of the object's download
  /// tokens skips the rules.
  func authorizeRead(_ context: RequestContext, bucket: String, name: String) throws(APIError) {
    guard context.flavour.checksRules, rules.isEnabled else { return }
    let object = existing(bucket, name)
    if let token = context.query["token"], let object, object.downloadTokens.contains(token) { return }
    try authorize(
      .get, bucket: bucket, path: Self.segments(name), authorization: context.request.headers["authorization"],
      resource: object)
  }

  /// A Firebase list: the path is the prefix without its trailing `/`; with a delimiter the
  /// request also matches rules written for the files directly in that folder.
  func authorizeList(_ context: RequestContext, bucket: String) throws(APIError) {
    guard context.flavour.checksRules, rules.isEnabled else { return }
    var prefix = Substring(context.query["prefix"] ?? "")
    while prefix.hasSuffix("/") { prefix = prefix.dropLast() }
    let path = prefix.isEmpty ? [] : Self.segments(String(prefix))
    let delimiter = context.query["delimiter"].flatMap { $0.isEmpty ? nil : $0 }
    try authorize(
      .list, bucket: bucket, path: path, delimiter: delimiter,
      authorization: context.request.headers["authorization"], resource: nil)
  }

  /// A Firebase upload of `size` bytes with `patch`: `update` when the object exists (an
  /// overwrite), `create` when not. `request.resource` is the object the upload would make.
  func authorizeUpload(
    _ context: RequestContext, bucket: String, name: String, patch: MetadataPatch, size: Int64,
    authorization: String?, headers: HTTPHeaders = [:]
  ) throws(APIError) {
    guard rules.isEnabled else { return }
    let current = existing(bucket, name)
    let now = Timestamp.nowMilliseconds()
    var proposed = ObjectMetadata(bucket: bucket, name: name, generation: 0, size: size, md5: nil, crc32c: 0, now: now)
    patch.apply(to: &proposed)
    try authorize(
      current == nil ? .create : .update, bucket: bucket, path: Self.segments(name), authorization: authorization,
      resource: current, proposed: proposed.rulesResource(includeHashes: false), headers: headers)
  }

  /// A Firebase metadata PATCH: `update`, with `request.resource` the object after the patch.
  func authorizePatch(_ context: RequestContext, bucket: String, name: String, patch: MetadataPatch)
    throws(APIError)
  {
    guard context.flavour.checksRules, rules.isEnabled else { return }
    let current = existing(bucket, name)
    var proposed: RulesValue = .null
    if var after = current {
      patch.apply(to: &after)
      after.metageneration += 1
      after.updated = Timestamp.nowMilliseconds()
      proposed = after.rulesResource()
    }
    try authorize(
      .update, bucket: bucket, path: Self.segments(name), authorization: context.request.headers["authorization"],
      resource: current, proposed: proposed)
  }

  /// A Firebase DELETE: `delete`, `resource` the object, `request.resource` null.
  func authorizeDelete(_ context: RequestContext, bucket: String, name: String) throws(APIError) {
    guard context.flavour.checksRules, rules.isEnabled else { return }
    try authorize(
      .delete, bucket: bucket, path: Self.segments(name), authorization: context.request.headers["authorization"],
      resource: existing(bucket, name))
  }

  /// A Firebase simple or multipart upload. A denied upload's spooled body is removed (it was
  /// handed over to the upload, and nothing will store it).
  func authorizeUpload(
    _ context: RequestContext, bucket: String, name: String, patch: MetadataPatch, source: ObjectStore.DataSource
  ) throws(APIError) {
    do throws(APIError) {
      try authorizeUpload(
        context, bucket: bucket, name: name, patch: patch, size: Self.size(of: source),
        authorization: context.request.headers["authorization"])
    } catch {
      if case .file(let path) = source { try? FileManager.default.removeItem(atPath: path) }
      throw error
    }
  }

  /// A Firebase resumable finalize, with the credentials of the request that started the
  /// session (the SDKs send none with the chunks). Denied: 403 with `x-goog-upload-status:
  /// final`; the session is over, its bytes dropped, and a later finalize is 403 again.
  func authorizeFinalize(_ context: RequestContext, _ session: UploadSession, patch: MetadataPatch) throws(APIError) {
    do throws(APIError) {
      try authorizeUpload(
        context, bucket: session.bucket, name: session.name, patch: patch, size: session.received,
        authorization: session.authorization ?? context.request.headers["authorization"],
        headers: ["x-goog-upload-status": "final"])
    } catch {
      try? sessions.cancel(session.id, denied: true)
      throw error
    }
  }

  /// How many bytes a data source holds.
  static func size(of source: ObjectStore.DataSource) -> Int64 {
    switch source {
    case .bytes(let bytes): return Int64(bytes.count)
    case .file(let path):
      var info = stat()
      return SystemCall.retrying({ stat(path, &info) }) == 0 ? Int64(info.st_size) : 0
    }
  }
}
