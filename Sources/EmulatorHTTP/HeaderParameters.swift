/// A header value that carries parameters, such as `Content-Type` or `Content-Disposition`:
/// `multipart/related; boundary="===============7989999651140513039=="` (RFC 9110 §5.6.6,
/// RFC 2045 §5.1, RFC 6266 §4.1). One parser for every such header.
///
/// - The leading value (`multipart/related`, `attachment`) is kept as sent; `matches` compares it
///   ASCII case-insensitively.
/// - Parameter names are case-insensitive (stored lower-cased); whitespace is allowed around `;`
///   and `=`; empty parameters (`;;`) are skipped; parameters come in any order.
/// - A value is a quoted-string (`\` escapes the next character; RFC 9110 §5.6.4) or a run of
///   visible characters other than `;`, `"` and `\`. That is laxer than `token` (RFC 9110 §5.6.2):
///   clients send unquoted `=` and `/` in boundaries, and nothing is ambiguous about them.
/// - A parameter named twice, an unterminated quote, a control character, or text after a value
///   are errors that say what was wrong.
public struct HeaderParameters: Sendable, Equatable {
  public var value: String
  /// In the order sent, names lower-cased.
  public var parameters: [(name: String, value: String)]

  public static func == (lhs: HeaderParameters, rhs: HeaderParameters) -> Bool {
    lhs.value == rhs.value && lhs.parameters.elementsEqual(rhs.parameters) { $0 == $1 }
  }

  /// The value of a parameter (`name` lower case).
  public subscript(_ name: String) -> String? {
    parameters.first { $0.name.sameUTF8(name) }?.value
  }

  /// Whether the leading value is `expected`, ignoring ASCII case.
  public func matches(_ expected: String) -> Bool {
    value.utf8.count == expected.utf8.count
      && zip(value.utf8, expected.utf8).allSatisfy { Self.lower($0) == Self.lower($1) }
  }

  /// Whether `header` is a value without parameters (no `;`) and without a control character:
  /// such a value always parses, so a caller that only checks a header (every upload's
  /// `Content-Type`) can skip building the parse.
  public static func isPlainValue(_ header: String) -> Bool {
    header.utf8.allSatisfy { $0 != semicolon && !isControl($0) }
  }

  /// Parses a whole header value. Headers are at most `max_header_bytes` long, so the work is
  /// bounded by the header limit; nothing recurses.
  public init(parsing header: String) throws(HeaderParameterError) {
    let bytes = Array(header.utf8)
    var index = 0
    func skipWhitespace() {
      while index < bytes.count && (bytes[index] == 32 || bytes[index] == 9) { index += 1 }
    }
    skipWhitespace()
    let valueStart = index
    while index < bytes.count && bytes[index] != Self.semicolon {
      guard !Self.isControl(bytes[index]) else {
        throw HeaderParameterError("The header value has a control character at byte \(index).")
      }
      index += 1
    }
    var valueEnd = index
    while valueEnd > valueStart && (bytes[valueEnd - 1] == 32 || bytes[valueEnd - 1] == 9) { valueEnd -= 1 }
    value = String(decoding: bytes[valueStart..<valueEnd], as: UTF8.self)
    parameters = []
    while index < bytes.count {
      // At a ';'.
      index += 1
      skipWhitespace()
      if index == bytes.count { break }
      if bytes[index] == Self.semicolon { continue }
      let nameStart = index
      while index < bytes.count && HTTPSyntax.isToken(bytes[index]) { index += 1 }
      let name = String(decoding: bytes[nameStart..<index], as: UTF8.self).lowercased()
      guard !name.isEmpty else {
        throw HeaderParameterError(
          "A parameter name is expected at byte \(index), found '\(Self.describe(bytes[index]))'.")
      }
      skipWhitespace()
      guard index < bytes.count && bytes[index] == Self.equals else {
        throw HeaderParameterError("The parameter '\(name)' has no '=' and value.")
      }
      index += 1
      skipWhitespace()
      var text: [UInt8] = []
      if index < bytes.count && bytes[index] == Self.quote {
        index += 1
        var closed = false
        while index < bytes.count {
          let byte = bytes[index]
          if byte == Self.quote {
            closed = true
            index += 1
            break
          }
          if byte == Self.backslash {
            index += 1
            guard index < bytes.count else { break }
          }
          guard !Self.isControl(bytes[index]) || bytes[index] == 9 else {
            throw HeaderParameterError("The parameter '\(name)' has a control character in its quoted value.")
          }
          text.append(bytes[index])
          index += 1
        }
        guard closed else {
          throw HeaderParameterError("The quoted value of parameter '\(name)' has no closing quote.")
        }
      } else {
        while index < bytes.count, bytes[index] > 32, bytes[index] != Self.semicolon, bytes[index] != 127 {
          guard bytes[index] != Self.quote && bytes[index] != Self.backslash else {
            throw HeaderParameterError(
              "The value of parameter '\(name)' has a '\(Self.describe(bytes[index]))' outside quotes.")
          }
          text.append(bytes[index])
          index += 1
        }
      }
      skipWhitespace()
      if index < bytes.count && bytes[index] != Self.semicolon {
        throw HeaderParameterError(
          "Unexpected '\(Self.describe(bytes[index]))' after the value of parameter '\(name)' (byte \(index)).")
      }
      guard !parameters.contains(where: { $0.name == name }) else {
        throw HeaderParameterError("The parameter '\(name)' is given twice.")
      }
      parameters.append((name, String(decoding: text, as: UTF8.self)))
    }
  }

