/// A bucket's writable configuration, checked and kept in the canonical form GCS returns it in:
/// `location` upper case with its `locationType`, `storageClass` upper case, `iamConfiguration`
/// with both of its spellings and `lockedTime`, `retentionPolicy` / `softDeletePolicy` with their
/// `effectiveTime`. Stored as a JSON object (in `bucket.json`) and rendered member by member.
///
/// Kept and returned, not applied: `lifecycle` rules, `retentionPolicy`, `softDeletePolicy`,
/// `defaultEventBasedHold` (the emulator never deletes, holds or soft-deletes on its own), and
/// `cors` (applied by the download path, not here). `versioning` is applied by the store.
/// `hierarchicalNamespace` is kept and returned; folder operations are not served (see
/// `hierarchicalNamespace(_:current:kept:uniform:)`). What the emulator does not emulate at all
/// (autoclass, …) is a 400 that says so, never a silent drop. `acl`, `defaultObjectAcl` and
/// `owner` are not settings: the API keeps the ACLs in `BucketAccess` and ignores `owner`, as GCS does.
public enum BucketSettings {
  public enum Mode: Sendable {
    /// Bucket insert: absent fields take their defaults.
    case insert
    /// PATCH: absent fields stay, `null` clears, `labels` merge key by key.
    case patch
    /// PUT: every writable field is replaced; absent ones return to their defaults.
    case replace
  }

  /// The order fields are rendered in.
  static let order = [
    "location", "locationType", "storageClass", "iamConfiguration", "labels", "versioning", "lifecycle", "cors",
    "retentionPolicy", "defaultEventBasedHold", "softDeletePolicy", "hierarchicalNamespace",
  ]

  public static let storageClasses = [
    "STANDARD", "NEARLINE", "COLDLINE", "ARCHIVE", "MULTI_REGIONAL", "REGIONAL", "DURABLE_REDUCED_AVAILABILITY",
  ]
  static let multiRegions: Set<String> = ["US", "EU", "ASIA"]
  static let dualRegions: Set<String> = ["NAM4", "EUR4", "ASIA1", "EUR5", "EUR7", "EUR8"]
  /// Writable fields whose behaviour the emulator does not have.
  static let notEmulated = [
    "website", "logging", "encryption", "billing", "customPlacementConfig", "ipFilter",
  ]

  /// A new bucket's settings.
  public static func defaults(now: Int64) -> JSONValue {
    .object([
      ("location", .string("US")), ("locationType", .string("multi-region")), ("storageClass", .string("STANDARD")),
      ("iamConfiguration", iamConfiguration(uniform: false, since: now, publicAccessPrevention: "inherited")),
    ])
  }

