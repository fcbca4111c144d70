/// Percent-decoding and query-string parsing on raw request targets (RFC 3986 §2.1).
public enum URLCoding {
  /// Decodes `%XX` escapes once. Returns nil for a malformed escape or bytes that are not UTF-8.
  /// - Parameter plusIsSpace: form-style decoding, as query strings are decoded here: `+` is a space.
  public static func percentDecode(_ text: Substring, plusIsSpace: Bool = false) -> String? {
    // Most names have nothing to decode: the text itself (already valid UTF-8) is the answer.
    func escaped(_ byte: UInt8) -> Bool { byte == UInt8(ascii: "%") || (plusIsSpace && byte == UInt8(ascii: "+")) }
    let plain =
      text.utf8.withContiguousStorageIfAvailable { !$0.contains(where: escaped) } ?? !text.utf8.contains(where: escaped)
    if plain { return String(text) }
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
  /// one path segment (`/` becomes `%2F`). A name with nothing to encode is returned as it is.
  public static func encodeComponent(_ text: String) -> String {
    func unreserved(_ byte: UInt8) -> Bool {
      switch byte {
      case 48...57, 65...90, 97...122, UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"): true
      default: false
      }
    }
    if text.utf8.allSatisfy(unreserved) { return text }
    func digit(_ value: UInt8) -> UInt8 { value < 10 ? UInt8(ascii: "0") + value : UInt8(ascii: "A") + value - 10 }
    var out: [UInt8] = []
    out.reserveCapacity(text.utf8.count * 3)
    for byte in text.utf8 {
      if unreserved(byte) {
        out.append(byte)
      } else {
        out.append(UInt8(ascii: "%"))
        out.append(digit(byte >> 4))
        out.append(digit(byte & 15))
      }
    }
    return String(decoding: out, as: UTF8.self)
  }
}

/// Query parameters decoded form-style (`%XX` and `+` as space). A repeated name: the last wins.
public struct QueryParameters: Sendable {
  public private(set) var values: [String: String] = [:]

  /// Parses a raw query. Throws the name of a parameter whose escapes are malformed.
  public init(_ raw: Substring) throws(HTTPParseError) {
    // Split on the bytes `&` and `=` (a request target is ASCII), not on Characters.
    let bytes = raw.utf8
    var start = bytes.startIndex
    while start < bytes.endIndex {
      let end = bytes[start...].firstIndex(of: UInt8(ascii: "&")) ?? bytes.endIndex
      defer { start = end == bytes.endIndex ? end : bytes.index(after: end) }
      if start == end { continue }
      let pair = raw[start..<end]
      let name: Substring
      let value: Substring
      if let equals = pair.utf8.firstIndex(of: UInt8(ascii: "=")) {
        name = pair[..<equals]
        value = pair[pair.utf8.index(after: equals)...]
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
