import EmulatorHTTP
import EmulatorStorage

/// ACL entries (`storage#bucketAccessControl`, `storage#objectAccessControl`) and the `acl`,
/// `defaultObjectAcl` and `owner` members that `projection=full` adds to a resource.
extension ResourceJSON {
  /// Whose ACL an entry belongs to.
  enum ACLOwner {
    case bucket(String)
    /// A bucket's default object ACL.
    case defaultObject(String)
    case object(ObjectMetadata)
  }

  func accessControl(_ entry: AccessControl, of owner: ACLOwner, etag: String) -> [UInt8] {
    var json = JSONWriter(capacity: 384)
    writeAccessControl(entry, of: owner, etag: etag, into: &json)
    return json.bytes
  }

  func accessControls(_ entries: [AccessControl], of owner: ACLOwner, etag: String) -> [UInt8] {
    var json = JSONWriter(capacity: 128 + entries.count * 384)
    json.beginObject()
    if case .bucket = owner {
      json.string("kind", "storage#bucketAccessControls")
    } else {
      json.string("kind", "storage#objectAccessControls")
    }
    writeACL(entries, of: owner, etag: etag, key: "items", into: &json)
    json.endObject()
    return json.bytes
  }

  func writeACL(_ entries: [AccessControl], of owner: ACLOwner, etag: String, key: String, into json: inout JSONWriter) {
    json.beginArray(key)
    for entry in entries { writeAccessControl(entry, of: owner, etag: etag, into: &json) }
    json.endArray()
  }

  /// `owner` with `projection=full`: the project's owners (the emulator has no identities).
  func writeOwner(into json: inout JSONWriter) {
    json.objectKey("owner")
    json.string("entity", AccessControl.ownerEntity)
    json.endObject()
  }

  private func writeAccessControl(
    _ entry: AccessControl, of owner: ACLOwner, etag: String, into json: inout JSONWriter
  ) {
    let entity = URLCoding.encodeComponent(entry.entity)
    json.beginObject()
    switch owner {
    case .bucket(let bucket):
      json.string("kind", "storage#bucketAccessControl")
      json.string("id", bucket + "/" + entry.entity)
      json.string("selfLink", "\(baseURL)/storage/v1/b/\(URLCoding.encodeComponent(bucket))/acl/\(entity)")
      json.string("bucket", bucket)
    case .defaultObject(let bucket):
      json.string("kind", "storage#objectAccessControl")
      json.string("id", bucket + "/" + entry.entity)
      json.string(
        "selfLink", "\(baseURL)/storage/v1/b/\(URLCoding.encodeComponent(bucket))/defaultObjectAcl/\(entity)")
      json.string("bucket", bucket)
    case .object(let object):
      json.string("kind", "storage#objectAccessControl")
      json.string("id", "\(object.bucket)/\(object.name)/\(object.generation)/\(entry.entity)")
      json.string(
        "selfLink",
        "\(baseURL)/storage/v1/b/\(URLCoding.encodeComponent(object.bucket))/o/\(URLCoding.encodeComponent(object.name))/acl/\(entity)"
      )
      json.string("bucket", object.bucket)
      json.string("object", object.name)
      json.integerString("generation", object.generation)
    }
    json.string("entity", entry.entity)
    json.string("role", entry.role)
    if let email = Self.suffix(entry.entity, after: ["user-", "group-"]), email.contains("@") {
      json.string("email", email)
    }
    if let domain = Self.suffix(entry.entity, after: ["domain-"]) { json.string("domain", domain) }
    for team in ["owners", "editors", "viewers"] {
      guard let number = Self.suffix(entry.entity, after: ["project-\(team)-"]) else { continue }
      json.objectKey("projectTeam")
      json.string("projectNumber", number)
      json.string("team", team)
      json.endObject()
    }
    json.string("etag", etag)
    json.endObject()
  }

  private static func suffix(_ entity: String, after prefixes: [String]) -> String? {
    for prefix in prefixes where entity.hasPrefix(prefix) { return String(entity.dropFirst(prefix.count)) }
    return nil
  }
}
