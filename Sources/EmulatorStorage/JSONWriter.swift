import EmulatorSupport

/// Appends JSON text to a byte buffer; faster than `JSONEncoder` and byte-stable.
public struct JSONWriter {
  /// The text is the first `length` bytes of `buffer`, which has room for `capacity` (kept here,
  /// not in the buffer's header: a class's stored property is checked for exclusive access at
  /// run time, ~60 instructions a write).
  /// Each write asks for room once and fills it through a pointer: one check and one copy a piece
  /// (a key with its quotes, comma and colon; a string with its quotes), where `Array.append`
  /// cost a check per byte and ~90 instructions per `append(contentsOf:)`, two dozen keys and
  /// values per object rendered. A copied writer copies the buffer before its next write.
  private var buffer: ManagedBuffer<Void, UInt8>
  private var capacity: Int
  private var length = 0
  /// How many containers are open.
  private var depth = 0
  /// Bit `d` set: the container open at depth `d + 1` has a member already, so the next one
  /// needs a comma. The first 64 levels live here (no array to grow and check per member);
  /// deeper ones, which only a deeply nested JSON value reaches, in `deeperMembers`.
  private var hasMembers: UInt64 = 0
  private var deeperMembers: [Bool] = []
  private var afterKey = false

  public init(capacity: Int = 512) {
    self.capacity = Swift.max(capacity, 64)
    buffer = Self.makeBuffer(self.capacity)
  }

  /// The text written so far.
  public var bytes: [UInt8] {
    buffer.withUnsafeMutablePointerToElements { Array(UnsafeBufferPointer(start: $0, count: length)) }
  }

  public mutating func beginObject() { open(UInt8(ascii: "{")) }

  public mutating func endObject() { close(UInt8(ascii: "}")) }

  public mutating func beginArray(_ key: String? = nil) {
    if let key { self.key(key) }
    open(UInt8(ascii: "["))
  }

  public mutating func endArray() { close(UInt8(ascii: "]")) }

  private mutating func open(_ bracket: UInt8) {
    let comma = separate()
    write(atMost: 2) { out in
      var count = 0
      if comma { Self.put(UInt8(ascii: ","), out, &count) }
      Self.put(bracket, out, &count)
      return count
    }
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
    byte(bracket)
  }

  /// Writes `"key":` inside an object; the next value call completes the member.
  public mutating func key(_ key: String) {
    let comma = separate()
    appendText(key, comma: comma, openQuote: true, closeQuote: true, colon: true)
    afterKey = true
  }

  /// `"key":` for a key spelled in the source (ASCII, nothing to escape): its bytes copied in one
  /// piece, without the escape scan a `String` key gets. The object renderers, two dozen keys
  /// per object, name theirs this way; a value call follows.
  public mutating func literalKey(_ key: StaticString) {
    guard key.hasPointerRepresentation else {
      self.key(key.description)
      return
    }
    let comma = separate()
    let text = UnsafeBufferPointer(start: key.utf8Start, count: key.utf8CodeUnitCount)
    write(atMost: text.count + 4) { out in
      var count = 0
      if comma { Self.put(UInt8(ascii: ","), out, &count) }
      Self.put(UInt8(ascii: "\""), out, &count)
      Self.copy(text, out, &count)
      Self.put(UInt8(ascii: "\""), out, &count)
      Self.put(UInt8(ascii: ":"), out, &count)
      return count
    }
    afterKey = true
  }

  public mutating func string(_ key: String, _ value: String) {
    self.key(key)
    string(value)
  }

  public mutating func string(_ value: String) {
    let comma = separate()
    appendText(value, comma: comma, openQuote: true, closeQuote: true)
  }

  /// `"key":"` — a string value written in parts (`stringPart`…), closed by `endString`: links
  /// and ids are built in place, not as temporary `String`s.
  public mutating func beginString(_ key: String) {
    self.key(key)
    beginString()
  }

  /// `"` — a string value (after `literalKey`, or an array element) written in parts.
  public mutating func beginString() {
    let comma = separate()
    write(atMost: 2) { out in
      var count = 0
      if comma { Self.put(UInt8(ascii: ","), out, &count) }
      Self.put(UInt8(ascii: "\""), out, &count)
      return count
    }
  }

  public mutating func stringPart(_ part: String) { appendText(part) }

