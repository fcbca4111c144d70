/// The one parser for decimal integers a client sends (Content-Length, Content-Range, Range,
/// upload offsets, generations, preconditions, maxResults…): ASCII digits only, an optional
/// leading `-` where negatives make sense, every step overflow-checked, so no value a client
/// sends can trap. Callers turn the outcome into the status their header calls for.
public enum DecimalInteger {
  public enum Failure: Error, Sendable, Equatable {
    /// Not an integer: empty, a sign where none is allowed, `+`, spaces, or another character.
    case malformed
    /// Digits only, but outside `Int64` (or outside the caller's range).
    case outOfRange
  }

  /// Parses `text` as a whole; `allowNegative` admits one leading `-`. The value must lie in
  /// `range` (which defaults to everything an Int64 holds).
  public static func parse(
    _ text: some StringProtocol, allowNegative: Bool = false, in range: ClosedRange<Int64> = Int64.min...Int64.max
  ) -> Result<Int64, Failure> {
    var bytes = text.utf8[...]
    var negative = false
    if allowNegative, bytes.first == UInt8(ascii: "-") {
      negative = true
      bytes = bytes.dropFirst()
    }
    guard !bytes.isEmpty else { return .failure(.malformed) }
    var value: Int64 = 0
    var overflowed = false
    for byte in bytes {
      guard byte >= 48 && byte <= 57 else { return .failure(.malformed) }
      if overflowed { continue }  // keep checking the rest is digits
      let digit = Int64(byte - 48)
      let (times10, o1) = value.multipliedReportingOverflow(by: 10)
      // Accumulate negatively so that Int64.min parses too.
      let (next, o2) = negative ? times10.subtractingReportingOverflow(digit) : times10.addingReportingOverflow(digit)
      if o1 || o2 { overflowed = true } else { value = next }
    }
    if overflowed || !range.contains(value) { return .failure(.outOfRange) }
    return .success(value)
  }

  /// `parse`, nil on any failure (for callers with one error message for both kinds).
  public static func value(
    _ text: some StringProtocol, allowNegative: Bool = false, in range: ClosedRange<Int64> = Int64.min...Int64.max
  ) -> Int64? {
    try? parse(text, allowNegative: allowNegative, in: range).get()
  }
}
