import EmulatorSupport

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Times as milliseconds since the Unix epoch, rendered `YYYY-MM-DDTHH:MM:SS.sssZ`.
public enum Timestamp {
  public static func nowMicroseconds() -> Int64 {
    var spec = timespec()
    clock_gettime(CLOCK_REALTIME, &spec)
    return Int64(spec.tv_sec) * 1_000_000 + Int64(spec.tv_nsec) / 1000
  }

  public static func nowMilliseconds() -> Int64 { nowMicroseconds() / 1000 }

  /// RFC 3339 in UTC with exactly three fraction digits.
  public static func format(milliseconds: Int64) -> String {
    var bytes: [UInt8] = []
    bytes.reserveCapacity(24)
    append(milliseconds: milliseconds, to: &bytes)
    return String(decoding: bytes, as: UTF8.self)
  }

  /// `format`, written straight into a byte buffer (three per object of a listing: no
  /// allocation, no recursion).
  /// Written through a pointer into scratch room, then appended in one copy (an `append` per
  /// character cost ~20 instructions each, for five timestamps per object rendered).
  public static func append(milliseconds: Int64, to bytes: inout [UInt8]) {
    withUnsafeTemporaryAllocation(of: UInt8.self, capacity: maxBytes) { scratch in
      let count = write(milliseconds: milliseconds, to: scratch.baseAddress!)
      bytes.append(contentsOf: UnsafeBufferPointer(start: scratch.baseAddress, count: count))
    }
  }

  /// The longest rendering: a year of Int64's range of milliseconds (a sign and nine digits)
  /// and twenty more characters.
  static let maxBytes = 32

  /// `format`, written at `out` (room for `maxBytes`); returns how many bytes it wrote. Fixed
  /// widths are written two digits at a time with divisions by constants (a division by a
  /// variable power of ten per digit cost ~800 instructions a timestamp, three per object
  /// rendered); a year outside 0...9999 takes the general digit loop.
  static func write(milliseconds: Int64, to out: UnsafeMutablePointer<UInt8>) -> Int {
    let days = CivilDate.floorDivide(milliseconds, 86_400_000)
    let msOfDay = Int(milliseconds - days * 86_400_000)
    let (year, month, day) = CivilDate.civil(days: days)
    var count = 0
    func put(_ byte: UInt8) {
      out[count] = byte
      count += 1
    }
    /// `value` in 0...99 as two digits.
    func pair(_ value: Int) {
      let (tens, ones) = value.quotientAndRemainder(dividingBy: 10)
      out[count] = UInt8(truncatingIfNeeded: 48 + tens)
      out[count + 1] = UInt8(truncatingIfNeeded: 48 + ones)
      count += 2
    }
    if (0...9999).contains(year) {
      pair(Int(year) / 100)
      pair(Int(year) % 100)
    } else {
      // Before year 0 or after 9999 (never a real timestamp): the general formatter, sign and all.
      for byte in String(year).utf8 { put(byte) }
    }
    put(UInt8(ascii: "-"))
    pair(Int(month))
    put(UInt8(ascii: "-"))
    pair(Int(day))
    put(UInt8(ascii: "T"))
    pair(msOfDay / 3_600_000)
    put(UInt8(ascii: ":"))
    pair(msOfDay / 60_000 % 60)
    put(UInt8(ascii: ":"))
    pair(msOfDay / 1000 % 60)
    put(UInt8(ascii: "."))
    let millis = msOfDay % 1000
    put(UInt8(truncatingIfNeeded: 48 + millis / 100))
    pair(millis % 100)
    put(UInt8(ascii: "Z"))
    return count
  }

  /// Parses an RFC 3339 date-time (`2024-01-02T03:04:05Z`, any number of fraction digits, `Z` or
  /// a numeric offset). Returns milliseconds since the epoch, or nil.
  public static func parse(_ text: String) -> Int64? {
    let b = Array(text.utf8)
    func number(_ range: Range<Int>) -> Int64? {
      guard range.upperBound <= b.count else { return nil }
      var value: Int64 = 0
      for index in range {
        guard b[index] >= 48 && b[index] <= 57 else { return nil }
        value = value * 10 + Int64(b[index] - 48)
      }
      return value
    }
    guard b.count >= 20, b[4] == 45, b[7] == 45, b[10] == 84 || b[10] == 116, b[13] == 58, b[16] == 58,
      let year = number(0..<4), let month = number(5..<7), let day = number(8..<10),
      let hour = number(11..<13), let minute = number(14..<16), let second = number(17..<19),
      (1...12).contains(month), (1...31).contains(day), hour < 24, minute < 60, second < 61
    else { return nil }
    var index = 19
    var millis: Int64 = 0
    if b[index] == 46 {
      index += 1
      var digits = 0
      while index < b.count, b[index] >= 48 && b[index] <= 57 {
        if digits < 3 { millis = millis * 10 + Int64(b[index] - 48) }
        digits += 1
        index += 1
      }
      guard digits > 0 else { return nil }
      if digits < 3 { for _ in digits..<3 { millis *= 10 } }
    }
    guard index < b.count else { return nil }
    var offsetMinutes: Int64 = 0
    if b[index] == 90 || b[index] == 122 {
      index += 1
    } else if b[index] == 43 || b[index] == 45 {
      guard let oh = number(index + 1..<index + 3), index + 3 < b.count, b[index + 3] == 58,
        let om = number(index + 4..<index + 6)
      else { return nil }
      offsetMinutes = (oh * 60 + om) * (b[index] == 45 ? -1 : 1)
      index += 6
    } else {
      return nil
    }
    guard index == b.count else { return nil }
    let days = CivilDate.days(year: year, month: month, day: day)
    return ((days * 24 + hour) * 60 + minute - offsetMinutes) * 60_000 + second * 1000 + millis
  }
}