  public mutating func endString() { byte(UInt8(ascii: "\"")) }

  /// A part spelled in the source, with nothing to escape (a path's fixed pieces): copied whole,
  /// without the scan a `String` part gets.
  public mutating func literalPart(_ part: StaticString) {
    guard part.hasPointerRepresentation else { return stringPart(part.description) }
    let text = UnsafeBufferPointer(start: part.utf8Start, count: part.utf8CodeUnitCount)
    assert(Self.cleanPrefix(text) == text.count, "JSONWriter: a literal part that needs escaping")
    write(atMost: text.count) { out in
      var count = 0
      Self.copy(text, out, &count)
      return count
    }
  }

  public mutating func optionalString(_ key: String, _ value: String?) {
    if let value { string(key, value) }
  }

  public mutating func raw(_ key: String, _ literal: String) {
    self.key(key)
    rawValue(literal)
  }

  public mutating func bool(_ key: String, _ value: Bool) { raw(key, value ? "true" : "false") }

  /// A literal value (number, `true`, `null`) as an array element or after `key`: copied as it is
  /// (a literal, or JSON already encoded).
  public mutating func rawValue(_ literal: String) {
    let comma = separate()
    var literal = literal
    literal.withUTF8 { text in
      write(atMost: text.count + 1) { out in
        var count = 0
        if comma { Self.put(UInt8(ascii: ","), out, &count) }
        Self.copy(text, out, &count)
        return count
      }
    }
  }

  public mutating func null(_ key: String) { raw(key, "null") }

  public mutating func objectKey(_ key: String) {
    self.key(key)
    beginObject()
  }

  /// Whether the next member or element needs a comma before it (and notes that its container
  /// has one now).
  mutating func separate() -> Bool {
    if afterKey {
      afterKey = false
      return false
    }
    guard depth > 0 else { return false }
    if depth <= 64 {
      let bit: UInt64 = 1 << UInt64(depth - 1)
      if hasMembers & bit != 0 { return true }
      hasMembers |= bit
      return false
    }
    let had = deeperMembers[deeperMembers.count - 1]
    deeperMembers[deeperMembers.count - 1] = true
    return had
  }

  // MARK: Writing through a pointer

  /// Makes room for `limit` bytes past the text, lets `body` write them at the text's end, and
  /// keeps as many as it says it wrote (never more than `limit`).
  @inline(__always)
  mutating func write(atMost limit: Int, _ body: (UnsafeMutablePointer<UInt8>) -> Int) {
    if !isKnownUniquelyReferenced(&buffer) || limit > capacity - length { reserve(limit) }
    let start = length
    let written = buffer.withUnsafeMutablePointerToElements { body($0 + start) }
    precondition(written <= limit, "JSONWriter: wrote past the room asked for")
    length = start + written
  }

  /// A buffer of its own with room for `limit` more bytes (doubling, so appends stay linear).
  private mutating func reserve(_ limit: Int) {
    let grownCapacity = Swift.max(length + limit, capacity * 2)
    let grown = Self.makeBuffer(grownCapacity)
    let count = length
    buffer.withUnsafeMutablePointerToElements { old in
      grown.withUnsafeMutablePointerToElements { $0.update(from: old, count: count) }
    }
    buffer = grown
    capacity = grownCapacity
  }

  private static func makeBuffer(_ capacity: Int) -> ManagedBuffer<Void, UInt8> {
    ManagedBuffer<Void, UInt8>.create(minimumCapacity: capacity) { _ in }
  }

  private mutating func byte(_ value: UInt8) {
    write(atMost: 1) { out in
      out[0] = value
      return 1
    }
  }

  @inline(__always)
  static func put(_ value: UInt8, _ out: UnsafeMutablePointer<UInt8>, _ count: inout Int) {
    out[count] = value
    count += 1
  }

  @inline(__always)
  private static func copy(_ text: UnsafeBufferPointer<UInt8>, _ out: UnsafeMutablePointer<UInt8>, _ count: inout Int) {
    if let base = text.baseAddress { (out + count).update(from: base, count: text.count) }
    count += text.count
  }

