/// `Content-Range` as a resumable upload chunk carries it (RFC 9110 §14.4, GCS resumable
/// uploads): `bytes F-L/T`, `bytes F-L/*`, `bytes */T`, `bytes */*`. Every number goes through
/// `DecimalInteger`, and `L` must stay below `Int64.max`, so `end` (and the chunk's length) can
/// never overflow.
public struct ContentRange: Sendable, Equatable {
  /// The chunk's bytes `[first, end)`; nil for a status query (`bytes */…`).
  public var bytes: Range<Int64>?
  /// The object's total size; nil for `*` (not known yet).
  public var total: Int64?

  public init(bytes: Range<Int64>?, total: Int64?) {
    self.bytes = bytes
    self.total = total
  }

  public enum ParseError: Error, Sendable, Equatable {
    /// Not `bytes F-L/T` in any of its forms, or `L < F`.
    case malformed
    /// A number beyond what a byte offset can be.
    case outOfRange
  }

  public static func parse(_ header: String) -> Result<ContentRange, ParseError> {
    let text = header.trimmingASCIIWhitespace()
    let utf8 = Array(text.utf8)
    guard utf8.count > 6, utf8[0..<6].map({ $0 | 0x20 }) == Array("bytes ".utf8),
      let slash = utf8.firstIndex(of: UInt8(ascii: "/"))
    else { return .failure(.malformed) }
    let rangeText = String(decoding: utf8[6..<slash], as: UTF8.self).trimmingASCIIWhitespace()
    let totalText = String(decoding: utf8[(slash + 1)...], as: UTF8.self).trimmingASCIIWhitespace()
    var total: Int64?
    if totalText != "*" {
      switch DecimalInteger.parse(totalText) {
      case .success(let value): total = value
      case .failure(let failure): return .failure(failure == .outOfRange ? .outOfRange : .malformed)
      }
    }
    if rangeText == "*" { return .success(ContentRange(bytes: nil, total: total)) }
    let bounds = rangeText.split(separator: "-", maxSplits: 1, omittingEmptySubsequences: false)
    guard bounds.count == 2 else { return .failure(.malformed) }
    let first: Int64
    let last: Int64
    switch (DecimalInteger.parse(bounds[0]), DecimalInteger.parse(bounds[1])) {
    case (.success(let a), .success(let b)): (first, last) = (a, b)
    case (.failure(.malformed), _), (_, .failure(.malformed)): return .failure(.malformed)
    default: return .failure(.outOfRange)
    }
    guard last >= first else { return .failure(.malformed) }
    guard last < Int64.max else { return .failure(.outOfRange) }
    return .success(ContentRange(bytes: first..<(last + 1), total: total))
  }
}

/// One byte range of a `Range: bytes=…` request header (RFC 9110 §14.1.2). Numbers too large
/// for an Int64 saturate (a first byte past any object is simply unsatisfiable; a last byte or
/// suffix past it means "to the end"), so no value traps.
public struct ByteRange: Sendable, Equatable {
  public var first: Int64?
  /// The last byte (inclusive), or with `first == nil` the suffix length.
  public var last: Int64?

  public init(first: Int64?, last: Int64?) {
    self.first = first
    self.last = last
  }

  /// Inclusive bounds within `size`, or nil when unsatisfiable.
  public func resolve(size: Int64) -> (first: Int64, last: Int64)? {
    guard size > 0 else { return nil }
    if let first {
      guard first < size else { return nil }
      return (first, min(last ?? size - 1, size - 1))
    }
    guard let suffix = last, suffix > 0 else { return nil }
    return (size - min(suffix, size), size - 1)
  }

  /// A single range; nil (serve the whole object) for anything else, as RFC 9110 lets a server
  /// ignore a Range it does not support.
  public static func parse(_ header: String) -> ByteRange? {
    let trimmed = header.trimmingASCIIWhitespace()
    guard trimmed.utf8.count >= 6, trimmed.lowercased().hasPrefix("bytes=") else { return nil }
    let spec = trimmed.dropFirst(6)
    guard !spec.contains(","), let dash = spec.firstIndex(of: "-") else { return nil }
    let firstText = spec[..<dash].trimmingASCIIWhitespace()
    let lastText = spec[spec.index(after: dash)...].trimmingASCIIWhitespace()
    func number(_ text: Substring) -> Int64? {
      switch DecimalInteger.parse(text) {
      case .success(let value): value
      case .failure(.outOfRange): Int64.max
      case .failure(.malformed): nil
      }
    }
    if firstText.isEmpty {
      guard let suffix = number(lastText) else { return nil }
      return ByteRange(first: nil, last: suffix)
    }
    guard let first = number(firstText) else { return nil }
    if lastText.isEmpty { return ByteRange(first: first, last: nil) }
    guard let last = number(lastText), last >= first else { return nil }
    return ByteRange(first: first, last: last)
  }
}
