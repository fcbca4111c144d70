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

public struct JSONParseError: Error, Sendable, Equatable, CustomStringConvertible {
  public var offset: Int
  public var reason: String
  public var description: String { "\(reason) at byte \(offset)" }
}

private struct JSONParser {
  let bytes: [UInt8]
  var index = 0
  var depth = 0

  init(bytes: [UInt8]) { self.bytes = bytes }

  mutating func parseDocument() throws(JSONParseError) -> JSONValue {
    skipWhitespace()
    let value = try parseValue()
    skipWhitespace()
    guard index == bytes.count else { throw fail("unexpected data after the JSON value") }
    return value
  }

  func fail(_ reason: String) -> JSONParseError { JSONParseError(offset: index, reason: reason) }

  mutating func skipWhitespace() {
    while index < bytes.count, bytes[index] == 32 || bytes[index] == 9 || bytes[index] == 10 || bytes[index] == 13 {
      index += 1
    }
  }

  mutating func parseValue() throws(JSONParseError) -> JSONValue {
    guard index < bytes.count else { throw fail("unexpected end of JSON") }
    switch bytes[index] {
    case UInt8(ascii: "{"): return try parseObject()
    case UInt8(ascii: "["): return try parseArray()
    case UInt8(ascii: "\""): return .string(try parseString())
    case UInt8(ascii: "t"): try literal("true"); return .bool(true)
    case UInt8(ascii: "f"): try literal("false"); return .bool(false)
    case UInt8(ascii: "n"): try literal("null"); return .null
    case UInt8(ascii: "-"), 48...57: return .number(try parseNumber())
    default: throw fail("unexpected character")
    }
  }

  mutating func literal(_ word: String) throws(JSONParseError) {
    let utf8 = Array(word.utf8)
    guard bytes.count - index >= utf8.count, Array(bytes[index..<index + utf8.count]) == utf8 else {
      throw fail("invalid literal")
    }
    index += utf8.count
  }

  mutating func enter() throws(JSONParseError) {
    depth += 1
    if depth > JSONValue.maxNesting { throw fail("JSON nested too deeply") }
  }

  mutating func parseObject() throws(JSONParseError) -> JSONValue {
    try enter()
    index += 1
    var members: [(String, JSONValue)] = []
    skipWhitespace()
    if index < bytes.count, bytes[index] == UInt8(ascii: "}") {
      index += 1
      depth -= 1
      return .object(members)
    }
    while true {
      skipWhitespace()
      guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { throw fail("expected a member name") }
      let key = try parseString()
      skipWhitespace()
      guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { throw fail("expected ':'") }
      index += 1
      skipWhitespace()
      members.append((key, try parseValue()))
      skipWhitespace()
      guard index < bytes.count else { throw fail("unexpected end of JSON") }
      if bytes[index] == UInt8(ascii: ",") {
        index += 1
        continue
      }
      guard bytes[index] == UInt8(ascii: "}") else { throw fail("expected ',' or '}'") }
      index += 1
      depth -= 1
      return .object(members)
    }
  }

  mutating func parseArray() throws(JSONParseError) -> JSONValue {
    try enter()
    index += 1
    var elements: [JSONValue] = []
    skipWhitespace()
    if index < bytes.count, bytes[index] == UInt8(ascii: "]") {
      index += 1
      depth -= 1
      return .array(elements)
    }
    while true {
      skipWhitespace()
      elements.append(try parseValue())
      skipWhitespace()
      guard index < bytes.count else { throw fail("unexpected end of JSON") }
      if bytes[index] == UInt8(ascii: ",") {
        index += 1
        continue
      }
      guard bytes[index] == UInt8(ascii: "]") else { throw fail("expected ',' or ']'") }
      index += 1
      depth -= 1
      return .array(elements)
    }
  }

