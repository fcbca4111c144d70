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
  /// Written through a pointer into scratch room, then appended in one copy (an `append` per
  /// digit cost ~20 instructions each).
  public static func append(_ bytes: [UInt8], to out: inout [UInt8]) {
    let count = (bytes.count + 2) / 3 * 4
    guard count > 0 else { return }
    bytes.withUnsafeBufferPointer { input in
      withUnsafeTemporaryAllocation(of: UInt8.self, capacity: count) { scratch in
        write(input, to: scratch.baseAddress!)
        out.append(contentsOf: UnsafeBufferPointer(scratch))
      }
    }
  }

  /// Writes the encoding of `input` at `out`, which has room for `(input.count + 2) / 3 * 4` bytes.
  /// Returns how many bytes it wrote.
  @discardableResult
  static func write(_ input: UnsafeBufferPointer<UInt8>, to out: UnsafeMutablePointer<UInt8>) -> Int {
    var index = 0
    var written = 0
    while index < input.count {
      let remaining = input.count - index
      let first = UInt32(input[index])
      let second = remaining > 1 ? UInt32(input[index + 1]) : 0
      let third = remaining > 2 ? UInt32(input[index + 2]) : 0
      let group = first << 16 | second << 8 | third
      out[written] = digit(group >> 18)
      out[written + 1] = digit(group >> 12 & 63)
      out[written + 2] = remaining > 1 ? digit(group >> 6 & 63) : UInt8(ascii: "=")
      out[written + 3] = remaining > 2 ? digit(group & 63) : UInt8(ascii: "=")
      index += 3
      written += 4
    }
    return written
  }

  /// The length of the encoding of `count` bytes.
  static func encodedCount(_ count: Int) -> Int { (count + 2) / 3 * 4 }

  public static func append(_ bytes: some Collection<UInt8>, to out: inout [UInt8]) {
    append(Array(bytes), to: &out)
  }

  /// Written straight into the string's storage (no byte array first: an ETag header and a
  /// hash on every response).
  public static func encode(_ bytes: [UInt8]) -> String {
    // Nothing to write: no buffer to write into is asked for (its base address may be nil).
    guard !bytes.isEmpty else { return "" }
    return bytes.withUnsafeBufferPointer { input in
      String(unsafeUninitializedCapacity: encodedCount(input.count)) { out in
        write(input, to: out.baseAddress!)
      }
    }
  }

  public static func encode(_ bytes: some Collection<UInt8>) -> String {
    encode(Array(bytes))
  }
}
