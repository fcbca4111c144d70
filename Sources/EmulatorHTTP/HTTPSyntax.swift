/// Byte classes of HTTP's grammar, shared by the request decoder, `HeaderParameters` and the CORS
/// header lists.
enum HTTPSyntax {
  static func isDigit(_ byte: UInt8) -> Bool { byte >= 48 && byte <= 57 }

  static func hexValue(_ byte: UInt8) -> Int? {
    switch byte {
    case 48...57: Int(byte - 48)
    case 65...70: Int(byte - 55)
    case 97...102: Int(byte - 87)
    default: nil
    }
  }

  /// `tchar` of RFC 9110 §5.6.2: the bytes of methods, header names and parameter names.
  static func isToken(_ byte: UInt8) -> Bool {
    switch byte {
    case 48...57, 65...90, 97...122: true
    case UInt8(ascii: "!"), UInt8(ascii: "#"), UInt8(ascii: "$"), UInt8(ascii: "%"), UInt8(ascii: "&"),
      UInt8(ascii: "'"), UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: "."),
      UInt8(ascii: "^"), UInt8(ascii: "_"), UInt8(ascii: "`"), UInt8(ascii: "|"), UInt8(ascii: "~"):
      true
    default: false
    }
  }
}
