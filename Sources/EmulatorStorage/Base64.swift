/// Standard base64 (RFC 4648 §4, padded) straight into a byte buffer: hashes and ETags are
/// rendered on every metadata response, and `Data.base64EncodedString()` allocates twice each.
public enum Base64 {
  private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

  public static func append(_ bytes: some Collection<UInt8>, to out: inout [UInt8]) {
    var iterator = bytes.makeIterator()
    while let first = iterator.next() {
      let second = iterator.next()
      let third = second == nil ? nil : iterator.next()
      let group = UInt32(first) << 16 | UInt32(second ?? 0) << 8 | UInt32(third ?? 0)
      out.append(alphabet[Int(group >> 18)])
      out.append(alphabet[Int(group >> 12 & 63)])
      out.append(second == nil ? UInt8(ascii: "=") : alphabet[Int(group >> 6 & 63)])
      out.append(third == nil ? UInt8(ascii: "=") : alphabet[Int(group & 63)])
    }
  }

  public static func encode(_ bytes: some Collection<UInt8>) -> String {
    var out: [UInt8] = []
    out.reserveCapacity((bytes.count + 2) / 3 * 4)
    append(bytes, to: &out)
    return String(decoding: out, as: UTF8.self)
  }
}
