/// A failed operation, before it is given a place in the source.
struct RulesFailure: Error {
  var message: String
  init(_ message: String) { self.message = message }
}

/// Arithmetic, comparison, membership, indexing and ranges.
enum RulesOperators {
  static func binary(_ op: String, _ a: RulesValue, _ b: RulesValue) throws(RulesFailure) -> RulesValue {
    switch op {
    case "==": return .bool(a.rulesEquals(b))
    case "!=": return .bool(!a.rulesEquals(b))
    case "<", "<=", ">", ">=":
      let order = try compare(a, b)
      switch op {
      case "<": return .bool(order < 0)
      case "<=": return .bool(order <= 0)
      case ">": return .bool(order > 0)
      default: return .bool(order >= 0)
      }
    case "in": return .bool(try contains(b, a))
    case "+": return try add(a, b)
    case "-": return try subtract(a, b)
    case "*", "/", "%": return try multiplicative(op, a, b)
    default: throw RulesFailure("unknown operator '\(op)'")
    }
  }

  /// -1, 0 or 1; NaN compares as an error.
  static func compare(_ a: RulesValue, _ b: RulesValue) throws(RulesFailure) -> Int {
    func order<T: Comparable>(_ x: T, _ y: T) -> Int { x < y ? -1 : (x == y ? 0 : 1) }
    switch (a, b) {
    case (.int(let x), .int(let y)): return order(x, y)
    case (.int, .float), (.float, .int), (.float, .float):
      let x = a.doubleValue!
      let y = b.doubleValue!
      guard !x.isNaN && !y.isNaN else { throw RulesFailure("NaN cannot be compared") }
      return order(x, y)
    case (.string(let x), .string(let y)):
      return lexicographic(x.unicodeScalars.lazy.map(\.value), y.unicodeScalars.lazy.map(\.value))
    case (.bytes(let x), .bytes(let y)): return lexicographic(x, y)
    case (.timestamp(let s1, let n1), .timestamp(let s2, let n2)): return s1 != s2 ? order(s1, s2) : order(n1, n2)
    case (.duration(let s1, let n1), .duration(let s2, let n2)): return s1 != s2 ? order(s1, s2) : order(n1, n2)
    case (.bool(let x), .bool(let y)): return order(x ? 1 : 0, y ? 1 : 0)
    default: throw RulesFailure("\(a.typeName) and \(b.typeName) cannot be compared")
    }
  }

  static func lexicographic<S: Sequence>(_ x: S, _ y: S) -> Int where S.Element: Comparable {
    if x.elementsEqual(y) { return 0 }
    return x.lexicographicallyPrecedes(y) ? -1 : 1
  }

  static func contains(_ collection: RulesValue, _ element: RulesValue) throws(RulesFailure) -> Bool {
    switch collection {
    case .list(let values), .set(let values): return values.contains { $0.rulesEquals(element) }
    case .map(let map):
      guard case .string(let key) = element else { return false }
      return map[key] != nil
    default: throw RulesFailure("'in' needs a list, set or map on its right, not \(collection.typeName)")
    }
  }

  static func checkedSize(_ count: Int) throws(RulesFailure) {
    if count > RulesEvaluator.maxValueSize { throw RulesFailure("the value would be larger than 1 MiB") }
  }

  /// An arithmetic operator on two numbers: overflow-checked on two ints, floating point when
  /// either is a float; nil when either is not a number.
  static func arithmetic(
    _ op: String, _ a: RulesValue, _ b: RulesValue, _ integer: (Int64, Int64) -> (partialValue: Int64, overflow: Bool),
    _ float: (Double, Double) -> Double
  ) throws(RulesFailure) -> RulesValue? {
    switch (a, b) {
    case (.int(let x), .int(let y)):
      let (result, overflow) = integer(x, y)
      if overflow { throw RulesFailure("integer overflow in \(op)") }
      return .int(result)
    case (.int, .float), (.float, .int), (.float, .float): return .float(float(a.doubleValue!, b.doubleValue!))
    default: return nil
    }
  }

  static func add(_ a: RulesValue, _ b: RulesValue) throws(RulesFailure) -> RulesValue {
    if let sum = try arithmetic("+", a, b, { $0.addingReportingOverflow($1) }, +) { return sum }
    switch (a, b) {
    case (.string(let x), .string(let y)):
      try checkedSize(x.utf8.count + y.utf8.count)
      return .string(x + y)
    case (.bytes(let x), .bytes(let y)):
      try checkedSize(x.count + y.count)
      return .bytes(x + y)
    case (.list(let x), .list(let y)):
      try checkedSize(x.count + y.count)
      return .list(x + y)
    case (.timestamp(let s, let n), .duration(let ds, let dn)), (.duration(let ds, let dn), .timestamp(let s, let n)):
      return try RulesTime.timestamp(seconds: s, nanos: Int64(n), plusSeconds: ds, plusNanos: Int64(dn))
    case (.duration(let s1, let n1), .duration(let s2, let n2)):
      return try RulesTime.duration(seconds: s1, nanos: Int64(n1), plusSeconds: s2, plusNanos: Int64(n2))
    default: throw RulesFailure("'+' does not apply to \(a.typeName) and \(b.typeName)")
    }
  }

