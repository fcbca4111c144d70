import EmulatorStorage

/// HMAC keys made through the JSON API (`projects/{p}/hmacKeys`). An ACTIVE key verifies
/// `GOOG4-HMAC-SHA256` signed URLs beside the configured ones (`SigningKeys.hmac`). Once
/// `attach`ed to a store, every change is saved with it (`projects.json` in the data folder, so
/// keys survive a restart; with `--in-memory`, only as long as the process).
public final class HMACKeyRing: Sendable {
  public struct Key: Sendable, Equatable {
    public var accessID: String
    public var project: String
    public var serviceAccount: String
    /// The secret's text (what GCS derives the signing key from); returned only at creation.
    public var secret: String
    /// ACTIVE, INACTIVE or DELETED.
    public var state: String
    public var timeCreated: Int64
    public var updated: Int64
    /// Raised by every change; the key's `etag` encodes it.
    public var revision: Int64 = 1
  }

  /// At most this many keys (of any state) in the ring.
  public static let maxKeys = 1000
  /// At most this many ACTIVE or INACTIVE keys per service account (GCS's limit).
  public static let maxKeysPerAccount = 10

  private let keys = Locked<[Key]>([])
  private let store = Locked<ObjectStore?>(nil)

  public init() {}

  /// Loads the keys the store saved and saves every later change there.
  public func attach(_ store: ObjectStore) {
    let saved = store.projectState()?["hmacKeys"]
    keys.withLock { keys in
      guard case .array(let items)? = saved else { return }
      keys = items.compactMap(Self.key(record:))
    }
    self.store.withLock { $0 = store }
  }

  /// Saves `candidate` as the whole ring (called under the keys' lock); a failure leaves the
  /// ring as it was.
  private func commit(_ candidate: [Key], into keys: inout [Key]) throws(StorageError) {
    if let store = store.withLock({ $0 }) {
      try store.saveProjectState(.object([("hmacKeys", .array(candidate.map(Self.record)))]))
    }
    keys = candidate
  }

  private static func record(_ key: Key) -> JSONValue {
    .object([
      ("accessId", .string(key.accessID)), ("projectId", .string(key.project)),
      ("serviceAccountEmail", .string(key.serviceAccount)), ("secret", .string(key.secret)),
      ("state", .string(key.state)), ("timeCreated", .string(String(key.timeCreated))),
      ("updated", .string(String(key.updated))), ("revision", .string(String(key.revision))),
    ])
  }

  private static func key(record: JSONValue) -> Key? {
    guard let id = record["accessId"]?.stringValue, let project = record["projectId"]?.stringValue,
      let account = record["serviceAccountEmail"]?.stringValue, let secret = record["secret"]?.stringValue,
      let state = record["state"]?.stringValue,
      let created = record["timeCreated"]?.stringValue.flatMap({ Int64($0) }),
      let updated = record["updated"]?.stringValue.flatMap({ Int64($0) }),
      let revision = record["revision"]?.stringValue.flatMap({ Int64($0) })
    else { return nil }
    return Key(
      accessID: id, project: project, serviceAccount: account, secret: secret, state: state, timeCreated: created,
      updated: updated, revision: revision)
  }

  /// The secret of an ACTIVE key with this access ID.
  public func activeSecret(_ accessID: String) -> [UInt8]? {
    keys.withLock { keys in keys.first { $0.accessID == accessID && $0.state == "ACTIVE" }.map { Array($0.secret.utf8) } }
  }

  public func create(project: String, serviceAccount: String) throws(StorageError) -> Key {
    let now = Timestamp.nowMilliseconds()
    var generator = SystemRandomNumberGenerator()
    let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789".utf8)
    let id = "GOOG1E" + String(decoding: (0..<58).map { _ in alphabet.randomElement(using: &generator)! }, as: UTF8.self)
    let secret = Base64.encode((0..<30).map { _ in UInt8.random(in: 0...255, using: &generator) })
    let key = Key(
      accessID: id, project: project, serviceAccount: serviceAccount, secret: secret, state: "ACTIVE",
      timeCreated: now, updated: now)
    return try keys.withLock { keys throws(StorageError) -> Key in
      guard keys.count < Self.maxKeys else {
        throw StorageError.invalid("The emulator holds at most \(Self.maxKeys) HMAC keys; delete some first.")
      }
      let live = keys.filter { $0.serviceAccount == serviceAccount && $0.state != "DELETED" }.count
      guard live < Self.maxKeysPerAccount else {
        throw StorageError.invalid(
          "Service account \(serviceAccount) already has \(Self.maxKeysPerAccount) HMAC keys; delete one first.")
      }
      try commit(keys + [key], into: &keys)
      return key
    }
  }

  public func list(project: String) -> [Key] {
    keys.withLock { keys in keys.filter { $0.project == project } }
  }

  public func get(project: String, accessID: String) -> Key? {
    keys.withLock { keys in keys.first { $0.project == project && $0.accessID == accessID } }
  }

  /// Runs `change` on the key and keeps the result (nil: no such key). A change to a DELETED key
  /// is refused.
  public func change(
    project: String, accessID: String, _ change: (inout Key) throws(StorageError) -> Void
  ) throws(StorageError) -> Key? {
    try keys.withLock { keys throws(StorageError) -> Key? in
      guard let index = keys.firstIndex(where: { $0.project == project && $0.accessID == accessID }) else { return nil }
      guard keys[index].state != "DELETED" else {
        throw StorageError.invalid("HMAC key \(accessID) is deleted; it cannot be changed.")
      }
      var key = keys[index]
      try change(&key)
      key.revision += 1
      key.updated = max(Timestamp.nowMilliseconds(), key.updated)
      var candidate = keys
      candidate[index] = key
      try commit(candidate, into: &keys)
      return key
    }
  }
}
