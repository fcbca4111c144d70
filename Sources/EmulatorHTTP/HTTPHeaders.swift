/// An ordered list of header fields. Names are stored lower-cased (ASCII), values as sent, with
/// surrounding whitespace removed. Lookups are case-insensitive by construction.
public struct HTTPHeaders: Sendable, Sequence, ExpressibleByDictionaryLiteral {
  public private(set) var fields: [(name: String, value: String)] = []

  public init() {}

  /// Empty, with room for `minimumCapacity` fields.
  public init(minimumCapacity: Int) { fields.reserveCapacity(minimumCapacity) }

  /// With room for a few more fields than written: a response's headers gain its length, type
  /// and CORS fields on the way out, and each growth copies the list.
  public init(dictionaryLiteral elements: (String, String)...) {
    fields.reserveCapacity(elements.count + 6)
    for (name, value) in elements { add(name, value) }
  }

  public var count: Int { fields.count }

  public func makeIterator() -> IndexingIterator<[(name: String, value: String)]> {
    fields.makeIterator()
  }

  /// Appends a field; the name is lower-cased.
  public mutating func add(_ name: String, _ value: String) {
    fields.append((Self.lowercased(name), value))
  }

  /// Appends a field whose name is already lower-case (the head parser lower-cases as it copies).
  mutating func appendLowercased(_ name: String, _ value: String) {
    fields.append((name, value))
  }

  mutating func reserveCapacity(_ count: Int) { fields.reserveCapacity(count) }

  /// ASCII lower case (only `A`–`Z` change, as `matches` folds them); a name that has no
  /// upper-case letter (every name this server adds) is returned as it is.
  static func lowercased(_ name: String) -> String {
    guard name.hasASCIIUppercase else { return name }
    return String(decoding: name.utf8.map { $0 &- UInt8(ascii: "A") < 26 ? $0 | 0x20 : $0 }, as: UTF8.self)
  }

  /// Replaces every field of that name by one field.
  public mutating func set(_ name: String, _ value: String) {
    fields.removeAll { Self.matches($0.name, name) }
    fields.append((Self.lowercased(name), value))
  }

  public mutating func remove(_ name: String) {
    fields.removeAll { Self.matches($0.name, name) }
  }

  /// The first value of the field, if present.
  public subscript(_ name: String) -> String? {
    for field in fields where Self.matches(field.name, name) { return field.value }
    return nil
  }

  /// Whether a stored (lower-case) name is `name` in any ASCII case. Names of other lengths are
  /// told apart by their byte counts, so a miss costs a few instructions; the name looked up is
  /// never scanned for capitals nor lower-cased (the server asks in lower case).
  @inline(__always)
  static func matches(_ stored: String, _ name: String) -> Bool {
    guard stored.utf8.count == name.utf8.count else { return false }
    return stored == name
      || stored.utf8.elementsEqual(name.utf8) { lower, byte in
        lower == byte || (byte &- UInt8(ascii: "A") < 26 && byte | 0x20 == lower)
      }
  }

  /// Every value of the field, in order.
  public func values(_ name: String) -> [String] {
    fields.filter { Self.matches($0.name, name) }.map(\.value)
  }

  /// Whether a comma-separated field (such as `Connection`) holds `token`, case-insensitively.
  public func containsToken(_ name: String, _ token: String) -> Bool {
    guard fields.contains(where: { Self.matches($0.name, name) }) else { return false }
    let wanted = token.lowercased()
    for value in values(name) {
      for part in value.split(separator: ",")
      where part.trimmingASCIIWhitespace().lowercased() == wanted {
        return true
      }
    }
    return false
  }
}

extension Substring {
  /// Without leading and trailing spaces and tabs, found as bytes (no grapheme breaking).
  func trimmingASCIIWhitespace() -> Substring {
    func blank(_ byte: UInt8) -> Bool { byte == 32 || byte == 9 }
    var start = utf8.startIndex
    var end = utf8.endIndex
    while start < end && blank(utf8[start]) { start = utf8.index(after: start) }
    while end > start && blank(utf8[utf8.index(before: end)]) { end = utf8.index(before: end) }
    return self[start..<end]
  }
}

extension String {
  /// The string without leading and trailing spaces and tabs.
  public func trimmingASCIIWhitespace() -> String {
    String(self[...].trimmingASCIIWhitespace())
  }
}
