import EmulatorSupport

/// Timestamps (UTC, years 1...9999, nanosecond precision) and durations.
enum RulesTime {
  static let minSeconds: Int64 = -62_135_596_800  // 0001-01-01T00:00:00Z
  static let maxSeconds: Int64 = 253_402_300_799  // 9999-12-31T23:59:59Z
  static let nanosPerSecond: Int64 = 1_000_000_000

  /// Normalises seconds + nanos (nanos in 0..<1e9), checked.
  static func normalise(_ seconds: Int64, _ nanos: Int64) throws(RulesFailure) -> (Int64, Int64) {
    var s = seconds
    var n = nanos
    let carry = n / nanosPerSecond
    n -= carry * nanosPerSecond
    let (sum, overflow) = s.addingReportingOverflow(carry)
    if overflow { throw RulesFailure("time overflow") }
    s = sum
    if n < 0 {
      n += nanosPerSecond
      s -= 1
    }
    return (s, n)
  }

  static func timestamp(seconds: Int64, nanos: Int64, plusSeconds: Int64, plusNanos: Int64) throws(RulesFailure)
    -> RulesValue
  {
    let (total, overflow) = seconds.addingReportingOverflow(plusSeconds)
    if overflow { throw RulesFailure("timestamp overflow") }
    let (s, n) = try normalise(total, nanos + plusNanos)
    guard s >= minSeconds && s <= maxSeconds else { throw RulesFailure("timestamp out of range (years 1 to 9999)") }
    return .timestamp(seconds: s, nanos: Int32(n))
  }

  /// A duration from a sum; seconds and nanos end with the same sign.
  static func duration(seconds: Int64, nanos: Int64, plusSeconds: Int64, plusNanos: Int64) throws(RulesFailure)
    -> RulesValue
  {
    let (total, overflow) = seconds.addingReportingOverflow(plusSeconds)
    if overflow { throw RulesFailure("duration overflow") }
    var (s, n) = try normalise(total, nanos + plusNanos)
    if s < 0 && n > 0 {
      s += 1
      n -= nanosPerSecond
    }
    guard s.magnitude <= 315_576_000_000 else { throw RulesFailure("duration out of range") }
    return .duration(seconds: s, nanos: Int32(n))
  }

  /// Days since 1970-01-01 to (year, month, day), proleptic Gregorian.
  static func civil(days: Int64) -> (year: Int64, month: Int64, day: Int64) { CivilDate.civil(days: days) }

  static func days(year: Int64, month: Int64, day: Int64) -> Int64 {
    CivilDate.days(year: year, month: month, day: day)
  }

  static func isLeap(_ year: Int64) -> Bool { year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) }

  static func daysIn(month: Int64, year: Int64) -> Int64 {
    [31, isLeap(year) ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][Int(month - 1)]
  }

  static func date(_ year: Int64, _ month: Int64, _ day: Int64) throws(RulesFailure) -> RulesValue {
    guard (1...9999).contains(year), (1...12).contains(month), (1...daysIn(month: month, year: year)).contains(day)
    else {
      throw RulesFailure("\(year)-\(month)-\(day) is not a date")
    }
    return .timestamp(seconds: days(year: year, month: month, day: day) * 86_400, nanos: 0)
  }

  static func floorDivide(_ a: Int64, _ b: Int64) -> Int64 { a >= 0 ? a / b : -((-a + b - 1) / b) }

  static func method(_ seconds: Int64, _ nanos: Int32, _ name: String) throws(RulesFailure) -> RulesValue {
    let dayNumber = floorDivide(seconds, 86_400)
    let secondOfDay = seconds - dayNumber * 86_400
    let (year, month, day) = civil(days: dayNumber)
    switch name {
    case "year": return .int(year)
    case "month": return .int(month)
    case "day": return .int(day)
    case "hours": return .int(secondOfDay / 3600)
    case "minutes": return .int(secondOfDay / 60 % 60)
    case "seconds": return .int(secondOfDay % 60)
    case "nanos": return .int(Int64(nanos))
    // 1 is Monday ... 7 is Sunday; 1970-01-01 was a Thursday.
    case "dayOfWeek": return .int((dayNumber % 7 + 7 + 3) % 7 + 1)
    case "dayOfYear": return .int(dayNumber - days(year: year, month: 1, day: 1) + 1)
    case "date": return .timestamp(seconds: dayNumber * 86_400, nanos: 0)
    case "time": return .duration(seconds: secondOfDay, nanos: nanos)
    case "toMillis": return .int(seconds * 1000 + Int64(nanos) / 1_000_000)
    default: throw RulesFailure("timestamp has no method '\(name)'")
    }
  }

  /// `duration.value(n, unit)`: w, d, h, m, s, ms, ns.
  static func durationValue(_ amount: Int64, _ unit: String) throws(RulesFailure) -> RulesValue {
    let multipliers: [String: Int64] = [
      "w": 604_800 * nanosPerSecond, "d": 86_400 * nanosPerSecond, "h": 3600 * nanosPerSecond,
      "m": 60 * nanosPerSecond, "s": nanosPerSecond, "ms": 1_000_000, "ns": 1,
    ]
    guard let multiplier = multipliers[unit] else {
      throw RulesFailure("'\(unit)' is not a duration unit (w, d, h, m, s, ms, ns)")
    }
    let perSecond = nanosPerSecond / min(multiplier, nanosPerSecond)
    if multiplier >= nanosPerSecond {
      let (seconds, overflow) = amount.multipliedReportingOverflow(by: multiplier / nanosPerSecond)
      if overflow { throw RulesFailure("duration overflow") }
      return try duration(seconds: seconds, nanos: 0, plusSeconds: 0, plusNanos: 0)
    }
    return try duration(
      seconds: amount / perSecond, nanos: (amount % perSecond) * multiplier, plusSeconds: 0, plusNanos: 0)
  }

  static func durationMethod(_ seconds: Int64, _ nanos: Int32, _ name: String) throws(RulesFailure) -> RulesValue {
    switch name {
    case "seconds": return .int(seconds)
    case "nanos": return .int(Int64(nanos))
    default: throw RulesFailure("duration has no method '\(name)'")
    }
  }
}
