/// Byte comparisons of request text (paths, header names) with known words, over the contiguous
/// UTF-8 both sides have (request text is native, the words literals): one `memcmp`-like loop
/// instead of the per-byte index work of the generic collection algorithms. Text that is not
/// contiguous (bridged) is made contiguous first (`withUTF8`), with the same answers.
extension Substring {
  /// The text's UTF-8 bytes, contiguous: `Substring.withUTF8` on a copy (a few dozen
  /// instructions), where `utf8.withContiguousStorageIfAvailable` goes through the generic
  /// `Slice` path and costs several hundred on every call. Inlinable, so callers in other
  /// modules get it specialised (unspecialised, the generic call cost ~400 instructions).
  @inlinable
  public func withUTF8Bytes<Result>(_ body: (UnsafeBufferPointer<UInt8>) throws -> Result) rethrows -> Result {
    var text = self
    return try text.withUTF8(body)
  }

  /// Whether the UTF-8 bytes begin with `prefix`'s.
  public func utf8HasPrefix(_ prefix: String) -> Bool {
    var prefix = prefix
    return prefix.withUTF8 { wanted in
      withUTF8Bytes { bytes in bytes.count >= wanted.count && bytes.holds(wanted, at: 0) }
    }
  }

  /// Whether the UTF-8 bytes end with `suffix`'s.
  public func utf8HasSuffix(_ suffix: String) -> Bool {
    var suffix = suffix
    return suffix.withUTF8 { wanted in
      withUTF8Bytes { bytes in bytes.count >= wanted.count && bytes.holds(wanted, at: bytes.count - wanted.count) }
    }
  }

  /// Whether the UTF-8 bytes are `other`'s.
  public func utf8Equals(_ other: String) -> Bool {
    var other = other
    return other.withUTF8 { wanted in
      withUTF8Bytes { bytes in bytes.count == wanted.count && bytes.holds(wanted, at: 0) }
    }
  }
}

extension String {
  /// Whether the two strings have the same UTF-8 bytes. `==` compares by Unicode canonical
  /// equivalence: two strings whose bits differ take its slow path (~40-100 instructions), which
  /// is every miss of a header or query lookup. Names on the wire are bytes; a count check rejects
  /// nearly every miss in a few instructions, and strings of one length and different bits are
  /// equal exactly when their bytes are (ASCII is NFC; canonical equivalents of other text
  /// differ in bytes, and are different names here, as they are to Cloud Storage).
  @inlinable
  public func sameUTF8(_ other: String) -> Bool {
    utf8.count == other.utf8.count && self == other
  }

  /// Whether any byte is an ASCII upper-case letter.
  var hasASCIIUppercase: Bool {
    // Read in place (a copy of the string to call `withUTF8` on costs a retain and release,
    // on every header lookup).
    if let found = utf8.withContiguousStorageIfAvailable(Self.containsASCIIUppercase) { return found }
    var text = self
    return text.withUTF8(Self.containsASCIIUppercase)
  }

  private static func containsASCIIUppercase(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
    for byte in bytes where byte &- UInt8(ascii: "A") < 26 { return true }
    return false
  }
}

extension Substring {
  /// Whether `firstPathSegment`'s bytes are those of one of `words`, found in one pass over the
  /// contiguous bytes without making the segment's `Substring` (its index checks cost more than
  /// the comparison).
  public func firstPathSegmentIsOne(of words: [[UInt8]]) -> Bool {
    withUTF8Bytes { bytes in
      guard !bytes.isEmpty else { return words.contains { $0.isEmpty } }
      let rest = UnsafeBufferPointer(rebasing: bytes[1...])
      let segment = UnsafeBufferPointer(rebasing: rest[..<(rest.firstIndex(of: UInt8(ascii: "/")) ?? rest.count)])
      return words.contains { $0.count == segment.count && $0.withUnsafeBufferPointer { segment.holds($0, at: 0) } }
    }
  }

  /// The text after the first byte up to the next `/` (or the end): a path's first segment.
  public var firstPathSegment: Substring {
    guard !isEmpty else { return self }
    let slash = withUTF8Bytes { bytes in
      UnsafeBufferPointer(rebasing: bytes[1...]).firstIndex(of: UInt8(ascii: "/")).map { $0 + 1 } ?? bytes.count
    }
    let start = utf8.startIndex
    return self[utf8.index(after: start)..<utf8.index(start, offsetBy: slash)]
  }
}

extension UnsafeBufferPointer<UInt8> {
  /// Whether `wanted`'s bytes are these from `offset` on (the caller knows they fit).
  public func holds(_ wanted: UnsafeBufferPointer<UInt8>, at offset: Int) -> Bool {
    var index = 0
    while index < wanted.count {
      if self[offset + index] != wanted[index] { return false }
      index += 1
    }
    return true
  }
}
