#if canImport(Crypto)
  import Crypto
#endif

/// Global functions (`int(x)`, `string(x)`...), namespaced ones (`math.abs`, `timestamp.date`...)
/// and the methods of each type.
enum RulesFunctions {
  /// Extra steps a method call on this receiver is charged (collections cost their size).
  static func cost(of value: RulesValue) -> Int {
    switch value {
    case .list(let values), .set(let values): values.count / 8
    case .map(let map): map.count / 8
    case .string(let text): text.utf8.count / 64
    case .bytes(let bytes): bytes.count / 64
    default: 0
    }
  }

  static func arity(_ name: String, _ arguments: [RulesValue], _ count: Int) throws(RulesFailure) {
    guard arguments.count == count else {
      throw RulesFailure("\(name)() takes \(count) argument\(count == 1 ? "" : "s"), not \(arguments.count)")
    }
  }

  /// `int()` and `float()`: a string is parsed by `parse`, an int or float converted by `convert`;
  /// anything else, or what they refuse (nil), is an error naming the value.
  static func numeric(
    _ name: String, _ arguments: [RulesValue], parse: (String) -> RulesValue?,
    convert: (RulesValue) -> RulesValue?
  ) throws(RulesFailure) -> RulesValue {
    try arity(name, arguments, 1)
    let argument = arguments[0]
    switch argument {
    case .string(let text):
      if let value = parse(text) { return value }
      throw RulesFailure("\(name)() cannot convert '\(text.prefix(40))'")
    case .int, .float:
      if let value = convert(argument) { return value }
      throw RulesFailure("\(name)() cannot convert \(argument.doubleValue ?? 0)")
    default:
      throw RulesFailure("\(name)() cannot convert \(argument.typeName)")
    }
  }

  static func global(_ name: String, _ arguments: [RulesValue]) throws(RulesFailure) -> RulesValue {
    switch name {
    case "string":
      try arity(name, arguments, 1)
      switch arguments[0] {
      case .string(let text): return .string(text)
      case .int(let value): return .string(String(value))
      case .float(let value): return .string(String(value))
      case .bool(let value): return .string(value ? "true" : "false")
      case .null: return .string("null")
      case .path(let segments): return .string("/" + segments.joined(separator: "/"))
      case let other: throw RulesFailure("string() cannot convert \(other.typeName)")
      }
    case "int":
      return try numeric(name, arguments, parse: { Int64($0).map(RulesValue.int) }) { number in
        if case .int = number { return number }
        guard let value = number.doubleValue, value.isFinite else { return nil }
        return Int64(exactly: value.rounded(.towardZero)).map(RulesValue.int)
      }
    case "float":
      return try numeric(name, arguments, parse: { Double($0).map(RulesValue.float) }) { number in
        number.doubleValue.map(RulesValue.float)
      }
    case "path":
      try arity(name, arguments, 1)
      guard case .string(let text) = arguments[0] else { throw RulesFailure("path() needs a string") }
      return .path(text.split(separator: "/").map(String.init))
    case "debug":
      try arity(name, arguments, 1)
      return arguments[0]
    case "exists", "get", "existsAfter", "getAfter", "firestore":
      throw RulesFailure("\(name)() reads other services, which this emulator does not have")
    default:
      throw RulesFailure("there is no function '\(name)'")
    }
  }

