/// What a bucket keeps besides its settings: its ACL and default object ACL, its IAM policy and
/// its Pub/Sub notification configurations. Stored in `bucket.json` under `access`; a record
/// written before it existed reads as the defaults a new bucket gets.
public struct BucketAccess: Sendable, Equatable {
  public var acl: [AccessControl] = AccessControl.projectPrivate
  public var defaultObjectAcl: [AccessControl] = AccessControl.projectPrivate
  /// The policy's `bindings` (checked by `IAMPolicy`), as a JSON array.
  public var iamBindings: JSONValue = IAMPolicy.defaultBindings
  /// The policy's `version` (1, or 3 with conditions).
  public var iamVersion: Int = 1
  /// Raised by every accepted policy change; the policy's `etag` encodes it.
  public var iamRevision: Int64 = 1
  /// Notification configurations as `NotificationConfig` checked and stored them.
  public var notifications: [JSONValue] = []
  /// The id the next notification configuration gets.
  public var nextNotificationID: Int64 = 1

  public init() {}

  /// The record form.
  public var json: JSONValue {
    .object([
      ("acl", .array(acl.map(\.json))), ("defaultObjectAcl", .array(defaultObjectAcl.map(\.json))),
      ("iamBindings", iamBindings), ("iamVersion", .number(String(iamVersion))),
      ("iamRevision", .number(String(iamRevision))), ("notifications", .array(notifications)),
      ("nextNotificationID", .number(String(nextNotificationID))),
    ])
  }

  /// Reads the record form; missing or damaged members keep their defaults.
  public init(record: JSONValue) {
    if case .array? = record["acl"] { acl = AccessControl.records(record["acl"]) }
    if case .array? = record["defaultObjectAcl"] { defaultObjectAcl = AccessControl.records(record["defaultObjectAcl"]) }
    if case .array? = record["iamBindings"], let bindings = record["iamBindings"] { iamBindings = bindings }
    if case .number(let text)? = record["iamVersion"], let value = Int(text) { iamVersion = value }
    if case .number(let text)? = record["iamRevision"], let value = Int64(text) { iamRevision = value }
    if case .array(let items)? = record["notifications"] { notifications = items }
    if case .number(let text)? = record["nextNotificationID"], let value = Int64(text) { nextNotificationID = value }
  }
}

extension BucketInfo {
  /// Whether `iamConfiguration.uniformBucketLevelAccess.enabled` is set: ACL calls are then refused.
  public var uniformAccess: Bool {
    settings["iamConfiguration"]?["uniformBucketLevelAccess"]?["enabled"] == .bool(true)
  }

  /// The storage class new objects get when they name none.
  public var defaultStorageClass: String { settings["storageClass"]?.stringValue ?? "STANDARD" }
}