  mutating func parseNumber() throws(JSONParseError) -> String {
    let start = index
    if bytes[index] == UInt8(ascii: "-") { index += 1 }
    guard index < bytes.count, isDigit(bytes[index]) else { throw fail("invalid number") }
    if bytes[index] == 48 {
      index += 1
    } else {
      while index < bytes.count, isDigit(bytes[index]) { index += 1 }
    }
    if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
      index += 1
      guard index < bytes.count, isDigit(bytes[index]) else { throw fail("invalid number") }
      while index < bytes.count, isDigit(bytes[index]) { index += 1 }
    }
    if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
      index += 1
      if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") {
        index += 1
      }
      guard index < bytes.count, isDigit(bytes[index]) else { throw fail("invalid number") }
      while index < bytes.count, isDigit(bytes[index]) { index += 1 }
    }
    return String(decoding: bytes[start..<index], as: UTF8.self)
  }

  func isDigit(_ byte: UInt8) -> Bool { byte >= 48 && byte <= 57 }

  mutating func parseString() throws(JSONParseError) -> String {
    index += 1
    var out: [UInt8] = []
    while true {
      guard index < bytes.count else { throw fail("unterminated string") }
      let byte = bytes[index]
      if byte == UInt8(ascii: "\"") {
        index += 1
        break
      }
      if byte < 0x20 { throw fail("control character in string") }
      if byte != UInt8(ascii: "\\") {
        out.append(byte)
        index += 1
        continue
      }
      index += 1
      guard index < bytes.count else { throw fail("unterminated escape") }
      let escape = bytes[index]
      index += 1
      switch escape {
      case UInt8(ascii: "\""): out.append(0x22)
      case UInt8(ascii: "\\"): out.append(0x5C)
      case UInt8(ascii: "/"): out.append(0x2F)
      case UInt8(ascii: "b"): out.append(0x08)
      case UInt8(ascii: "f"): out.append(0x0C)
      case UInt8(ascii: "n"): out.append(0x0A)
      case UInt8(ascii: "r"): out.append(0x0D)
      case UInt8(ascii: "t"): out.append(0x09)
      case UInt8(ascii: "u"):
        var scalar = try hex4()
        if scalar >= 0xD800 && scalar < 0xDC00 {
          guard bytes.count - index >= 6, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u")
          else { throw fail("unpaired surrogate") }
          index += 2
          let low = try hex4()
          guard low >= 0xDC00 && low < 0xE000 else { throw fail("unpaired surrogate") }
          scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
        } else if scalar >= 0xDC00 && scalar < 0xE000 {
          throw fail("unpaired surrogate")
        }
        out.append(contentsOf: String(Unicode.Scalar(scalar)!).utf8)
      default: throw fail("invalid escape")
      }
    }
    guard let string = String(validating: out, as: UTF8.self) else { throw fail("string is not valid UTF-8") }
    return string
  }

  mutating func hex4() throws(JSONParseError) -> UInt32 {
    guard bytes.count - index >= 4 else { throw fail("invalid \\u escape") }
    var value: UInt32 = 0
    for _ in 0..<4 {
      let byte = bytes[index]
      let digit: UInt32
      switch byte {
      case 48...57: digit = UInt32(byte - 48)
      case 65...70: digit = UInt32(byte - 55)
      case 97...102: digit = UInt32(byte - 87)
      default: throw fail("invalid \\u escape")
      }
      value = value << 4 | digit
      index += 1
    }
    return value
  }
}

/// Appends JSON text to a byte buffer; faster than `JSONEncoder` and byte-stable.
public struct JSONWriter {
  public private(set) var bytes: [UInt8] = []
  private var needsComma: [Bool] = []
  private var afterKey = false

  public init(capacity: Int = 512) { bytes.reserveCapacity(capacity) }

  public mutating func beginObject() {
    separate()
    bytes.append(UInt8(ascii: "{"))
    needsComma.append(false)
  }

  public mutating func endObject() {
    needsComma.removeLast()
    bytes.append(UInt8(ascii: "}"))
  }

  public mutating func beginArray(_ key: String? = nil) {
    if let key { self.key(key) }
    separate()
    bytes.append(UInt8(ascii: "["))
    needsComma.append(false)
  }

  public mutating func endArray() {
    needsComma.removeLast()
    bytes.append(UInt8(ascii: "]"))
  }

  /// Writes `"key":` inside an object; the next value call completes the member.
  public mutating func key(_ key: String) {
    separate()
    appendString(key)
    bytes.append(UInt8(ascii: ":"))
    afterKey = true
  }

  public mutating func string(_ key: String, _ value: String) {
    self.key(key)
    string(value)
  }

  public mutating func string(_ value: String) {
    separate()
    appendString(value)
  }

