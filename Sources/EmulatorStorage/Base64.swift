/// Standard base64 (RFC 4648 §4, padded) straight into a byte buffer: hashes and ETags are
/// rendered on every metadata response (three per object of a listing), and
/// `Data.base64EncodedString()` allocates twice each.
public enum Base64 {
  /// The 64 digits, as a tuple-free lookup: `digit(n)` for n in 0..<64.
  @inline(__always)
  private static func digit(_ value: UInt32) -> UInt8 {
    switch value {
    case 0..<26: UInt8(truncatingIfNeeded: value) &+ UInt8(ascii: "A")
    case 26..<52: UInt8(truncatingIfNeeded: value - 26) &+ UInt8(ascii: "a")
    case 52..<62: UInt8(truncatingIfNeeded: value - 52) &+ UInt8(ascii: "0")
    case 62: UInt8(ascii: "+")
    default: UInt8(ascii: "/")
    }
  }

  /// The one encoder, over contiguous bytes (the generic entry points copy into an array first,
  /// so no caller in another module runs an unspecialised per-byte loop).
  public static func append(_ bytes: [UInt8], to out: inout [UInt8]) {
    out.reserveCapacity(out.count + (bytes.count + 2) / 3 * 4)
    bytes.withUnsafeBufferPointer { input in
      var index = 0
      let count = input.count
      while index < count {
        let remaining = count - index
        let first = UInt32(input[index])
        let second = remaining > 1 ? UInt32(input[index + 1]) : 0
        let third = remaining > 2 ? UInt32(input[index + 2]) : 0
        let group = first << 16 | second << 8 | third
        out.append(digit(group >> 18))
        out.append(digit(group >> 12 & 63))
        out.append(remaining > 1 ? digit(group >> 6 & 63) : UInt8(ascii: "="))
        out.append(remaining > 2 ? digit(group & 63) : UInt8(ascii: "="))
        index += 3
      }
    }
  }

  public static func append(_ bytes: some Collection<UInt8>, to out: inout [UInt8]) {
    append(Array(bytes), to: &out)
  }

  public static func encode(_ bytes: [UInt8]) -> String {
    var out: [UInt8] = []
    append(bytes, to: &out)
    return String(decoding: out, as: UTF8.self)
  }

  public static func encode(_ bytes: some Collection<UInt8>) -> String {
    encode(Array(bytes))
  }
}
