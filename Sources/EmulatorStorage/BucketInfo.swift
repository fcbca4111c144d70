/// A bucket as stored.
public struct BucketInfo: Sendable, Equatable {
  public var name: String
  /// Milliseconds since the epoch.
  public var timeCreated: Int64
  /// Milliseconds since the epoch.
  public var updated: Int64
  /// 1 at creation, +1 for every PATCH or PUT.
  public var metageneration: Int64 = 1
  /// The writable fields in GCS's canonical form (see `BucketSettings`): a JSON object.
  public var settings: JSONValue
  /// ACLs, IAM policy and notification configurations (`BucketAccess`).
  public var access = BucketAccess()

  public init(name: String, timeCreated: Int64, settings: JSONValue? = nil) {
    self.name = name
    self.timeCreated = timeCreated
    self.updated = timeCreated
    self.settings = settings ?? BucketSettings.defaults(now: timeCreated)
  }

  /// Whether an overwrite or a delete keeps the live generation as a noncurrent one.
  public var versioningEnabled: Bool { settings["versioning"]?["enabled"] == .bool(true) }
}
