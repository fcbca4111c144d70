/// Hexadecimal digits: the one encoder and decoder every module uses (digests, ETags, signatures,
/// percent-escapes, chunk sizes).
public enum Hex {
  private static let lower: [UInt8] = Array("0123456789abcdef".utf8)

  /// The value of one hexadecimal digit (either case), or nil.
  @inlinable
  public static func value(_ byte: UInt8) -> UInt8? {
    switch byte {
    case 48...57: byte - 48
    case 65...70: byte - 55
    case 97...102: byte - 87
    default: nil
    }
  }

  /// Lower-case hexadecimal of `bytes`, two digits a byte.
  public static func encode(_ bytes: some Sequence<UInt8>) -> String {
    var out: [UInt8] = []
    out.reserveCapacity(bytes.underestimatedCount * 2)
    for byte in bytes {
      out.append(lower[Int(byte >> 4)])
      out.append(lower[Int(byte & 15)])
    }
    return String(decoding: out, as: UTF8.self)
  }

  /// The two lower-case digits of one byte.
  public static func digits(_ byte: UInt8) -> (UInt8, UInt8) { (lower[Int(byte >> 4)], lower[Int(byte & 15)]) }

  /// The bytes of an even-length hexadecimal string (either case), or nil for anything else
  /// (an empty string is nil too: no digest is empty).
  public static func decode(_ text: some StringProtocol) -> [UInt8]? {
    let utf8 = Array(text.utf8)
    guard !utf8.isEmpty, utf8.count % 2 == 0 else { return nil }
    var out: [UInt8] = []
    out.reserveCapacity(utf8.count / 2)
    var index = 0
    while index < utf8.count {
      guard let high = value(utf8[index]), let low = value(utf8[index + 1]) else { return nil }
      out.append(high << 4 | low)
      index += 2
    }
    return out
  }
}
