/// One entry of a legacy ACL: who (`entity`) may do what (`role`), as GCS stores it on buckets,
/// objects and a bucket's default object ACL. The emulator has no identities, so it keeps and
/// returns ACLs but never enforces them; an object's owner is the project's owners team.
public struct AccessControl: Sendable, Equatable {
  /// `allUsers`, `user-<email>`, `project-owners-<number>`… (see `validate(entity:)`).
  public var entity: String
  /// OWNER, WRITER (buckets only) or READER.
  public var role: String

  public init(entity: String, role: String) { (self.entity, self.role) = (entity, role) }

  /// Whether the ACL belongs to a bucket (roles OWNER, WRITER, READER) or to an object (OWNER, READER).
  public enum Scope: Sendable {
    case bucket, object
  }

  /// The project number in `project-<team>-<number>` entities; the bucket resource's `projectNumber`.
  public static let projectNumber = "0"
  /// The owner of every bucket and object (`owner.entity` with `projection=full`).
  public static let ownerEntity = "project-owners-\(projectNumber)"
  /// At most this many entries in one ACL (GCS allows 100).
  public static let maxEntries = 100
  /// At most this many bytes in one entity.
  public static let maxEntityBytes = 256

  /// Checks an entity's form: `allUsers`, `allAuthenticatedUsers`, `user-…`, `group-…`,
  /// `domain-…`, `project-owners|editors|viewers-…`.
  public static func validate(entity: String) throws(StorageError) {
    guard !entity.isEmpty, entity.utf8.count <= maxEntityBytes else {
      throw StorageError.invalid("An ACL entity must be 1 to \(maxEntityBytes) bytes long.")
    }
    if entity == "allUsers" || entity == "allAuthenticatedUsers" { return }
    for prefix in ["user-", "group-", "domain-", "project-owners-", "project-editors-", "project-viewers-"]
    where entity.utf8.starts(with: prefix.utf8) && entity.utf8.count > prefix.utf8.count {
      guard entity.utf8.allSatisfy({ $0 > 0x20 && $0 != 0x7F && $0 != UInt8(ascii: "/") }) else { break }
      return
    }
    throw StorageError.invalid(
      "Invalid ACL entity '\(entity)': use allUsers, allAuthenticatedUsers, user-<email>, group-<email>, domain-<domain> or project-<owners|editors|viewers>-<project>."
    )
  }

  /// Checks a role for the scope; returns it upper case.
  public static func validate(role: String, scope: Scope) throws(StorageError) -> String {
    let upper = role.uppercased()
    let allowed = scope == .bucket ? ["OWNER", "WRITER", "READER"] : ["OWNER", "READER"]
    guard allowed.contains(upper) else {
      throw StorageError.invalid("Invalid ACL role '\(role)': use \(allowed.joined(separator: ", ")).")
    }
    return upper
  }

  /// One entry from a request body (`{"entity": …, "role": …}`); `entity` may come from the path.
  public init(json: JSONValue, scope: Scope, entity pathEntity: String? = nil) throws(StorageError) {
    guard case .object = json else { throw StorageError.invalid("An ACL entry must be a JSON object.") }
    guard let entity = pathEntity ?? json["entity"]?.stringValue else {
      throw StorageError.required("An ACL entry needs an 'entity' (a string).")
    }
    guard let role = json["role"]?.stringValue else {
      throw StorageError.required("An ACL entry needs a 'role' (a string).")
    }
    try Self.validate(entity: entity)
    self.init(entity: entity, role: try Self.validate(role: role, scope: scope))
  }

  /// A whole ACL (`acl` / `defaultObjectAcl` in a resource): at most `maxEntries`, one per entity.
  public static func list(json: JSONValue, scope: Scope) throws(StorageError) -> [AccessControl] {
    guard case .array(let items) = json else { throw StorageError.invalid("An ACL must be a JSON array of entries.") }
    guard items.count <= maxEntries else {
      throw StorageError.invalid("An ACL may have at most \(maxEntries) entries; this one has \(items.count).")
    }
    var result: [AccessControl] = []
    for item in items {
      let entry = try AccessControl(json: item, scope: scope)
      result.removeAll { $0.entity == entry.entity }
      result.append(entry)
    }
    return result
  }

  /// The ACL a `predefinedAcl` / `predefinedDefaultObjectAcl` name stands for.
  public static func predefined(_ name: String, scope: Scope) throws(StorageError) -> [AccessControl] {
    let owner = AccessControl(entity: ownerEntity, role: "OWNER")
    let team = [
      owner, AccessControl(entity: "project-editors-\(projectNumber)", role: "OWNER"),
      AccessControl(entity: "project-viewers-\(projectNumber)", role: "READER"),
    ]
    switch (name, scope) {
    case ("private", _), ("bucketOwnerFullControl", .object): return [owner]
    case ("bucketOwnerRead", .object): return [owner]
    case ("projectPrivate", _): return team
    case ("publicRead", _): return [owner, AccessControl(entity: "allUsers", role: "READER")]
    case ("publicReadWrite", .bucket): return [owner, AccessControl(entity: "allUsers", role: "WRITER")]
    case ("authenticatedRead", _): return [owner, AccessControl(entity: "allAuthenticatedUsers", role: "READER")]
    default:
      let names =
        scope == .bucket
        ? "authenticatedRead, private, projectPrivate, publicRead, publicReadWrite"
        : "authenticatedRead, bucketOwnerFullControl, bucketOwnerRead, private, projectPrivate, publicRead"
      throw StorageError.invalid("Invalid predefined ACL '\(name)': use one of \(names).")
    }
  }

  /// A new bucket's ACL and default object ACL (`projectPrivate`, as GCS creates them).
  public static let projectPrivate: [AccessControl] = (try? predefined("projectPrivate", scope: .bucket)) ?? []

  /// `{"entity": …, "role": …}`, as records keep it.
  public var json: JSONValue { .object([("entity", .string(entity)), ("role", .string(role))]) }

  /// Reads what `json` wrote; entries that are not entity/role pairs are skipped.
  public static func records(_ value: JSONValue?) -> [AccessControl] {
    guard case .array(let items)? = value else { return [] }
    return items.compactMap { item in
      guard let entity = item["entity"]?.stringValue, let role = item["role"]?.stringValue else { return nil }
      return AccessControl(entity: entity, role: role)
    }
  }
}
