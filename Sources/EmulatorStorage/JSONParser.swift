import EmulatorSupport

public struct JSONParseError: Error, Sendable, Equatable, CustomStringConvertible {
  public var offset: Int
  public var reason: String
  public var description: String { "\(reason) at byte \(offset)" }
}

/// The parser behind `JSONValue.parse`; nesting is bounded by `JSONValue.maxNesting`.
struct JSONParser {
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
    var members: [(String, JSONValue)] = []
    members.reserveCapacity(4)  // a metadata body's few members without regrowing
    try parseElements(closing: UInt8(ascii: "}")) { parser throws(JSONParseError) in
      guard parser.index < parser.bytes.count, parser.bytes[parser.index] == UInt8(ascii: "\"") else {
        throw parser.fail("expected a member name")
      }
      let key = try parser.parseString()
      parser.skipWhitespace()
      guard parser.index < parser.bytes.count, parser.bytes[parser.index] == UInt8(ascii: ":") else {
        throw parser.fail("expected ':'")
      }
      parser.index += 1
      parser.skipWhitespace()
      members.append((key, try parser.parseValue()))
    }
    return .object(members)
  }

  mutating func parseArray() throws(JSONParseError) -> JSONValue {
    var elements: [JSONValue] = []
    try parseElements(closing: UInt8(ascii: "]")) { parser throws(JSONParseError) in
      elements.append(try parser.parseValue())
    }
    return .array(elements)
  }

  /// An object's or array's elements, from its opening bracket to `closing`: `element` reads one
  /// (whitespace around it is skipped here), commas separate them.
  mutating func parseElements(
    closing: UInt8, _ element: (inout JSONParser) throws(JSONParseError) -> Void
  ) throws(JSONParseError) {
    try enter()
    index += 1
    skipWhitespace()
    if index < bytes.count, bytes[index] == closing {
      index += 1
      depth -= 1
      return
    }
    while true {
      skipWhitespace()
      try element(&self)
      skipWhitespace()
      guard index < bytes.count else { throw fail("unexpected end of JSON") }
      if bytes[index] == UInt8(ascii: ",") {
        index += 1
        continue
      }
      guard bytes[index] == closing else { throw fail("expected ',' or '\(Character(Unicode.Scalar(closing)))'") }
      index += 1
      depth -= 1
      return
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
    // Most strings have no escape: found to their closing quote and validated where they stand,
    // without copying them byte by byte into a buffer first. Anything else (an escape, a control
    // character, no closing quote) is read again from its start below, with the same errors.
    let start = index
    while index < bytes.count {
      let byte = bytes[index]
      if byte == UInt8(ascii: "\"") {
        let end = index
        index += 1
        let string = bytes.withUnsafeBufferPointer {
          String.validatingUTF8(UnsafeBufferPointer(rebasing: $0[start..<end]))
        }
        guard let string else { throw fail("string is not valid UTF-8") }
        return string
      }
      if byte == UInt8(ascii: "\\") || byte < 0x20 { break }
      index += 1
    }
    index = start
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
    guard let string = String.validatingUTF8(out) else { throw fail("string is not valid UTF-8") }
    return string
  }

  mutating func hex4() throws(JSONParseError) -> UInt32 {
    guard bytes.count - index >= 4 else { throw fail("invalid \\u escape") }
    var value: UInt32 = 0
    for _ in 0..<4 {
      let byte = bytes[index]
      guard let digit = Hex.value(byte) else { throw fail("invalid \\u escape") }
      value = value << 4 | UInt32(digit)
      index += 1
    }
    return value
  }
}
