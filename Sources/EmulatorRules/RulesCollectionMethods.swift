/// The methods of lists, sets, maps and map diffs (`size()` is `RulesFunctions.method`'s, for
/// every value with a size).
enum RulesCollectionMethods {
  static func elements(_ value: RulesValue, _ method: String) throws(RulesFailure) -> [RulesValue] {
    switch value {
    case .list(let values), .set(let values): return values
    default: throw RulesFailure("\(method)() needs a list or set, not \(value.typeName)")
    }
  }

  static func contains(_ values: [RulesValue], _ element: RulesValue) -> Bool {
    values.contains { $0.rulesEquals(element) }
  }

  static func distinct(_ values: [RulesValue]) -> [RulesValue] {
    var result: [RulesValue] = []
    for value in values where !contains(result, value) { result.append(value) }
    return result
  }

  /// What lists and sets share.
  static func common(_ values: [RulesValue], _ name: String, _ arguments: [RulesValue]) throws(RulesFailure)
    -> RulesValue?
  {
    switch name {
    case "hasAll":
      try RulesFunctions.arity(name, arguments, 1)
      return .bool(try elements(arguments[0], name).allSatisfy { contains(values, $0) })
    case "hasAny":
      try RulesFunctions.arity(name, arguments, 1)
      return .bool(try elements(arguments[0], name).contains { contains(values, $0) })
    case "hasOnly":
      try RulesFunctions.arity(name, arguments, 1)
      let allowed = try elements(arguments[0], name)
      return .bool(values.allSatisfy { contains(allowed, $0) })
    default:
      return nil
    }
  }

  static func list(_ values: [RulesValue], _ name: String, _ arguments: [RulesValue]) throws(RulesFailure)
    -> RulesValue
  {
    if let result = try common(values, name, arguments) { return result }
    switch name {
    case "join":
      try RulesFunctions.arity(name, arguments, 1)
      guard case .string(let separator) = arguments[0] else { throw RulesFailure("join() needs a string separator") }
      var parts: [String] = []
      for value in values {
        guard case .string(let text) = value else { throw RulesFailure("join() needs a list of strings") }
        parts.append(text)
      }
      let result = parts.joined(separator: separator)
      try RulesOperators.checkedSize(result.utf8.count)
      return .string(result)
    case "concat":
      try RulesFunctions.arity(name, arguments, 1)
      guard case .list(let other) = arguments[0] else { throw RulesFailure("concat() needs a list") }
      try RulesOperators.checkedSize(values.count + other.count)
      return .list(values + other)
    case "removeAll":
      try RulesFunctions.arity(name, arguments, 1)
      let removed = try elements(arguments[0], name)
      return .list(values.filter { !contains(removed, $0) })
    case "toSet":
      try RulesFunctions.arity(name, arguments, 0)
      return .set(distinct(values))
    default:
      throw RulesFailure("list has no method '\(name)'")
    }
  }

  static func set(_ values: [RulesValue], _ name: String, _ arguments: [RulesValue]) throws(RulesFailure)
    -> RulesValue
  {
    if let result = try common(values, name, arguments) { return result }
    switch name {
    case "difference", "intersection", "union":
      try RulesFunctions.arity(name, arguments, 1)
      guard case .set(let other) = arguments[0] else { throw RulesFailure("\(name)() needs a set") }
      switch name {
      case "difference": return .set(values.filter { !contains(other, $0) })
      case "intersection": return .set(values.filter { contains(other, $0) })
      default: return .set(distinct(values + other))
      }
    default:
      throw RulesFailure("set has no method '\(name)'")
    }
  }

  static func map(_ map: [String: RulesValue], _ name: String, _ arguments: [RulesValue]) throws(RulesFailure)
    -> RulesValue
  {
    switch name {
    case "keys":
      try RulesFunctions.arity(name, arguments, 0)
      return .list(map.keys.sorted().map { .string($0) })
    case "values":
      try RulesFunctions.arity(name, arguments, 0)
      return .list(map.keys.sorted().map { map[$0]! })
    case "get":
      try RulesFunctions.arity(name, arguments, 2)
      // The key may be a list of keys: a path into nested maps.
      let keys: [RulesValue]
      if case .list(let path) = arguments[0] { keys = path } else { keys = [arguments[0]] }
      var current = RulesValue.map(map)
      for key in keys {
        guard case .string(let text) = key else { throw RulesFailure("get() keys must be strings") }
        guard case .map(let inner) = current, let next = inner[text] else { return arguments[1] }
        current = next
      }
      return current
    case "diff":
      try RulesFunctions.arity(name, arguments, 1)
      guard case .map(let other) = arguments[0] else { throw RulesFailure("diff() needs a map") }
      return .mapDiff(before: map, after: other)
    default:
      throw RulesFailure("map has no method '\(name)'")
    }
  }

  /// `before.diff(after)`: which keys were added, removed, changed, or left alone.
  static func diff(
    _ before: [String: RulesValue], _ after: [String: RulesValue], _ name: String, _ arguments: [RulesValue]
  ) throws(RulesFailure) -> RulesValue {
    try RulesFunctions.arity(name, arguments, 0)
    let added = after.keys.filter { before[$0] == nil }
    let removed = before.keys.filter { after[$0] == nil }
    let changed = before.keys.filter { key in after[key].map { !$0.rulesEquals(before[key]!) } ?? false }
    let unchanged = before.keys.filter { key in after[key].map { $0.rulesEquals(before[key]!) } ?? false }
    let keys: [String]
    switch name {
    case "addedKeys": keys = added
    case "removedKeys": keys = removed
    case "changedKeys": keys = changed
    case "unchangedKeys": keys = unchanged
    case "affectedKeys": keys = added + removed + changed
    default: throw RulesFailure("map_diff has no method '\(name)'")
    }
    return .set(keys.sorted().map { .string($0) })
  }
}
