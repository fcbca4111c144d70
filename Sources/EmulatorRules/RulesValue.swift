/// A value of the rules language. Its own model: the rules module knows nothing of storage or HTTP.
public indirect enum RulesValue: Sendable {
  case null
  case bool(Bool)
  case int(Int64)
  case float(Double)
  case string(String)
  case bytes([UInt8])
  case list([RulesValue])
  case map([String: RulesValue])
  /// Distinct elements, in insertion order (sets are small; membership is a linear scan).
  case set([RulesValue])
  /// Seconds since the Unix epoch and nanoseconds 0..<1e9.
  case timestamp(seconds: Int64, nanos: Int32)
  /// Seconds and nanoseconds with the same sign.
  case duration(seconds: Int64, nanos: Int32)
  case latlng(latitude: Double, longitude: Double)
  /// A path's segments (`/b/bucket/o/a/b` is `["b", "bucket", "o", "a", "b"]`).
  case path([String])
  /// The result of `map.diff(other)`: the map before and after.
  case mapDiff(before: [String: RulesValue], after: [String: RulesValue])

  /// What `size()` answers: characters (Unicode scalars) of a string, bytes, elements of a list,
  /// set or map, segments of a path; nil for a value without a size.
  var size: Int? {
    switch self {
    case .string(let text): text.unicodeScalars.count
    case .bytes(let bytes): bytes.count
    case .list(let values), .set(let values): values.count
    case .map(let map): map.count
    case .path(let segments): segments.count
    default: nil
    }
  }

  /// The name `is` tests against and error messages use.
  public var typeName: String {
    switch self {
    case .null: "null"
    case .bool: "bool"
    case .int: "int"
    case .float: "float"
    case .string: "string"
    case .bytes: "bytes"
    case .list: "list"
    case .map: "map"
    case .set: "set"
    case .timestamp: "timestamp"
    case .duration: "duration"
    case .latlng: "latlng"
    case .path: "path"
    case .mapDiff: "map_diff"
    }
  }

  /// Whether `value is name` holds (`number` is int or float).
  func isType(_ name: String) -> Bool {
    switch name {
    case "number":
      if case .int = self { return true }
      if case .float = self { return true }
      return false
    case "string", "bool", "int", "float", "bytes", "list", "map", "set", "timestamp", "duration", "latlng", "path",
      "null", "map_diff":
      return typeName == name
    default: return false
    }
  }

  /// Equality as the language defines it: ints and floats compare numerically, collections deeply,
  /// sets regardless of order. NaN equals nothing.
  public func rulesEquals(_ other: RulesValue) -> Bool {
    switch (self, other) {
    case (.null, .null): return true
    case (.bool(let a), .bool(let b)): return a == b
    case (.int(let a), .int(let b)): return a == b
    case (.float(let a), .float(let b)): return a == b
    case (.int(let a), .float(let b)): return Double(a) == b
    case (.float(let a), .int(let b)): return a == Double(b)
    case (.string(let a), .string(let b)): return a == b
    case (.bytes(let a), .bytes(let b)): return a == b
    case (.list(let a), .list(let b)):
      return a.count == b.count && zip(a, b).allSatisfy { $0.rulesEquals($1) }
    case (.map(let a), .map(let b)):
      guard a.count == b.count else { return false }
      for (key, value) in a {
        guard let otherValue = b[key], value.rulesEquals(otherValue) else { return false }
      }
      return true
    case (.set(let a), .set(let b)):
      return a.count == b.count && a.allSatisfy { element in b.contains { $0.rulesEquals(element) } }
    case (.timestamp(let s1, let n1), .timestamp(let s2, let n2)): return s1 == s2 && n1 == n2
    case (.duration(let s1, let n1), .duration(let s2, let n2)): return s1 == s2 && n1 == n2
    case (.latlng(let a1, let b1), .latlng(let a2, let b2)): return a1 == a2 && b1 == b2
    case (.path(let a), .path(let b)): return a == b
    case (.mapDiff(let a1, let b1), .mapDiff(let a2, let b2)):
      return RulesValue.map(a1).rulesEquals(.map(a2)) && RulesValue.map(b1).rulesEquals(.map(b2))
    default: return false
    }
  }

  /// A value from JSON-like input: a convenience for callers that build `request`.
  public static func from(_ strings: [String: String]) -> RulesValue {
    .map(strings.mapValues { .string($0) })
  }

  /// Timestamp from milliseconds since the epoch.
  public static func timestamp(milliseconds: Int64) -> RulesValue {
    let (seconds, remainder) = milliseconds.quotientAndRemainder(dividingBy: 1000)
    if remainder < 0 { return .timestamp(seconds: seconds - 1, nanos: Int32((remainder + 1000) * 1_000_000)) }
    return .timestamp(seconds: seconds, nanos: Int32(remainder * 1_000_000))
  }

  /// A short rendering for error messages (bounded in length).
  var shortDescription: String {
    let text: String
    switch self {
    case .null: text = "null"
    case .bool(let value): text = value ? "true" : "false"
    case .int(let value): text = String(value)
    case .float(let value): text = String(value)
    case .string(let value): text = "'" + value + "'"
    case .bytes(let value): text = "bytes(\(value.count))"
    case .list(let values): text = "[" + values.prefix(5).map(\.shortDescription).joined(separator: ", ") + "]"
    case .map(let map): text = "{" + map.keys.sorted().prefix(5).joined(separator: ", ") + "}"
    case .set(let values): text = "set(\(values.count))"
    case .timestamp(let seconds, _): text = "timestamp(\(seconds)s)"
    case .duration(let seconds, let nanos): text = "duration(\(seconds)s \(nanos)ns)"
    case .latlng(let lat, let lng): text = "latlng(\(lat), \(lng))"
    case .path(let segments): text = "/" + segments.joined(separator: "/")
    case .mapDiff: text = "map_diff"
    }
    return text.count > 60 ? String(text.prefix(57)) + "..." : text
  }
}
