/// The methods of strings. `matches`, `split` and `replace` take RE2 patterns (see `RulesRegex`).
enum RulesStringMethods {
  static func string(_ arguments: [RulesValue], _ index: Int, _ method: String) throws(RulesFailure) -> String {
    guard case .string(let text) = arguments[index] else { throw RulesFailure("\(method)() needs a string argument") }
    return text
  }

  static func call(_ text: String, _ name: String, _ arguments: [RulesValue]) throws(RulesFailure) -> RulesValue {
    switch name {
    case "lower":
      try RulesFunctions.arity(name, arguments, 0)
      return .string(text.lowercased())
    case "upper":
      try RulesFunctions.arity(name, arguments, 0)
      return .string(text.uppercased())
    case "trim":
      try RulesFunctions.arity(name, arguments, 0)
      let scalars = Array(text.unicodeScalars)
      let isSpace = { (s: Unicode.Scalar) in s.properties.isWhitespace }
      guard let first = scalars.firstIndex(where: { !isSpace($0) }),
        let last = scalars.lastIndex(where: { !isSpace($0) })
      else { return .string("") }
      var result = ""
      result.unicodeScalars.append(contentsOf: scalars[first...last])
      return .string(result)
    case "toUtf8":
      try RulesFunctions.arity(name, arguments, 0)
      return .bytes(Array(text.utf8))
    case "matches":
      try RulesFunctions.arity(name, arguments, 1)
      return .bool(try RulesRegex.cached(try string(arguments, 0, name)).wholeMatch(text))
    case "split":
      try RulesFunctions.arity(name, arguments, 1)
      let regex = try RulesRegex.cached(try string(arguments, 0, name))
      return .list(regex.split(text).map { .string($0) })
    case "replace":
      try RulesFunctions.arity(name, arguments, 2)
      let regex = try RulesRegex.cached(try string(arguments, 0, name))
      let replacement = try string(arguments, 1, name)
      let result = regex.replace(text, with: replacement)
      try RulesOperators.checkedSize(result.utf8.count)
      return .string(result)
    case "startsWith", "endsWith", "contains":
      // Not in the storage reference; some rule authors write them anyway: refused clearly.
      throw RulesFailure("string has no method '\(name)'; use matches()")
    default:
      throw RulesFailure("string has no method '\(name)'")
    }
  }
}