  /// `"key":"` — a string value written in parts (`stringPart`…), closed by `endString`: links
  /// and ids are built in place, not as temporary `String`s.
  public mutating func beginString(_ key: String) {
    self.key(key)
    separate()
    bytes.append(UInt8(ascii: "\""))
  }

  public mutating func stringPart(_ part: String) {
    if !Self.isPlain(part) {
      appendEscaped(part)
    } else {
      bytes.append(contentsOf: part.utf8)
    }
  }

  /// A non-negative or negative integer's decimal digits, inside a string.
  public mutating func stringPart(_ value: Int64) {
    if value < 0 {
      bytes.append(UInt8(ascii: "-"))
      if value == .min {
        bytes.append(contentsOf: "9223372036854775808".utf8)
        return
      }
    }
    var rest = value.magnitude
    var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)  // 19 digits at most, right-aligned below
    var count = 0
    withUnsafeMutableBytes(of: &digits) { buffer in
      repeat {
        count += 1
        buffer[24 - count] = UInt8(48 + rest % 10)
        rest /= 10
      } while rest > 0
      bytes.append(contentsOf: buffer[(24 - count)..<24])
    }
  }

  public mutating func endString() {
    bytes.append(UInt8(ascii: "\""))
  }

  /// `"key":"12345"`: int64 fields are JSON strings in both API flavours.
  public mutating func integerString(_ key: String, _ value: Int64) {
    beginString(key)
    stringPart(value)
    endString()
  }

  /// `"key":"2024-01-02T03:04:05.678Z"`.
  public mutating func timestamp(_ key: String, milliseconds: Int64) {
    beginString(key)
    Timestamp.append(milliseconds: milliseconds, to: &bytes)
    endString()
  }

  /// `"key":"<base64 of bytes>"`.
  public mutating func base64(_ key: String, _ value: some Collection<UInt8>) {
    beginString(key)
    Base64.append(value, to: &bytes)
    endString()
  }

  public mutating func optionalString(_ key: String, _ value: String?) {
    if let value { string(key, value) }
  }

  public mutating func raw(_ key: String, _ literal: String) {
    self.key(key)
    separate()
    bytes.append(contentsOf: literal.utf8)
  }

  public mutating func bool(_ key: String, _ value: Bool) { raw(key, value ? "true" : "false") }

  /// A literal value (number, `true`, `null`) as an array element or after `key`.
  public mutating func rawValue(_ literal: String) {
    separate()
    bytes.append(contentsOf: literal.utf8)
  }

  public mutating func null(_ key: String) { raw(key, "null") }

  public mutating func objectKey(_ key: String) {
    self.key(key)
    beginObject()
  }

  private mutating func separate() {
    if afterKey {
      afterKey = false
      return
    }
    guard let last = needsComma.last else { return }
    if last { bytes.append(UInt8(ascii: ",")) }
    needsComma[needsComma.count - 1] = true
  }

  private mutating func appendString(_ value: String) {
    bytes.append(UInt8(ascii: "\""))
    if Self.isPlain(value) {
      // Nothing to escape (nearly every string): one copy.
      bytes.append(contentsOf: value.utf8)
    } else {
      appendEscaped(value)
    }
    bytes.append(UInt8(ascii: "\""))
  }

  /// Nothing in `value` needs escaping (nearly every string).
  private static func isPlain(_ value: String) -> Bool {
    value.utf8.withContiguousStorageIfAvailable { utf8 in
      !utf8.contains { $0 < 0x20 || $0 == 0x22 || $0 == 0x5C }
    } ?? false
  }

  private mutating func appendEscaped(_ value: String) {
    for byte in value.utf8 {
      switch byte {
      case 0x22: bytes.append(contentsOf: [0x5C, 0x22])
      case 0x5C: bytes.append(contentsOf: [0x5C, 0x5C])
      case 0x0A: bytes.append(contentsOf: [0x5C, UInt8(ascii: "n")])
      case 0x0D: bytes.append(contentsOf: [0x5C, UInt8(ascii: "r")])
      case 0x09: bytes.append(contentsOf: [0x5C, UInt8(ascii: "t")])
      case 0..<0x20:
        let hex = Array("0123456789abcdef".utf8)
        bytes.append(contentsOf: [0x5C, UInt8(ascii: "u"), 48, 48, hex[Int(byte >> 4)], hex[Int(byte & 15)]])
      default: bytes.append(byte)
      }
    }
  }
}
