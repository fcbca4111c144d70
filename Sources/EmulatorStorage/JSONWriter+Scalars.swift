/// The writer's scalar values: integers (as JSON strings, as both API flavours write int64s),
/// timestamps and base64, each written straight into the buffer through `write(atMost:)`.
extension JSONWriter {
  /// A non-negative or negative integer's decimal digits, inside a string.
  public mutating func stringPart(_ value: Int64) {
    write(atMost: 20) { out in Self.writeDigits(value, out) }
  }

  /// `"key":"12345"`: int64 fields are JSON strings in both API flavours.
  public mutating func integerString(_ key: String, _ value: Int64) {
    self.key(key)
    integerString(value)
  }

  /// `"12345"`, the value alone.
  public mutating func integerString(_ value: Int64) {
    quoted(atMost: 20) { out in Self.writeDigits(value, out) }
  }

  /// `"key":"2024-01-02T03:04:05.678Z"`.
  public mutating func timestamp(_ key: String, milliseconds: Int64) {
    self.key(key)
    timestamp(milliseconds: milliseconds)
  }

  /// `"2024-01-02T03:04:05.678Z"`, the value alone.
  public mutating func timestamp(milliseconds: Int64) {
    quoted(atMost: Timestamp.maxBytes) { out in Timestamp.write(milliseconds: milliseconds, to: out) }
  }

  /// `"key":"<base64 of bytes>"`: hashes and ETags, on every rendering.
  public mutating func base64(_ key: String, _ value: [UInt8]) {
    self.key(key)
    base64(value)
  }

  /// `"<base64 of bytes>"`, the value alone.
  public mutating func base64(_ value: [UInt8]) {
    value.withUnsafeBufferPointer { input in
      quoted(atMost: Base64.encodedCount(input.count)) { out in Base64.write(input, to: out) }
    }
  }

  /// A string value: a separator, a quote, what `body` writes (at most `limit` bytes, nothing
  /// to escape), a quote; one capacity check for all of it.
  mutating func quoted(atMost limit: Int, _ body: (UnsafeMutablePointer<UInt8>) -> Int) {
    let comma = separate()
    write(atMost: limit + 3) { out in
      var count = 0
      if comma { Self.put(UInt8(ascii: ","), out, &count) }
      Self.put(UInt8(ascii: "\""), out, &count)
      count += body(out + count)
      Self.put(UInt8(ascii: "\""), out, &count)
      return count
    }
  }

  /// "00" to "99": two digits per division (a generation has 16).
  static let digitPairs: StaticString = "00010203040506070809101112131415161718192021222324252627282930313233343536373839404142434445464748495051525354555657585960616263646566676869707172737475767778798081828384858687888990919293949596979899"

  /// `value`'s decimal digits at `out` (room for 20); returns how many. Written from the right
  /// into 20 bytes of stack, two at a time, then copied once.
  static func writeDigits(_ value: Int64, _ out: UnsafeMutablePointer<UInt8>) -> Int {
    var count = 0
    if value < 0 { put(UInt8(ascii: "-"), out, &count) }
    var rest = value.magnitude
    let pairs = digitPairs.utf8Start
    return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { scratch in
      var position = 20
      while rest >= 100 {
        let (quotient, remainder) = rest.quotientAndRemainder(dividingBy: 100)
        position -= 2
        scratch[position] = pairs[Int(remainder) * 2]
        scratch[position + 1] = pairs[Int(remainder) * 2 + 1]
        rest = quotient
      }
      if rest >= 10 {
        position -= 2
        scratch[position] = pairs[Int(rest) * 2]
        scratch[position + 1] = pairs[Int(rest) * 2 + 1]
      } else {
        position -= 1
        scratch[position] = UInt8(48 + rest)
      }
      let digits = 20 - position
      (out + count).update(from: scratch.baseAddress! + position, count: digits)
      return count + digits
    }
  }
}
