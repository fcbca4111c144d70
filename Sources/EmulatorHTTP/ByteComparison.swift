/// Byte comparisons of request text (paths, header names) with known words, over the contiguous
/// UTF-8 both sides have (request text is native, the words literals): one `memcmp`-like loop
/// instead of the per-byte index work of the generic collection algorithms. Text that is not
/// contiguous (bridged) takes the generic path, with the same answers.
extension Substring {
  /// Whether the UTF-8 bytes begin with `prefix`'s.
  public func utf8HasPrefix(_ prefix: String) -> Bool {
    var prefix = prefix
    return prefix.withUTF8 { wanted in
      utf8.withContiguousStorageIfAvailable { bytes in
        bytes.count >= wanted.count && Self.same(bytes, 0, wanted)
      } ?? utf8.starts(with: wanted)
    }
  }

  /// Whether the UTF-8 bytes end with `suffix`'s.
  public func utf8HasSuffix(_ suffix: String) -> Bool {
    var suffix = suffix
    return suffix.withUTF8 { wanted in
      utf8.withContiguousStorageIfAvailable { bytes in
        bytes.count >= wanted.count && Self.same(bytes, bytes.count - wanted.count, wanted)
      } ?? utf8.reversed().starts(with: wanted.reversed())
    }
  }

  /// Whether the UTF-8 bytes are `other`'s.
  public func utf8Equals(_ other: String) -> Bool {
    var other = other
    return other.withUTF8 { wanted in
      utf8.withContiguousStorageIfAvailable { bytes in
        bytes.count == wanted.count && Self.same(bytes, 0, wanted)
      } ?? utf8.elementsEqual(wanted)
    }
  }

  /// Whether the UTF-8 bytes are those of one of `words`: one access to the contiguous bytes for
  /// all of them, a length check before any byte (a path's first segment against a word list).
  public func utf8IsOne(of words: [[UInt8]]) -> Bool {
    func check(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
      words.contains { $0.count == bytes.count && $0.withUnsafeBufferPointer { Self.same(bytes, 0, $0) } }
    }
    return utf8.withContiguousStorageIfAvailable(check) ?? Array(utf8).withUnsafeBufferPointer(check)
  }

  private static func same(
    _ bytes: UnsafeBufferPointer<UInt8>, _ offset: Int, _ wanted: UnsafeBufferPointer<UInt8>
  ) -> Bool {
    var index = 0
    while index < wanted.count {
      if bytes[offset + index] != wanted[index] { return false }
      index += 1
    }
    return true
  }
}

extension String {
  /// Whether any byte is an ASCII upper-case letter.
  var hasASCIIUppercase: Bool {
    func upper(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") }
    return utf8.withContiguousStorageIfAvailable { $0.contains(where: upper) } ?? utf8.contains(where: upper)
  }
}

extension Substring {
  /// The text after the first byte up to the next `/` (or the end): a path's first segment.
  public var firstPathSegment: Substring {
    guard !isEmpty else { return self }
    let rest = utf8.index(after: utf8.startIndex)
    let slash: Int? = utf8.withContiguousStorageIfAvailable { bytes in
      bytes[1...].firstIndex(of: UInt8(ascii: "/"))
    } ?? utf8[rest...].firstIndex(of: UInt8(ascii: "/")).map { utf8.distance(from: utf8.startIndex, to: $0) }
    let end = slash.map { utf8.index(utf8.startIndex, offsetBy: $0) } ?? utf8.endIndex
    return self[rest..<end]
  }
}