  static func subtract(_ a: RulesValue, _ b: RulesValue) throws(RulesFailure) -> RulesValue {
    if let difference = try arithmetic("-", a, b, { $0.subtractingReportingOverflow($1) }, -) { return difference }
    switch (a, b) {
    case (.timestamp(let s, let n), .duration(let ds, let dn)):
      return try RulesTime.timestamp(seconds: s, nanos: Int64(n), plusSeconds: 0 &- ds, plusNanos: -Int64(dn))
    case (.timestamp(let s1, let n1), .timestamp(let s2, let n2)):
      return try RulesTime.duration(seconds: s1, nanos: Int64(n1), plusSeconds: 0 &- s2, plusNanos: -Int64(n2))
    case (.duration(let s1, let n1), .duration(let s2, let n2)):
      return try RulesTime.duration(seconds: s1, nanos: Int64(n1), plusSeconds: 0 &- s2, plusNanos: -Int64(n2))
    case (.set(let x), .set(let y)): return .set(x.filter { element in !y.contains { $0.rulesEquals(element) } })
    default: throw RulesFailure("'-' does not apply to \(a.typeName) and \(b.typeName)")
    }
  }

  static func multiplicative(_ op: String, _ a: RulesValue, _ b: RulesValue) throws(RulesFailure) -> RulesValue {
    if op == "*", let product = try arithmetic(op, a, b, { $0.multipliedReportingOverflow(by: $1) }, *) {
      return product
    }
    switch (a, b) {
    case (.int(let x), .int(let y)) where op != "*":
      guard y != 0 else { throw RulesFailure("division by zero") }
      guard !(x == .min && y == -1) else { throw RulesFailure("integer overflow in \(op)") }
      return .int(op == "/" ? x / y : x % y)
    case (.int, .float), (.float, .int), (.float, .float):
      let x = a.doubleValue!
      let y = b.doubleValue!
      return .float(op == "/" ? x / y : x.truncatingRemainder(dividingBy: y))
    default: throw RulesFailure("'\(op)' does not apply to \(a.typeName) and \(b.typeName)")
    }
  }

  static func index(_ value: RulesValue, _ index: RulesValue) throws(RulesFailure) -> RulesValue {
    switch (value, index) {
    case (.list(let values), .int(let position)):
      guard position >= 0 && position < values.count else {
        throw RulesFailure("index \(position) is out of range for a list of \(values.count)")
      }
      return values[Int(position)]
    case (.path(let segments), .int(let position)):
      guard position >= 0 && position < segments.count else {
        throw RulesFailure("index \(position) is out of range for a path of \(segments.count) segments")
      }
      return .string(segments[Int(position)])
    case (.string(let text), .int(let position)):
      let scalars = Array(text.unicodeScalars)
      guard position >= 0 && position < scalars.count else {
        throw RulesFailure("index \(position) is out of range for a string of \(scalars.count)")
      }
      return .string(String(scalars[Int(position)]))
    case (.map(let map), .string(let key)):
      if let member = map[key] { return member }
      throw RulesFailure("the map has no key '\(key)'")
    default:
      throw RulesFailure("\(value.typeName) cannot be indexed by \(index.typeName)")
    }
  }

  /// `x[a:b]` for lists, strings and paths; `a` defaults to 0 and `b` to the size.
  static func range(_ value: RulesValue, _ start: RulesValue?, _ end: RulesValue?) throws(RulesFailure)
    -> RulesValue
  {
    func bounds(_ count: Int) throws(RulesFailure) -> Range<Int> {
      var lower = 0
      var upper = count
      if let start {
        guard case .int(let value) = start else { throw RulesFailure("a range bound must be an int") }
        guard value >= 0 && value <= count else { throw RulesFailure("range start \(value) is out of bounds") }
        lower = Int(value)
      }
      if let end {
        guard case .int(let value) = end else { throw RulesFailure("a range bound must be an int") }
        guard value >= 0 && value <= count else { throw RulesFailure("range end \(value) is out of bounds") }
        upper = Int(value)
      }
      guard lower <= upper else { throw RulesFailure("range start \(lower) is after its end \(upper)") }
      return lower..<upper
    }
    switch value {
    case .list(let values): return .list(Array(values[try bounds(values.count)]))
    case .path(let segments): return .path(Array(segments[try bounds(segments.count)]))
    case .string(let text):
      let scalars = Array(text.unicodeScalars)
      var result = ""
      result.unicodeScalars.append(contentsOf: scalars[try bounds(scalars.count)])
      return .string(result)
    default: throw RulesFailure("\(value.typeName) has no ranges")
    }
  }
}

extension RulesValue {
  var doubleValue: Double? {
    switch self {
    case .int(let value): Double(value)
    case .float(let value): value
    default: nil
    }
  }
}
