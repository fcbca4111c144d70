/// A JSON document as parsed here. Numbers keep their literal text, so `5` stored as custom
/// metadata becomes `"5"`, not `"5.0"`; object members keep their order (the last duplicate wins
/// on lookup).
public enum JSONValue: Sendable, Equatable {
  case null
  case bool(Bool)
  case number(String)
  case string(String)
  case array([JSONValue])
  case object([(String, JSONValue)])

  public static func == (lhs: JSONValue, rhs: JSONValue) -> Bool {
    switch (lhs, rhs) {
    case (.null, .null): true
    case (.bool(let a), .bool(let b)): a == b
    case (.number(let a), .number(let b)): a == b
    case (.string(let a), .string(let b)): a == b
    case (.array(let a), .array(let b)): a == b
    case (.object(let a), .object(let b)):
      a.count == b.count && zip(a, b).allSatisfy { $0.0 == $1.0 && $0.1 == $1.1 }
    default: false
    }
  }

  /// The member of an object; the last one when a key repeats.
  public subscript(_ key: String) -> JSONValue? {
    guard case .object(let members) = self else { return nil }
    return members.last { $0.0 == key }?.1
  }

  public var stringValue: String? {
    if case .string(let value) = self { return value }
    return nil
  }

  /// Arrays and objects nest at most this deep; deeper is a parse error (a 400).
  public static let maxNesting = 64

  /// Parses a complete JSON text (RFC 8259). Nesting is limited to `maxNesting` levels.
  public static func parse(_ bytes: [UInt8]) throws(JSONParseError) -> JSONValue {
    var parser = JSONParser(bytes: bytes)
    return try parser.parseDocument()
  }
}