  static func namespaced(_ namespace: String, _ name: String, _ arguments: [RulesValue]) throws(RulesFailure)
    -> RulesValue
  {
    let full = "\(namespace).\(name)"
    func int(_ index: Int) throws(RulesFailure) -> Int64 {
      guard case .int(let value) = arguments[index] else { throw RulesFailure("\(full)() needs int arguments") }
      return value
    }
    func number(_ index: Int) throws(RulesFailure) -> Double {
      guard let value = arguments[index].doubleValue else { throw RulesFailure("\(full)() needs a number") }
      return value
    }
    switch (namespace, name) {
    case ("math", "abs"):
      try arity(full, arguments, 1)
      if case .int(let value) = arguments[0] {
        guard value != .min else { throw RulesFailure("integer overflow in math.abs") }
        return .int(abs(value))
      }
      return .float(abs(try number(0)))
    case ("math", "ceil"), ("math", "floor"), ("math", "round"):
      try arity(full, arguments, 1)
      if case .int(let value) = arguments[0] { return .int(value) }
      let rule: FloatingPointRoundingRule =
        name == "ceil" ? .up : (name == "floor" ? .down : .toNearestOrAwayFromZero)
      let rounded = try number(0).rounded(rule)
      guard let converted = Int64(exactly: rounded) else { throw RulesFailure("\(full)() result does not fit an int") }
      return .int(converted)
    case ("math", "sqrt"):
      try arity(full, arguments, 1)
      return .float(try number(0).squareRoot())
    case ("math", "pow"):
      try arity(full, arguments, 2)
      return .float(RulesMath.pow(try number(0), try number(1)))
    case ("math", "isInfinite"):
      try arity(full, arguments, 1)
      return .bool(try number(0).isInfinite)
    case ("math", "isNaN"):
      try arity(full, arguments, 1)
      return .bool(try number(0).isNaN)
    case ("timestamp", "date"):
      try arity(full, arguments, 3)
      return try RulesTime.date(try int(0), try int(1), try int(2))
    case ("timestamp", "value"):
      try arity(full, arguments, 1)
      let milliseconds = try int(0)
      guard milliseconds / 1000 >= RulesTime.minSeconds && milliseconds / 1000 <= RulesTime.maxSeconds else {
        throw RulesFailure("timestamp.value(\(milliseconds)) is out of range")
      }
      return .timestamp(milliseconds: milliseconds)
    case ("duration", "value"):
      try arity(full, arguments, 2)
      guard case .string(let unit) = arguments[1] else { throw RulesFailure("duration.value() needs a unit string") }
      return try RulesTime.durationValue(try int(0), unit)
    case ("duration", "time"):
      try arity(full, arguments, 4)
      let (h, m, s, ns) = (try int(0), try int(1), try int(2), try int(3))
      guard abs(h) < 100_000_000, abs(m) < 100_000_000, abs(s) < 1_000_000_000_000 else {
        throw RulesFailure("duration.time() arguments are out of range")
      }
      return try RulesTime.duration(seconds: h * 3600 + m * 60 + s, nanos: 0, plusSeconds: 0, plusNanos: ns)
    case ("duration", "abs"):
      try arity(full, arguments, 1)
      guard case .duration(let seconds, let nanos) = arguments[0] else {
        throw RulesFailure("duration.abs() needs a duration")
      }
      return seconds < 0 || nanos < 0 ? .duration(seconds: 0 &- seconds, nanos: -nanos) : arguments[0]
    case ("latlng", "value"):
      try arity(full, arguments, 2)
      let (latitude, longitude) = (try number(0), try number(1))
      guard (-90...90).contains(latitude), (-180...180).contains(longitude) else {
        throw RulesFailure("latlng.value(\(latitude), \(longitude)) is out of range")
      }
      return .latlng(latitude: latitude, longitude: longitude)
    case ("hashing", "md5"), ("hashing", "sha256"), ("hashing", "crc32"), ("hashing", "crc32c"):
      try arity(full, arguments, 1)
      let bytes: [UInt8]
      switch arguments[0] {
      case .bytes(let value): bytes = value
      case .string(let text): bytes = Array(text.utf8)
      case let other: throw RulesFailure("\(full)() needs bytes or a string, not \(other.typeName)")
      }
      switch name {
      #if canImport(Crypto)
        case "md5": return .bytes(Array(Insecure.MD5.hash(data: bytes)))
        case "sha256": return .bytes(Array(SHA256.hash(data: bytes)))
      #else
        // The fuzz build compiles these sources alone, without swift-crypto.
        case "md5", "sha256": throw RulesFailure("\(full)() is not available in this build")
      #endif
      case "crc32": return .bytes(RulesMath.bigEndian(RulesMath.crc32(bytes, polynomial: 0xEDB8_8320)))
      default: return .bytes(RulesMath.bigEndian(RulesMath.crc32(bytes, polynomial: 0x82F6_3B78)))
      }
    case ("string", _):
      throw RulesFailure("there is no function '\(full)'")
    default:
      throw RulesFailure("there is no function '\(full)'")
    }
  }

  static func method(_ value: RulesValue, _ name: String, _ arguments: [RulesValue]) throws(RulesFailure)
    -> RulesValue
  {
    if name == "size", let size = value.size {
      try arity(name, arguments, 0)
      return .int(Int64(size))
    }
    switch value {
    case .string(let text): return try RulesStringMethods.call(text, name, arguments)
    case .list(let values): return try RulesCollectionMethods.list(values, name, arguments)
    case .set(let values): return try RulesCollectionMethods.set(values, name, arguments)
    case .map(let map): return try RulesCollectionMethods.map(map, name, arguments)
    case .mapDiff(let before, let after): return try RulesCollectionMethods.diff(before, after, name, arguments)
    case .bytes(let bytes):
      try arity(name, arguments, 0)
      switch name {
      case "toBase64": return .string(RulesMath.base64(bytes))
      case "toHexString": return .string(bytes.map { RulesMath.hex($0) }.joined())
      default: throw RulesFailure("bytes has no method '\(name)'")
      }
    case .timestamp(let seconds, let nanos):
      try arity(name, arguments, 0)
      return try RulesTime.method(seconds, nanos, name)
    case .duration(let seconds, let nanos):
      try arity(name, arguments, 0)
      return try RulesTime.durationMethod(seconds, nanos, name)
    case .latlng(let latitude, let longitude):
      switch name {
      case "latitude": return .float(latitude)
      case "longitude": return .float(longitude)
      case "distance":
        try arity(name, arguments, 1)
        guard case .latlng(let otherLatitude, let otherLongitude) = arguments[0] else {
          throw RulesFailure("distance() needs a latlng")
        }
        return .float(RulesMath.distance(latitude, longitude, otherLatitude, otherLongitude))
      default: throw RulesFailure("latlng has no method '\(name)'")
      }
    case .path:
      throw RulesFailure("path has no method '\(name)'")
    default:
      throw RulesFailure("\(value.typeName) has no method '\(name)'")
    }
  }
}