  /// The `boundary` parameter of a multipart Content-Type, checked against RFC 2046 §5.1.1:
  /// 1 to 70 characters of `bchars`, not ending in a space.
  public func multipartBoundary() throws(HeaderParameterError) -> String {
    guard let boundary = self["boundary"] else {
      throw HeaderParameterError("The multipart Content-Type has no boundary parameter.")
    }
    let bytes = Array(boundary.utf8)
    guard !bytes.isEmpty else { throw HeaderParameterError("The multipart boundary is empty.") }
    guard bytes.count <= 70 else {
      throw HeaderParameterError("The multipart boundary is \(bytes.count) characters long; at most 70 are allowed.")
    }
    if let bad = bytes.first(where: { !Self.isBoundaryCharacter($0) }) {
      throw HeaderParameterError(
        "The multipart boundary has '\(Self.describe(bad))', a character RFC 2046 does not allow in a boundary.")
    }
    guard bytes.last != 32 else { throw HeaderParameterError("The multipart boundary ends with a space.") }
    return boundary
  }

  private static let semicolon = UInt8(ascii: ";")
  private static let equals = UInt8(ascii: "=")
  private static let quote = UInt8(ascii: "\"")
  private static let backslash = UInt8(ascii: "\\")

  private static func lower(_ byte: UInt8) -> UInt8 {
    byte >= 65 && byte <= 90 ? byte + 32 : byte
  }

  private static func isControl(_ byte: UInt8) -> Bool { byte < 32 || byte == 127 }

  /// `bchars` (RFC 2046 §5.1.1): digits, letters, `'()+_,-./:=?` and space.
  private static func isBoundaryCharacter(_ byte: UInt8) -> Bool {
    switch byte {
    case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
      UInt8(ascii: "0")...UInt8(ascii: "9"):
      true
    default: Array("'()+_,-./:=? ".utf8).contains(byte)
    }
  }

  private static func describe(_ byte: UInt8) -> String {
    byte >= 33 && byte < 127 ? String(UnicodeScalar(byte)) : "\\x" + String(byte, radix: 16)
  }
}

/// What is wrong with a header's parameters.
public struct HeaderParameterError: Error, Sendable, Equatable {
  public var message: String
  public init(_ message: String) { self.message = message }
}
