import EmulatorSupport

/// Appends JSON text to a byte buffer; faster than `JSONEncoder` and byte-stable.
public struct JSONWriter {
  public private(set) var bytes: [UInt8] = []
  /// How many containers are open.
  private var depth = 0
  /// Bit `d` set: the container open at depth `d + 1` has a member already, so the next one
  /// needs a comma. The first 64 levels live here (no array to grow and check per member);
  /// deeper ones, which only a deeply nested JSON value reaches, in `deeperMembers`.
  private var hasMembers: UInt64 = 0
  private var deeperMembers: [Bool] = []
  private var afterKey = false

  public init(capacity: Int = 512) { bytes.reserveCapacity(capacity) }

  public mutating func beginObject() { open(UInt8(ascii: "{")) }

  public mutating func endObject() { close(UInt8(ascii: "}")) }

  public mutating func beginArray(_ key: String? = nil) {
    if let key { self.key(key) }
    open(UInt8(ascii: "["))
  }

  public mutating func endArray() { close(UInt8(ascii: "]")) }

  private mutating func open(_ bracket: UInt8) {
    separate()
    bytes.append(bracket)
    if depth < 64 {
      hasMembers &= ~(1 << UInt64(depth))
    } else {
      deeperMembers.append(false)
    }
    depth += 1
  }

  private mutating func close(_ bracket: UInt8) {
    precondition(depth > 0, "JSONWriter: a container closed that was never opened")
    depth -= 1
    if depth >= 64 { deeperMembers.removeLast() }
    bytes.append(bracket)
  }

  /// Writes `"key":` inside an object; the next value call completes the member.
  public mutating func key(_ key: String) {
    separate()
    appendString(key)
    bytes.append(UInt8(ascii: ":"))
    afterKey = true
  }

  /// `"key":` for a key spelled in the source (ASCII, nothing to escape): its bytes copied in one
  /// piece, without the escape scan a `String` key gets (~360 instructions a key otherwise). The
  /// object renderers, two dozen keys per object, name theirs this way; a value call follows.
  public mutating func literalKey(_ key: StaticString) {
    separate()
    bytes.append(UInt8(ascii: "\""))
    key.withUTF8Buffer { bytes.append(contentsOf: $0) }
    bytes.append(UInt8(ascii: "\""))
    bytes.append(UInt8(ascii: ":"))
    afterKey = true
  }

  public mutating func string(_ key: String, _ value: String) {
    self.key(key)
    string(value)
  }

  public mutating func string(_ value: String) {
    separate()
    appendString(value)
  }

  /// `"key":"` — a string value written in parts (`stringPart`…), closed by `endString`: links
  /// and ids are built in place, not as temporary `String`s.
  public mutating func beginString(_ key: String) {
    self.key(key)
    beginString()
  }

  /// `"` — a string value (after `literalKey`, or an array element) written in parts.
  public mutating func beginString() {
    separate()
    bytes.append(UInt8(ascii: "\""))
  }

  public mutating func stringPart(_ part: String) { appendContent(part) }