  /// The settings after `body` (a bucket resource as a client sends it) is applied to `current`
  /// (nil on insert). Read-only and unknown keys are ignored, as GCS does.
  public static func apply(_ body: JSONValue, to current: JSONValue?, mode: Mode, now: Int64) throws(StorageError)
    -> JSONValue
  {
    guard case .object(let members) = body else {
      throw StorageError.invalid("The bucket resource must be a JSON object.")
    }
    let sent = Dictionary(members, uniquingKeysWith: { _, last in last })
    for key in notEmulated {
      if let value = sent[key], !isEmpty(value) {
        throw StorageError.invalid("Bucket field '\(key)' is not emulated by this emulator; leave it out.")
      }
    }
    if let value = sent["autoclass"], value["enabled"] == .bool(true) {
      throw StorageError.invalid("Autoclass (autoclass.enabled: true) is not emulated by this emulator.")
    }
    if let value = sent["objectRetention"], !isEmpty(value) {
      throw StorageError.invalid("Object retention (objectRetention) is not emulated by this emulator.")
    }
    if let value = sent["rpo"], value != .null, value != .string("DEFAULT") {
      throw StorageError.invalid("Turbo replication (rpo \(describe(value))) is not emulated by this emulator.")
    }
    let defaults = Self.defaults(now: now)
    var result: [String: JSONValue] = [:]
    let base = mode == .patch ? (current ?? defaults) : defaults
    if case .object(let existing) = base { for (key, value) in existing { result[key] = value } }

    // location: fixed once the bucket exists.
    if let value = sent["location"], value != .null {
      guard let text = value.stringValue, let type = locationType(text.uppercased()) else {
        throw StorageError.invalid("The specified location constraint is not valid: \(describe(value)).")
      }
      let location = text.uppercased()
      if let current, let existing = current["location"]?.stringValue, existing != location {
        throw StorageError.invalid("A bucket's location cannot be changed (it is \(existing)).")
      }
      result["location"] = .string(location)
      result["locationType"] = .string(type)
    } else if mode == .replace, let current {
      result["location"] = current["location"]
      result["locationType"] = current["locationType"]
    }
    if let value = sent["storageClass"] {
      if value == .null {
        result["storageClass"] = .string("STANDARD")
      } else {
        guard let text = value.stringValue, storageClasses.contains(text.uppercased()) else {
          throw StorageError.invalid(
            "The specified storage class is not valid: \(describe(value)); use STANDARD, NEARLINE, COLDLINE or ARCHIVE."
          )
        }
        result["storageClass"] = .string(text.uppercased())
      }
    }
    if let value = sent["iamConfiguration"] {
      result["iamConfiguration"] = try iamConfiguration(value, current: result["iamConfiguration"], now: now)
    }
    if let value = sent["labels"] {
      let previous = mode == .patch ? result["labels"] : nil
      result["labels"] = try labels(value, merging: previous)
    }
    if let value = sent["versioning"] {
      if value == .null {
        result["versioning"] = nil
      } else {
        guard case .bool(let enabled)? = value["enabled"] else {
          throw StorageError.invalid("versioning must be {\"enabled\": true|false}, got \(describe(value)).")
        }
        result["versioning"] = .object([("enabled", .bool(enabled))])
      }
    }
    if let value = sent["lifecycle"] { result["lifecycle"] = try lifecycle(value) }
    if let value = sent["cors"] { result["cors"] = try cors(value) }
    if let value = sent["retentionPolicy"] {
      result["retentionPolicy"] = try duration(
        value, field: "retentionPolicy", key: "retentionPeriod", allowed: { $0 > 0 && $0 < 3_155_760_000 },
        rule: "greater than 0 and less than 3,155,760,000 seconds (100 years)", current: result["retentionPolicy"],
        now: now)
    }
    if let value = sent["defaultEventBasedHold"] {
      switch value {
      case .null: result["defaultEventBasedHold"] = nil
      case .bool: result["defaultEventBasedHold"] = value
      default: throw StorageError.invalid("defaultEventBasedHold must be true or false, got \(describe(value)).")
      }
    }
    if let value = sent["softDeletePolicy"] {
      result["softDeletePolicy"] = try duration(
        value, field: "softDeletePolicy", key: "retentionDurationSeconds",
        allowed: { $0 == 0 || (604_800...7_776_000).contains($0) },
        rule: "0 (off) or between 604800 (7 days) and 7776000 (90 days) seconds", current: result["softDeletePolicy"],
        now: now)
    }
    result["hierarchicalNamespace"] = try hierarchicalNamespace(
      sent["hierarchicalNamespace"], current: current, kept: result["hierarchicalNamespace"],
      uniform: result["iamConfiguration"]?["uniformBucketLevelAccess"]?["enabled"] == .bool(true))
    return .object(order.compactMap { key in result[key].map { (key, $0) } })
  }

  /// `hierarchicalNamespace`: chosen when the bucket is created and fixed after (as on GCS), and
  /// only with uniform bucket-level access. Kept and returned (bucket resource, `storageLayout`);
  /// objects behave as in a flat bucket, since folders are made through the Storage Control API
  /// (gRPC), which is not served.
  static func hierarchicalNamespace(_ sent: JSONValue?, current: JSONValue?, kept: JSONValue?, uniform: Bool)
    throws(StorageError) -> JSONValue?
  {
    let existing = current?["hierarchicalNamespace"]
    let wasEnabled = existing?["enabled"] == .bool(true)
    guard let sent else { return current == nil ? kept : existing }
    let enabled = sent["enabled"] == .bool(true)
    if sent != .null, sent["enabled"] != .bool(false), !enabled {
      throw StorageError.invalid("hierarchicalNamespace must be {\"enabled\": true|false}, got \(describe(sent)).")
    }
    if current != nil, enabled != wasEnabled {
      throw StorageError.invalid("A bucket's hierarchicalNamespace cannot be changed after the bucket is created.")
    }
    if enabled && !uniform {
      throw StorageError.invalid(
        "Hierarchical namespace requires uniform bucket-level access "
          + "(iamConfiguration.uniformBucketLevelAccess.enabled: true).")
    }
    if sent == .null { return wasEnabled ? existing : nil }
    return .object([("enabled", .bool(enabled))])
  }

