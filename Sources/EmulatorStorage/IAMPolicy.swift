/// A bucket's IAM policy as `setIamPolicy` sends it: `bindings` of a `role` and its `members`
/// (each binding may carry a `condition` from version 3 on), checked and kept; the emulator has
/// no identities, so it never enforces them.
public enum IAMPolicy {
  /// What a new bucket's policy holds, as GCS creates it: the project's owners and editors own
  /// the bucket, its viewers read it.
  public static let defaultBindings: JSONValue = .array([
    binding("roles/storage.legacyBucketOwner", ["projectEditor:emulator", "projectOwner:emulator"]),
    binding("roles/storage.legacyBucketReader", ["projectViewer:emulator"]),
  ])

  /// At most this many members over all bindings (GCS allows 1,500 principals per policy).
  public static let maxMembers = 1500
  /// At most this many bytes in one role or member.
  public static let maxTextBytes = 512

  static func binding(_ role: String, _ members: [String]) -> JSONValue {
    .object([("role", .string(role)), ("members", .array(members.map { .string($0) }))])
  }

  /// Checks the `bindings` and `version` of a policy a client sent; returns them in stored form
  /// (each binding's role, members and condition, nothing else).
  public static func check(_ policy: JSONValue) throws(StorageError) -> (bindings: JSONValue, version: Int) {
    guard case .object = policy else { throw StorageError.invalid("The policy must be a JSON object.") }
    var version = 1
    switch policy["version"] {
    case nil, .null: break
    case .number(let text)?:
      guard let value = Int(text), [0, 1, 3].contains(value) else {
        throw StorageError.invalid("Policy version must be 1 or 3, got \(text).")
      }
      version = max(value, 1)
    default: throw StorageError.invalid("Policy 'version' must be a number.")
    }
    var stored: [JSONValue] = []
    var memberCount = 0
    switch policy["bindings"] {
    case nil, .null: break
    case .array(let items)?:
      for item in items {
        guard case .object = item, let role = item["role"]?.stringValue, !role.isEmpty,
          role.utf8.count <= maxTextBytes
        else {
          throw StorageError.invalid("Each binding needs a 'role' (a non-empty string of at most \(maxTextBytes) bytes).")
        }
        guard role.hasPrefix("roles/") || role.hasPrefix("projects/") || role.hasPrefix("organizations/") else {
          throw StorageError.invalid("Role '\(role)' is not a role name (roles/…).")
        }
        guard case .array(let members)? = item["members"] else {
          throw StorageError.invalid("The binding for '\(role)' needs 'members' (an array of strings).")
        }
        var names: [JSONValue] = []
        for member in members {
          guard let text = member.stringValue, text.utf8.count <= maxTextBytes, isMember(text) else {
            throw StorageError.invalid(
              "Invalid member in the binding for '\(role)': use allUsers, allAuthenticatedUsers or kind:id (user:, group:, serviceAccount:, domain:, projectOwner:, projectEditor:, projectViewer:)."
            )
          }
          names.append(.string(text))
        }
        memberCount += names.count
        guard memberCount <= maxMembers else {
          throw StorageError.invalid("A policy may name at most \(maxMembers) members.")
        }
        var binding: [(String, JSONValue)] = [("role", .string(role)), ("members", .array(names))]
        if let condition = item["condition"], condition != .null {
          guard version == 3 else {
            throw StorageError.invalid("A binding with a condition needs policy version 3.")
          }
          guard case .object = condition, condition["expression"]?.stringValue != nil else {
            throw StorageError.invalid("A binding's condition needs an 'expression' (a string).")
          }
          binding.append(("condition", condition))
        }
        stored.append(.object(binding))
      }
    default: throw StorageError.invalid("Policy 'bindings' must be an array.")
    }
    return (.array(stored), version)
  }

  private static func isMember(_ text: String) -> Bool {
    if text == "allUsers" || text == "allAuthenticatedUsers" { return true }
    let kinds = [
      "user:", "group:", "serviceAccount:", "domain:", "projectOwner:", "projectEditor:", "projectViewer:",
      "principal:", "principalSet:", "deleted:",
    ]
    return kinds.contains { text.hasPrefix($0) && text.utf8.count > $0.utf8.count }
  }

  /// The policy's `etag`: a base64 varint of the revision, as opaque to clients as GCS's.
  public static func etag(revision: Int64) -> String {
    var bytes: [UInt8] = [0x08]
    ObjectMetadata.appendVarint(UInt64(max(revision, 0)), to: &bytes)
    return Base64.encode(bytes)
  }
}
