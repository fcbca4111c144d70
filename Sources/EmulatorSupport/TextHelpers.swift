/// The few text operations the server took from full Foundation (`String(format:)`,
/// `trimmingCharacters(in:)`, `NSString`'s path methods), written here so its modules need only
/// FoundationEssentials. Each behaves as the Foundation call it replaces for the inputs the
/// server passes (tests compare them with Foundation's).
public enum DecimalText {
  /// `value` with `digits` digits after the point, as C's `"%.<digits>f"` writes it: rounded
  /// from the exact binary value, ties to even (0.015 is 0.01499… in binary, so `"0.01"`); `nan`,
  /// `inf`, `-inf`. Magnitudes of 4e15 and more once scaled fall back to Swift's own rendering
  /// (the server formats durations, sizes and uptimes).
  public static func fixed(_ value: Double, digits: Int) -> String {
    precondition((0...9).contains(digits), "fixed(_:digits:) takes 0...9 digits")
    if value.isNaN { return "nan" }
    if value.isInfinite { return value < 0 ? "-inf" : "inf" }
    var scale: Int64 = 1
    for _ in 0..<digits { scale *= 10 }
    let product = value.magnitude * Double(scale)
    guard product < 4e15 else { return "\(value)" }
    // The product's rounding error, exactly (a fused multiply-add): the exact scaled value is
    // product + residual. Below 2^52 the fraction's distance from one half is a multiple of the
    // product's ulp, larger than the residual unless it is zero.
    let residual = (-product).addingProduct(value.magnitude, Double(scale))
    let whole = product.rounded(.down)
    let aboveHalf = (product - whole) - 0.5
    var units = Int64(whole)
    if aboveHalf > 0 || (aboveHalf == 0 && (residual > 0 || (residual == 0 && units % 2 == 1))) {
      units += 1
    }
    let sign = value.sign == .minus ? "-" : ""
    let integral = String(units / scale)
    guard digits > 0 else { return sign + integral }
    let fraction = String(units % scale)
    return sign + integral + "." + String(repeating: "0", count: digits - fraction.count) + fraction
  }
}

extension Hex {
  /// Lower-case hexadecimal of `value`, left-padded with zeros to `width` digits (`"%08x"`).
  public static func padded(_ value: some BinaryInteger, width: Int) -> String {
    let digits = String(value, radix: 16)
    return String(repeating: "0", count: max(0, width - digits.count)) + digits
  }
}

extension StringProtocol {
  /// Without leading and trailing white space as `CharacterSet.whitespaces` has it: U+0009 and
  /// the space separators (Unicode category Zs).
  public func trimmingWhitespace() -> String {
    trimmingScalars(where: UnicodeScalarClass.isWhitespace)
  }

  /// Without leading and trailing white space and line breaks, as
  /// `CharacterSet.whitespacesAndNewlines` has them: those of `trimmingWhitespace` and U+000A to
  /// U+000D, U+0085, U+2028, U+2029.
  public func trimmingWhitespaceAndNewlines() -> String {
    trimmingScalars(where: { UnicodeScalarClass.isWhitespace($0) || UnicodeScalarClass.isNewline($0) })
  }

  /// Without the leading and trailing scalars that `matches`; scalar by scalar, as Foundation
  /// trims (a combining mark after a trimmed space stays).
  public func trimmingScalars(where matches: (Unicode.Scalar) -> Bool) -> String {
    let scalars = String(self).unicodeScalars
    var start = scalars.startIndex
    var end = scalars.endIndex
    while start < end, matches(scalars[start]) { start = scalars.index(after: start) }
    while end > start, matches(scalars[scalars.index(before: end)]) { end = scalars.index(before: end) }
    return String(scalars[start..<end])
  }
}

/// The scalar classes of `CharacterSet.whitespaces` and `.newlines`.
public enum UnicodeScalarClass {
  public static func isWhitespace(_ scalar: Unicode.Scalar) -> Bool {
    scalar == "\t" || scalar.properties.generalCategory == .spaceSeparator
  }

  public static func isNewline(_ scalar: Unicode.Scalar) -> Bool {
    (0x0A...0x0D).contains(scalar.value) || scalar.value == 0x85 || scalar.value == 0x2028 || scalar.value == 0x2029
  }
}

/// `NSString`'s `lastPathComponent` and `deletingLastPathComponent` for `/`-separated paths.
public enum PathText {
  /// The part after the last `/` (trailing slashes ignored): `a/b` → `b`, `/a/b/` → `b`,
  /// `/` → `/`, `b` → `b`.
  public static func lastComponent(_ path: String) -> String {
    let trimmed = trailingSlashesRemoved(path)
    if trimmed.isEmpty { return path.isEmpty ? "" : "/" }
    guard let slash = trimmed.lastIndex(of: "/") else { return String(trimmed) }
    return String(trimmed[trimmed.index(after: slash)...])
  }

  /// The path without its last component: `/a/b` → `/a`, `/a/b/` → `/a`, `/a` → `/`, `/` → `/`,
  /// `b` → `` (empty).
  public static func parent(_ path: String) -> String {
    let trimmed = trailingSlashesRemoved(path)
    if trimmed.isEmpty { return path.isEmpty ? "" : "/" }
    guard let slash = trimmed.lastIndex(of: "/") else { return "" }
    let rest = trailingSlashesRemoved(trimmed[..<slash])
    return rest.isEmpty ? "/" : String(rest)
  }

  private static func trailingSlashesRemoved(_ path: some StringProtocol) -> Substring {
    var text = Substring(path)
    while text.last == "/" { text = text.dropLast() }
    return text
  }
}

extension String {
  /// `String(validating:as: UTF8.self)` without its generic path's cost (~900 instructions a
  /// call, on every JSON string and decoded name): ASCII text, nearly all of it, is checked eight
  /// bytes at a time and copied as it is; anything else is validated the standard way. Nil when
  /// the bytes are not UTF-8.
  public static func validatingUTF8(_ bytes: UnsafeBufferPointer<UInt8>) -> String? {
    if isASCII(bytes) { return String(decoding: bytes, as: UTF8.self) }
    return String(validating: bytes, as: UTF8.self)
  }

  public static func validatingUTF8(_ bytes: [UInt8]) -> String? {
    bytes.withUnsafeBufferPointer { validatingUTF8($0) }
  }

  /// Whether no byte has its high bit set.
  static func isASCII(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
    guard let base = bytes.baseAddress else { return true }
    let raw = UnsafeRawPointer(base)
    var index = 0
    var high: UInt64 = 0
    while index + 8 <= bytes.count {
      high |= raw.loadUnaligned(fromByteOffset: index, as: UInt64.self)
      index += 8
    }
    while index < bytes.count {
      high |= UInt64(bytes[index])
      index += 1
    }
    return high & 0x8080_8080_8080_8080 == 0
  }
}