  /// `region`, `dual-region` or `multi-region`; nil for a name that is no GCS location.
  static func locationType(_ location: String) -> String? {
    if multiRegions.contains(location) { return "multi-region" }
    if dualRegions.contains(location) { return "dual-region" }
    // Regions: `US-EAST1`, `EUROPE-WEST1`, `NORTHAMERICA-NORTHEAST1`, `ME-CENTRAL2`…
    let parts = location.split(separator: "-", omittingEmptySubsequences: false)
    guard parts.count == 2, let area = parts.first, let zone = parts.last, !area.isEmpty,
      area.utf8.allSatisfy({ $0 >= 65 && $0 <= 90 }),
      let firstDigit = zone.utf8.firstIndex(where: { $0 >= 48 && $0 <= 57 }),
      firstDigit != zone.utf8.startIndex,
      zone.utf8[..<firstDigit].allSatisfy({ $0 >= 65 && $0 <= 90 }),
      zone.utf8[firstDigit...].allSatisfy({ $0 >= 48 && $0 <= 57 })
    else { return nil }
    return "region"
  }

  static func iamConfiguration(uniform: Bool, since: Int64, publicAccessPrevention: String) -> JSONValue {
    // GCS lets uniform access be turned off again for 90 days after it is turned on.
    var access: [(String, JSONValue)] = [("enabled", .bool(uniform))]
    if uniform { access.append(("lockedTime", .string(Timestamp.format(milliseconds: since + 90 * 86_400_000)))) }
    return .object([
      ("bucketPolicyOnly", .object(access)), ("uniformBucketLevelAccess", .object(access)),
      ("publicAccessPrevention", .string(publicAccessPrevention)),
    ])
  }

  private static func iamConfiguration(_ value: JSONValue, current: JSONValue?, now: Int64) throws(StorageError)
    -> JSONValue
  {
    let wasUniform = current?["uniformBucketLevelAccess"]?["enabled"] == .bool(true)
    var uniform = wasUniform
    var prevention = current?["publicAccessPrevention"]?.stringValue ?? "inherited"
    if value != .null {
      guard case .object = value else {
        throw StorageError.invalid("iamConfiguration must be an object, got \(describe(value)).")
      }
      // The older name first: when a client sends both (gcloud echoes the whole resource back),
      // `uniformBucketLevelAccess` is the one that counts.
      for key in ["bucketPolicyOnly", "uniformBucketLevelAccess"] {
        guard let member = value[key], member != .null else { continue }
        guard case .bool(let enabled)? = member["enabled"] else {
          throw StorageError.invalid("iamConfiguration.\(key) must be {\"enabled\": true|false}.")
        }
        uniform = enabled
      }
      if let member = value["publicAccessPrevention"], member != .null {
        switch member.stringValue?.lowercased() {
        case "enforced": prevention = "enforced"
        case "inherited", "unspecified": prevention = "inherited"
        default:
          throw StorageError.invalid(
            "iamConfiguration.publicAccessPrevention must be 'inherited' or 'enforced', got \(describe(member)).")
        }
      }
    } else {
      uniform = false
      prevention = "inherited"
    }
    if uniform && wasUniform, let locked = current?["uniformBucketLevelAccess"]?["lockedTime"]?.stringValue,
      let since = Timestamp.parse(locked)
    {
      return iamConfiguration(uniform: true, since: since - 90 * 86_400_000, publicAccessPrevention: prevention)
    }
    return iamConfiguration(uniform: uniform, since: now, publicAccessPrevention: prevention)
  }

  private static func labels(_ value: JSONValue, merging previous: JSONValue?) throws(StorageError) -> JSONValue? {
    if value == .null { return nil }
    guard case .object(let sent) = value else {
      throw StorageError.invalid("labels must be an object of strings, got \(describe(value)).")
    }
    var labels: [String: String] = [:]
    if case .object(let existing)? = previous {
      for (key, member) in existing { labels[key] = member.stringValue }
    }
    for (key, member) in sent {
      if member == .null {
        labels[key] = nil
        continue
      }
      guard let text = member.stringValue else {
        throw StorageError.invalid("The value of label '\(key)' must be a string, got \(describe(member)).")
      }
      guard isLabelText(key, key: true) else {
        throw StorageError.invalid(
          "Label key '\(key)' is not valid: 1 to 63 lower-case letters, digits, '_' or '-', starting with a letter.")
      }
      guard isLabelText(text, key: false) else {
        throw StorageError.invalid(
          "The value of label '\(key)' is not valid: at most 63 lower-case letters, digits, '_' or '-'.")
      }
      labels[key] = text
    }
    guard labels.count <= 64 else {
      throw StorageError.invalid("A bucket can have at most 64 labels, not \(labels.count).")
    }
    return labels.isEmpty
      ? nil
      : .object(
        labels.sorted { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }.map { ($0.key, .string($0.value)) })
  }

  private static func isLabelText(_ text: String, key: Bool) -> Bool {
    let bytes = Array(text.utf8)
    guard bytes.count <= 63, !key || !bytes.isEmpty else { return false }
    // International characters are allowed: only ASCII is restricted.
    let allowed = { (byte: UInt8) in
      byte >= 128 || (byte >= 97 && byte <= 122) || (byte >= 48 && byte <= 57) || byte == 95 || byte == 45
    }
    guard bytes.allSatisfy(allowed) else { return false }
    if key, let first = bytes.first, !(first >= 128 || (first >= 97 && first <= 122)) { return false }
    return true
  }

