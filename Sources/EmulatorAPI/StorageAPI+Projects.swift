import EmulatorHTTP
import EmulatorStorage

/// `projects/{p}/serviceAccount` and `projects/{p}/hmacKeys` (PROTOCOL.md, "Projects"): the
/// service account is a fixed, made-up one (the emulator has no identities); HMAC keys are made,
/// listed, activated and deactivated, and deleted once INACTIVE, as on GCS (`HMACKeyRing`).
extension StorageAPI {
  /// The email `serviceAccount` answers with, in GCS's form.
  static let serviceAccountEmail = "service-\(AccessControl.projectNumber)@gs-project-accounts.iam.gserviceaccount.com"

  func serviceAccount(_ context: RequestContext, project: String) throws -> HTTPResponse {
    guard context.method == "GET" || context.method == "HEAD" else { throw Self.notAllowed(context.method, "GET, HEAD") }
    var json = JSONWriter()
    json.beginObject()
    json.string("kind", "storage#serviceAccount")
    json.string("email_address", Self.serviceAccountEmail)
    json.endObject()
    return context.ok(json.bytes)
  }

  func hmacKeys(_ context: RequestContext, project: String, accessID: String?) throws -> HTTPResponse {
    let ring = signing.madeKeys
    guard let accessID else {
      switch context.method {
      case "GET", "HEAD":
        let account = context.query["serviceAccountEmail"]
        let showDeleted = context.query["showDeletedKeys"]?.lowercased() == "true"
        let keys = ring.list(project: project).filter {
          (account == nil || $0.serviceAccount == account) && (showDeleted || $0.state != "DELETED")
        }
        var json = JSONWriter(capacity: 128 + keys.count * 512)
        json.beginObject()
        json.string("kind", "storage#hmacKeysMetadata")
        json.beginArray("items")
        for key in keys { writeHMACMetadata(key, into: &json) }
        json.endArray()
        json.endObject()
        return context.ok(json.bytes)
      case "POST":
        guard let account = context.query["serviceAccountEmail"], !account.isEmpty else {
          throw APIError(400, .required, "Required parameter: serviceAccountEmail.")
        }
        guard account.utf8.count <= 256, account.contains("@") else {
          throw APIError(400, .invalid, "serviceAccountEmail must be a service account's email address.")
        }
        let key = try ring.create(project: project, serviceAccount: account)
        var json = JSONWriter()
        json.beginObject()
        json.string("kind", "storage#hmacKey")
        json.key("metadata")
        writeHMACMetadata(key, into: &json)
        json.string("secret", key.secret)
        json.endObject()
        return context.ok(json.bytes)
      default: throw Self.notAllowed(context.method, "GET, HEAD, POST")
      }
    }
    let missing = APIError(404, .notFound, "No such HMAC key: \(accessID)")
    switch context.method {
    case "GET", "HEAD":
      guard let key = ring.get(project: project, accessID: accessID) else { throw missing }
      return context.ok(hmacMetadata(key))
    case "PUT":
      let body = try RequestOptions.jsonObject(context.request.bodyBytes())
      guard let state = body["state"]?.stringValue, state == "ACTIVE" || state == "INACTIVE" else {
        throw APIError(400, .invalid, "An HMAC key's state must be ACTIVE or INACTIVE.")
      }
      let sentEtag = body["etag"]?.stringValue
      let changed = try ring.change(project: project, accessID: accessID) { key throws(StorageError) in
        if let sentEtag, sentEtag != IAMPolicy.etag(revision: key.revision) {
          throw StorageError.conditionNotMet("The HMAC key's etag is \(IAMPolicy.etag(revision: key.revision)).")
        }
        key.state = state
      }
      guard let key = changed else { throw missing }
      return context.ok(hmacMetadata(key))
    case "DELETE":
      let changed = try ring.change(project: project, accessID: accessID) { key throws(StorageError) in
        guard key.state == "INACTIVE" else {
          throw StorageError.invalid("Cannot delete HMAC key \(accessID) while it is ACTIVE: set its state to INACTIVE first.")
        }
        key.state = "DELETED"
      }
      guard changed != nil else { throw missing }
      return HTTPResponse(status: 204)
    default: throw Self.notAllowed(context.method, "GET, HEAD, PUT, DELETE")
    }
  }

  private func hmacMetadata(_ key: HMACKeyRing.Key) -> [UInt8] {
    var json = JSONWriter()
    writeHMACMetadata(key, into: &json)
    return json.bytes
  }

  private func writeHMACMetadata(_ key: HMACKeyRing.Key, into json: inout JSONWriter) {
    let fields = [
      ("kind", "storage#hmacKeyMetadata"), ("id", "\(key.project)/\(key.accessID)"), ("accessId", key.accessID),
      ("projectId", key.project), ("serviceAccountEmail", key.serviceAccount), ("state", key.state),
    ]
    json.beginObject()
    for (name, value) in fields { json.string(name, value) }
    json.timestamp("timeCreated", milliseconds: key.timeCreated)
    json.timestamp("updated", milliseconds: key.updated)
    json.string("etag", IAMPolicy.etag(revision: key.revision))
    json.endObject()
  }
}