  /// A non-negative or negative integer's decimal digits, inside a string.
  public mutating func stringPart(_ value: Int64) {
    if value < 0 {
      bytes.append(UInt8(ascii: "-"))
      if value == .min {
        bytes.append(contentsOf: "9223372036854775808".utf8)
        return
      }
    }
    var rest = value.magnitude
    var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)  // 19 digits at most, right-aligned below
    var count = 0
    withUnsafeMutableBytes(of: &digits) { buffer in
      repeat {
        count += 1
        buffer[24 - count] = UInt8(48 + rest % 10)
        rest /= 10
      } while rest > 0
      bytes.append(contentsOf: buffer[(24 - count)..<24])
    }
  }

  public mutating func endString() {
    bytes.append(UInt8(ascii: "\""))
  }

  /// `"key":"12345"`: int64 fields are JSON strings in both API flavours.
  public mutating func integerString(_ key: String, _ value: Int64) {
    self.key(key)
    integerString(value)
  }

  /// `"12345"`, the value alone.
  public mutating func integerString(_ value: Int64) { quoted { $0.stringPart(value) } }

  /// `"key":"2024-01-02T03:04:05.678Z"`.
  public mutating func timestamp(_ key: String, milliseconds: Int64) {
    self.key(key)
    timestamp(milliseconds: milliseconds)
  }

  /// `"2024-01-02T03:04:05.678Z"`, the value alone.
  public mutating func timestamp(milliseconds: Int64) {
    quoted { Timestamp.append(milliseconds: milliseconds, to: &$0.bytes) }
  }

  /// `"key":"<base64 of bytes>"`: hashes and ETags, on every rendering.
  public mutating func base64(_ key: String, _ value: [UInt8]) {
    self.key(key)
    base64(value)
  }

  /// `"<base64 of bytes>"`, the value alone.
  public mutating func base64(_ value: [UInt8]) { quoted { Base64.append(value, to: &$0.bytes) } }

  /// A string value written by `write` between its quotes.
  private mutating func quoted(_ write: (inout JSONWriter) -> Void) {
    beginString()
    write(&self)
    endString()
  }

  public mutating func optionalString(_ key: String, _ value: String?) {
    if let value { string(key, value) }
  }

  public mutating func raw(_ key: String, _ literal: String) {
    self.key(key)
    separate()
    appendRaw(literal)
  }

  public mutating func bool(_ key: String, _ value: Bool) { raw(key, value ? "true" : "false") }

  /// A literal value (number, `true`, `null`) as an array element or after `key`.
  public mutating func rawValue(_ literal: String) {
    separate()
    appendRaw(literal)
  }

  public mutating func null(_ key: String) { raw(key, "null") }

  public mutating func objectKey(_ key: String) {
    self.key(key)
    beginObject()
  }

  private mutating func separate() {
    if afterKey {
      afterKey = false
      return
    }
    guard depth > 0 else { return }
    if depth <= 64 {
      let bit: UInt64 = 1 << UInt64(depth - 1)
      if hasMembers & bit != 0 { bytes.append(UInt8(ascii: ",")) } else { hasMembers |= bit }
    } else {
      if deeperMembers[deeperMembers.count - 1] { bytes.append(UInt8(ascii: ",")) }
      deeperMembers[deeperMembers.count - 1] = true
    }
  }

  private mutating func appendString(_ value: String) {
    bytes.append(UInt8(ascii: "\""))
    appendContent(value)
    bytes.append(UInt8(ascii: "\""))
  }

  /// A string's content, escaped where JSON needs it, from its contiguous UTF-8: one scan, then
  /// one copy when nothing needs escaping (nearly every string). The generic
  /// `append(contentsOf: value.utf8)` and a separate check cost several times the instructions,
  /// on every key and value of every rendering.
  private mutating func appendContent(_ value: String) {
    var value = value
    value.withUTF8 { utf8 in
      var index = 0
      while index < utf8.count {
        let byte = utf8[index]
        if byte < 0x20 || byte == 0x22 || byte == 0x5C { break }
        index += 1
      }
      bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[..<index]))
      if index < utf8.count { appendEscaped(UnsafeBufferPointer(rebasing: utf8[index...])) }
    }
  }

  /// Text copied as it is (a literal, or JSON already encoded).
  private mutating func appendRaw(_ text: String) {
    var text = text
    text.withUTF8 { bytes.append(contentsOf: $0) }
  }

  private mutating func appendEscaped(_ utf8: UnsafeBufferPointer<UInt8>) {
    for byte in utf8 {
      switch byte {
      case 0x22, 0x5C:
        bytes.append(0x5C)
        bytes.append(byte)
      case 0x0A:
        bytes.append(0x5C)
        bytes.append(UInt8(ascii: "n"))
      case 0x0D:
        bytes.append(0x5C)
        bytes.append(UInt8(ascii: "r"))
      case 0x09:
        bytes.append(0x5C)
        bytes.append(UInt8(ascii: "t"))
      case 0..<0x20:
        let (high, low) = Hex.digits(byte)
        bytes.append(0x5C)
        bytes.append(UInt8(ascii: "u"))
        bytes.append(48)
        bytes.append(48)
        bytes.append(high)
        bytes.append(low)
      default: bytes.append(byte)
      }
    }
  }
}