  private static func lifecycle(_ value: JSONValue) throws(StorageError) -> JSONValue? {
    if value == .null { return nil }
    guard case .object = value else { throw StorageError.invalid("lifecycle must be {\"rule\": [...]}.") }
    guard let rules = value["rule"], rules != .null else { return nil }
    guard case .array(let list) = rules, list.count <= 100 else {
      throw StorageError.invalid("lifecycle.rule must be an array of at most 100 rules.")
    }
    if list.isEmpty { return nil }
    var kept: [JSONValue] = []
    for (number, rule) in list.enumerated() {
      guard case .object = rule, case .object = rule["action"], let type = rule["action"]?["type"]?.stringValue else {
        throw StorageError.invalid("lifecycle.rule[\(number)] needs an action with a type.")
      }
      switch type {
      case "Delete", "AbortIncompleteMultipartUpload":
        break
      case "SetStorageClass":
        guard let target = rule["action"]?["storageClass"]?.stringValue, storageClasses.contains(target.uppercased())
        else {
          throw StorageError.invalid("lifecycle.rule[\(number)]: SetStorageClass needs a valid storageClass.")
        }
      default:
        throw StorageError.invalid(
          "lifecycle.rule[\(number)]: action type '\(type)' is not Delete, SetStorageClass or AbortIncompleteMultipartUpload."
        )
      }
      guard case .object(let condition)? = rule["condition"], !condition.isEmpty else {
        throw StorageError.invalid("lifecycle.rule[\(number)] needs a non-empty condition.")
      }
      kept.append(.object([("action", rule["action"]!), ("condition", .object(condition))]))
    }
    return .object([("rule", .array(kept))])
  }

  private static func cors(_ value: JSONValue) throws(StorageError) -> JSONValue? {
    if value == .null { return nil }
    guard case .array(let entries) = value, entries.count <= 100 else {
      throw StorageError.invalid("cors must be an array of at most 100 entries.")
    }
    if entries.isEmpty { return nil }
    var kept: [JSONValue] = []
    for (number, entry) in entries.enumerated() {
      guard case .object = entry else { throw StorageError.invalid("cors[\(number)] must be an object.") }
      var members: [(String, JSONValue)] = []
      if let age = entry["maxAgeSeconds"], age != .null {
        guard case .number(let text) = age, let seconds = Int64(text), seconds >= 0 else {
          throw StorageError.invalid("cors[\(number)].maxAgeSeconds must be a non-negative integer.")
        }
        members.append(("maxAgeSeconds", .number(String(seconds))))
      }
      for key in ["method", "origin", "responseHeader"] {
        guard let list = entry[key], list != .null else { continue }
        guard case .array(let items) = list, items.allSatisfy({ $0.stringValue != nil }) else {
          throw StorageError.invalid("cors[\(number)].\(key) must be an array of strings.")
        }
        members.append((key, list))
      }
      kept.append(.object(members))
    }
    return .array(kept)
  }

  /// `{key: "seconds"}` (a string or a number) → `{key: "seconds", "effectiveTime": now}`; an
  /// unchanged duration keeps its `effectiveTime` (gcloud sends the whole resource back).
  private static func duration(
    _ value: JSONValue, field: String, key: String, allowed: (Int64) -> Bool, rule: String, current: JSONValue?,
    now: Int64
  ) throws(StorageError) -> JSONValue? {
    if value == .null { return nil }
    let seconds: Int64?
    switch value[key] {
    case .string(let text)?: seconds = Int64(text)
    case .number(let text)?: seconds = Int64(text)
    default: seconds = nil
    }
    guard let seconds, allowed(seconds) else {
      throw StorageError.invalid("\(field).\(key) must be \(rule), got \(describe(value[key] ?? .null)).")
    }
    if let current, current[key] == .string(String(seconds)) { return current }
    return .object([(key, .string(String(seconds))), ("effectiveTime", .string(Timestamp.format(milliseconds: now)))])
  }

  private static func isEmpty(_ value: JSONValue) -> Bool {
    switch value {
    case .null: true
    case .array(let items): items.isEmpty
    case .object(let members): members.isEmpty
    default: false
    }
  }

  private static func describe(_ value: JSONValue) -> String {
    switch value {
    case .null: "null"
    case .bool(let flag): flag ? "true" : "false"
    case .number(let text): text
    case .string(let text): "'\(text.prefix(80))'"
    case .array: "an array"
    case .object: "an object"
    }
  }
}