  /// A string's content, escaped where JSON needs it, with the separator, quotes and colon the
  /// caller asks for around it: from its contiguous UTF-8, a scan eight bytes at a time, then
  /// one copy when nothing needs escaping (nearly every string).
  private mutating func appendText(
    _ value: String, comma: Bool = false, openQuote: Bool = false, closeQuote: Bool = false, colon: Bool = false
  ) {
    let done: Void? = value.utf8.withContiguousStorageIfAvailable { utf8 in
      appendText(utf8, comma: comma, openQuote: openQuote, closeQuote: closeQuote, colon: colon)
    }
    if done == nil {
      var copy = value
      copy.withUTF8 { appendText($0, comma: comma, openQuote: openQuote, closeQuote: closeQuote, colon: colon) }
    }
  }

  private mutating func appendText(
    _ utf8: UnsafeBufferPointer<UInt8>, comma: Bool, openQuote: Bool, closeQuote: Bool, colon: Bool
  ) {
    let clean = Self.cleanPrefix(utf8)
    write(atMost: clean + 2) { out in
      var count = 0
      if comma { Self.put(UInt8(ascii: ","), out, &count) }
      if openQuote { Self.put(UInt8(ascii: "\""), out, &count) }
      Self.copy(UnsafeBufferPointer(rebasing: utf8[..<clean]), out, &count)
      return count
    }
    if clean < utf8.count { appendEscaped(UnsafeBufferPointer(rebasing: utf8[clean...])) }
    guard closeQuote || colon else { return }
    write(atMost: 2) { out in
      var count = 0
      if closeQuote { Self.put(UInt8(ascii: "\""), out, &count) }
      if colon { Self.put(UInt8(ascii: ":"), out, &count) }
      return count
    }
  }

  /// How many leading bytes need no escape (none is a control character, `"` or `\\`): eight
  /// at a time with the "has a zero byte" and "has a byte below n" word tricks (exact as a yes
  /// or no; the word that says yes is then looked at byte by byte).
  static func cleanPrefix(_ utf8: UnsafeBufferPointer<UInt8>) -> Int {
    guard let base = utf8.baseAddress else { return 0 }
    let raw = UnsafeRawPointer(base)
    let ones: UInt64 = 0x0101_0101_0101_0101
    let highs: UInt64 = 0x8080_8080_8080_8080
    var index = 0
    while utf8.count - index >= 8 {
      let word = raw.loadUnaligned(fromByteOffset: index, as: UInt64.self)
      let quote = word ^ (ones &* 0x22)
      let backslash = word ^ (ones &* 0x5C)
      let below20 = (word &- ones &* 0x20) & ~word
      let isQuote = (quote &- ones) & ~quote
      let isBackslash = (backslash &- ones) & ~backslash
      if (below20 | isQuote | isBackslash) & highs != 0 { break }
      index += 8
    }
    while index < utf8.count {
      let byte = utf8[index]
      if byte < 0x20 || byte == 0x22 || byte == 0x5C { break }
      index += 1
    }
    return index
  }

  /// Bytes from the first that needs an escape on (six bytes at most each), a kilobyte at a time
  /// (the room asked for stays small however long the string).
  private mutating func appendEscaped(_ utf8: UnsafeBufferPointer<UInt8>) {
    var start = 0
    while start < utf8.count {
      let end = Swift.min(start + 1024, utf8.count)
      appendEscapedPiece(UnsafeBufferPointer(rebasing: utf8[start..<end]))
      start = end
    }
  }

  private mutating func appendEscapedPiece(_ utf8: UnsafeBufferPointer<UInt8>) {
    write(atMost: utf8.count * 6) { out in
      var count = 0
      for byte in utf8 {
        switch byte {
        case 0x22, 0x5C:
          Self.put(0x5C, out, &count)
          Self.put(byte, out, &count)
        case 0x0A:
          Self.put(0x5C, out, &count)
          Self.put(UInt8(ascii: "n"), out, &count)
        case 0x0D:
          Self.put(0x5C, out, &count)
          Self.put(UInt8(ascii: "r"), out, &count)
        case 0x09:
          Self.put(0x5C, out, &count)
          Self.put(UInt8(ascii: "t"), out, &count)
        case 0..<0x20:
          let (high, low) = Hex.digits(byte)
          Self.put(0x5C, out, &count)
          Self.put(UInt8(ascii: "u"), out, &count)
          Self.put(48, out, &count)
          Self.put(48, out, &count)
          Self.put(high, out, &count)
          Self.put(low, out, &count)
        default: Self.put(byte, out, &count)
        }
      }
      return count
    }
  }
}
