import EmulatorSupport

/// Percent-decoding and query-string parsing on raw request targets (RFC 3986 §2.1).
public enum URLCoding {
  /// Decodes `%XX` escapes once. Returns nil for a malformed escape or bytes that are not UTF-8.
  /// - Parameter plusIsSpace: form-style decoding, as query strings are decoded here: `+` is a space.
  public static func percentDecode(_ text: Substring, plusIsSpace: Bool = false) -> String? {
    text.withUTF8Bytes { percentDecode(bytes: $0, plusIsSpace: plusIsSpace) }
  }

  /// `percentDecode` of a string's UTF-8 bytes (a slice of a path the router has in hand).
  public static func percentDecode(bytes: UnsafeBufferPointer<UInt8>, plusIsSpace: Bool = false) -> String? {
    // Most names have nothing to decode: the bytes themselves (a string's: valid UTF-8) are the answer.
    func escaped(_ byte: UInt8) -> Bool { byte == UInt8(ascii: "%") || (plusIsSpace && byte == UInt8(ascii: "+")) }
    guard bytes.contains(where: escaped) else { return String(decoding: bytes, as: UTF8.self) }
    guard let decoded = decodeBytes(bytes, plusIsSpace: plusIsSpace) else { return nil }
    return String.validatingUTF8(decoded)
  }

  public static func percentDecodeBytes(_ text: Substring, plusIsSpace: Bool = false) -> [UInt8]? {
    var text = text
    return text.withUTF8 { decodeBytes($0, plusIsSpace: plusIsSpace) }
  }

  /// `%XX` escapes (and with `plusIsSpace`, `+`) decoded; nil for a malformed escape.
  static func decodeBytes(_ bytes: UnsafeBufferPointer<UInt8>, plusIsSpace: Bool) -> [UInt8]? {
    var out: [UInt8] = []
    out.reserveCapacity(bytes.count)
    var index = 0
    while index < bytes.count {
      let byte = bytes[index]
      if byte == UInt8(ascii: "%") {
        guard index + 2 < bytes.count, let high = hex(bytes[index + 1]), let low = hex(bytes[index + 2])
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
  /// The decoded pairs in order. A request has a few parameters: comparing short strings costs
  /// less than hashing them into a dictionary, and a lookup scans from the end (the last wins).
  private var pairs: [(name: String, value: String)] = []

  /// The parameters as a dictionary (the last of a repeated name).
  public var values: [String: String] {
    var values: [String: String] = [:]
    for pair in pairs { values[pair.name] = pair.value }
    return values
  }

  /// Parses a raw query. Throws the name of a parameter whose escapes are malformed.
  public init(_ raw: Substring) throws(HTTPParseError) {
    guard !raw.isEmpty else { return }
    var raw = raw
    // Split on the bytes `&` and `=` of the contiguous UTF-8 (a request target is ASCII).
    let malformed: String? = raw.withUTF8 { bytes in
      pairs.reserveCapacity(4)
      var start = 0
      while start < bytes.count {
        var end = start
        while end < bytes.count && bytes[end] != UInt8(ascii: "&") { end += 1 }
        defer { start = end + 1 }
        if start == end { continue }
        var equals = start
        while equals < end && bytes[equals] != UInt8(ascii: "=") { equals += 1 }
        let name = UnsafeBufferPointer(rebasing: bytes[start..<equals])
        let value = UnsafeBufferPointer(rebasing: bytes[min(equals + 1, end)..<end])
        // Form-style: `+` is a space.
        guard let decodedName = URLCoding.percentDecode(bytes: name, plusIsSpace: true),
          let decodedValue = URLCoding.percentDecode(bytes: value, plusIsSpace: true)
        else {
          return String(decoding: name, as: UTF8.self)
        }
        pairs.append((decodedName, decodedValue))
      }
      return nil
    }
    if let malformed {
      throw HTTPParseError(400, "The query parameter '\(malformed)' has a malformed percent-escape or is not UTF-8.")
    }
  }

  public init(_ values: [String: String] = [:]) {
    pairs = values.map { ($0.key, $0.value) }
  }

  /// Whether the query has no parameter (most GETs): a caller can skip its lookups.
  public var isEmpty: Bool { pairs.isEmpty }

  public subscript(_ name: String) -> String? {
    var index = pairs.count - 1
    while index >= 0 {
      // By bytes: a miss (most lookups) is a count check, not `==`'s Unicode comparison.
      if pairs[index].name.sameUTF8(name) { return pairs[index].value }
      index -= 1
    }
    return nil
  }
}
