import EmulatorHTTP
import EmulatorStorage

/// A bucket's IAM policy (`getIamPolicy`, `setIamPolicy`, `testIamPermissions`). The policy is
/// checked, kept with the bucket and returned; the emulator has no identities, so it enforces
/// nothing, and `testIamPermissions` grants every valid `storage.*` permission asked for (the
/// caller is treated as the project's owner, as the emulator serves every request).
extension StorageAPI {
  /// At most this many permissions in one `testIamPermissions` call.
  static let maxTestedPermissions = 100

  func iamPolicy(_ context: RequestContext, bucket: String) throws -> HTTPResponse {
    switch context.method {
    case "GET", "HEAD":
      let info = try store.bucket(bucket)
      let requested = try RequestOptions.int64(context.query, "optionsRequestedPolicyVersion") ?? 1
      guard requested == 1 || requested == 3 else {
        throw APIError(400, .invalid, "optionsRequestedPolicyVersion must be 1 or 3, got \(requested).")
      }
      if info.access.iamVersion == 3 && requested < 3 {
        throw APIError(
          400, .invalid,
          "The policy has conditional bindings (version 3): ask for it with optionsRequestedPolicyVersion=3.")
      }
      return context.ok(policyJSON(info))
    case "PUT":
      let body = try RequestOptions.jsonObject(context.request.bodyBytes())
      let sentEtag = body["etag"]?.stringValue
      let (info, _) = try store.changeBucket(bucket, bumpsMetageneration: false) { info throws(StorageError) in
        let current = IAMPolicy.etag(revision: info.access.iamRevision)
        if let sentEtag, sentEtag != current {
          throw StorageError.conditionNotMet("The policy's etag is \(current), not \(sentEtag): read it again.")
        }
        let (bindings, version) = try IAMPolicy.check(body)
        info.access.iamBindings = bindings
        info.access.iamVersion = version
        info.access.iamRevision += 1
      }
      return context.ok(policyJSON(info))
    default:
      throw Self.notAllowed(context.method, "GET, HEAD, PUT")
    }
  }

  private func policyJSON(_ info: BucketInfo) -> [UInt8] {
    var json = JSONWriter(capacity: 512)
    json.beginObject()
    json.string("kind", "storage#policy")
    json.string("resourceId", "projects/_/buckets/\(info.name)")
    json.raw("version", String(info.access.iamVersion))
    json.string("etag", IAMPolicy.etag(revision: info.access.iamRevision))
    json.key("bindings")
    info.access.iamBindings.write(into: &json)
    json.endObject()
    return json.bytes
  }

  /// `GET …/iam/testPermissions?permissions=a&permissions=b` (or comma-separated).
  func iamTestPermissions(_ context: RequestContext, bucket: String) throws -> HTTPResponse {
    guard context.method == "GET" || context.method == "HEAD" else {
      throw Self.notAllowed(context.method, "GET, HEAD")
    }
    _ = try store.bucket(bucket)
    var permissions: [String] = []
    for pair in context.request.head.rawQuery.split(separator: "&") where pair.hasPrefix("permissions=") {
      guard let value = URLCoding.percentDecode(pair.dropFirst("permissions=".count), plusIsSpace: true) else {
        throw APIError(400, .invalid, "The query parameter 'permissions' has a malformed percent-escape.")
      }
      permissions += value.split(separator: ",").map { String($0).trimmingASCIIWhitespace() }
      guard permissions.count <= Self.maxTestedPermissions else {
        throw APIError(400, .invalid, "At most \(Self.maxTestedPermissions) permissions may be tested at once.")
      }
    }
    guard !permissions.isEmpty else {
      throw APIError(400, .required, "Required parameter: permissions (e.g. permissions=storage.objects.get).")
    }
    for permission in permissions where !Self.isStoragePermission(permission) {
      throw APIError(400, .invalid, "Permission '\(permission)' is not a valid storage permission (storage.<resource>.<verb>).")
    }
    var json = JSONWriter()
    json.beginObject()
    json.string("kind", "storage#testIamPermissionsResponse")
    json.beginArray("permissions")
    for permission in permissions { json.string(permission) }
    json.endArray()
    json.endObject()
    return context.ok(json.bytes)
  }

  /// `storage.<resource>.<verb>`, letters only in each part.
  static func isStoragePermission(_ text: String) -> Bool {
    let parts = text.split(separator: ".", omittingEmptySubsequences: false)
    return parts.count == 3 && parts[0] == "storage"
      && parts.dropFirst().allSatisfy { !$0.isEmpty && $0.utf8.allSatisfy { (0x41...0x5A).contains($0) || (0x61...0x7A).contains($0) } }
  }
}
