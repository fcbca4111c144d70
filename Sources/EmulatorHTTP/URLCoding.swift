/// Percent-decoding and query-string parsing on raw request targets (RFC 3986 §2.1).
public enum URLCoding {
  /// Decodes `%XX` escapes once. Returns nil for a malformed escape or bytes that are not UTF-8.
  /// - Parameter plusIsSpace: form-style decoding, as query strings are decoded here: `+` is a space.
  public static func percentDecode(_ text: Substring, plusIsSpace: Bool = false) -> String? {
    // Most names have nothing to decode: the text itself (already valid UTF-8) is the answer.
    if !text.utf8.contains(where: { $0 == UInt8(ascii: "%") || (plusIsSpace && $0 == UInt8(ascii: "+")) }) {
      return String(text)
    }
    guard let bytes = percentDecodeBytes(text, plusIsSpace: plusIsSpace) else { return nil }
    return String(validating: bytes, as: UTF8.self)
  }

  public static func percentDecodeBytes(_ text: Substring, plusIsSpace: Bool = false) -> [UInt8]? {
    let utf8 = Array(text.utf8)
    var out: [UInt8] = []
    out.reserveCapacity(utf8.count)
    var index = 0
    while index < utf8.count {
      let byte = utf8[index]
      if byte == UInt8(ascii: "%") {
        guard index + 2 < utf8.count, let high = hex(utf8[index + 1]), let low = hex(utf8[index + 2])
        else { return nil }
        out.append(high << 4 | low)
        index += 3
      } else {
        out.append(plusIsSpace && byte == UInt8(ascii: "+") ? 32 : byte)
        index += 1
      }
    }
    return out
  }

  /// The value of one hexadecimal digit (either case), or nil.
  public static func hex(_ byte: UInt8) -> UInt8? {
    switch byte {
    case 48...57: byte - 48
    case 65...70: byte - 55
    case 97...102: byte - 87
    default: nil
    }
  }

  /// Percent-encodes everything but RFC 3986 unreserved characters, so a whole object name becomes
  /// one path segment (`/` becomes `%2F`).
  public static func encodeComponent(_ text: String) -> String {
    var out = ""
    out.reserveCapacity(text.utf8.count)
    let digits = Array("0123456789ABCDEF".utf8)
    for byte in text.utf8 {
      switch byte {
      case 48...57, 65...90, 97...122, UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
        UInt8(ascii: "~"):
        out.unicodeScalars.append(Unicode.Scalar(byte))
      default:
        out.unicodeScalars.append("%")
        out.unicodeScalars.append(Unicode.Scalar(digits[Int(byte >> 4)]))
        out.unicodeScalars.append(Unicode.Scalar(digits[Int(byte & 15)]))
      }
    }
    return out
  }
}

/// Query parameters decoded form-style (`%XX` and `+` as space). A repeated name: the last wins.
public struct QueryParameters: Sendable {
  public private(set) var values: [String: String] = [:]

  /// Parses a raw query. Throws the name of a parameter whose escapes are malformed.
  public init(_ raw: Substring) throws(HTTPParseError) {
    for pair in raw.split(separator: "&", omittingEmptySubsequences: true) {
      let name: Substring
      let value: Substring
      if let equals = pair.firstIndex(of: "=") {
        name = pair[..<equals]
        value = pair[pair.index(after: equals)...]
      } else {
        name = pair
        value = ""
      }
      guard let decodedName = URLCoding.percentDecode(name, plusIsSpace: true),
        let decodedValue = URLCoding.percentDecode(value, plusIsSpace: true)
      else {
        throw HTTPParseError(400, "The query parameter '\(name)' has a malformed percent-escape or is not UTF-8.")
      }
      values[decodedName] = decodedValue
    }
  }

  public init(_ values: [String: String] = [:]) {
    self.values = values
  }

  public subscript(_ name: String) -> String? { values[name] }
}
