/// Why an expression has no value: the `allow` it is in does not grant access.
struct RulesEvalError: Error {
  var message: String
  var location: SourceLocation?
}

/// Evaluates expressions for one request, within a budget of steps and a bound on call depth.
struct RulesEvaluator {
  static let maxSteps = 10_000
  static let maxCallDepth = 20
  /// The largest string, list or bytes value an expression may build.
  static let maxValueSize = 1 << 20

  var globals: [String: RulesValue]
  /// Wildcards bound by the enclosing `match` blocks, outermost first (searched from the end).
  var bindings: [(String, RulesValue)] = []
  /// Function declarations visible from the block being evaluated, outermost first.
  var functionScopes: [[String: FunctionDeclaration]]
  var steps = 0
  var callDepth = 0

  static let namespaces: Set<String> = ["math", "timestamp", "duration", "latlng", "hashing", "string"]

  func fail(_ message: String, _ expression: Expression? = nil) -> RulesEvalError {
    RulesEvalError(message: message, location: expression?.location)
  }

  mutating func evaluate(_ expression: Expression, _ locals: [String: RulesValue]) throws(RulesEvalError)
    -> RulesValue
  {
    steps += 1
    if steps > Self.maxSteps { throw fail("evaluation took more than \(Self.maxSteps) steps", expression) }
    switch expression.node {
    case .literal(let value):
      return value
    case .variable(let name):
      if let value = locals[name] { return value }
      if let bound = bindings.last(where: { $0.0 == name }) { return bound.1 }
      if let value = globals[name] { return value }
      throw fail("'\(name)' is not defined here", expression)
    case .list(let items):
      var values: [RulesValue] = []
      values.reserveCapacity(items.count)
      for item in items { values.append(try evaluate(item, locals)) }
      return .list(values)
    case .map(let members):
      var map: [String: RulesValue] = [:]
      for (key, member) in members { map[key] = try evaluate(member, locals) }
      return .map(map)
    case .path(let parts):
      var text = ""
      for part in parts {
        switch part {
        case .text(let literal): text += literal
        case .expression(let inner):
          switch try evaluate(inner, locals) {
          case .string(let value): text += value
          case .int(let value): text += String(value)
          case .path(let segments): text += segments.joined(separator: "/")
          case let other: throw fail("a path can only interpolate strings, not \(other.typeName)", inner)
          }
        }
      }
      return .path(text.split(separator: "/").map(String.init))
    case .unary(let op, let operand):
      let value = try evaluate(operand, locals)
      switch (op, value) {
      case ("!", .bool(let flag)): return .bool(!flag)
      case ("-", .int(let number)):
        guard number != .min else { throw fail("integer overflow", expression) }
        return .int(-number)
      case ("-", .float(let number)): return .float(-number)
      case ("-", .duration(let seconds, let nanos)): return .duration(seconds: 0 &- seconds, nanos: -nanos)
      default: throw fail("'\(op)' does not apply to \(value.typeName)", expression)
      }
    case .binary(let op, let left, let right):
      if op == "&&" || op == "||" { return try logical(op == "&&", left, right, locals) }
      let a = try evaluate(left, locals)
      let b = try evaluate(right, locals)
      do {
        return try RulesOperators.binary(op, a, b)
      } catch {
        throw fail(error.message, expression)
      }
    case .ternary(let condition, let whenTrue, let whenFalse):
      guard case .bool(let flag) = try evaluate(condition, locals) else {
        throw fail("the condition of '?:' must be a bool", condition)
      }
      return try evaluate(flag ? whenTrue : whenFalse, locals)
    case .isType(let operand, let type):
      return .bool(try evaluate(operand, locals).isType(type))
    case .member(let receiver, let name):
      let value = try evaluate(receiver, locals)
      switch value {
      case .map(let map):
        if let member = map[name] { return member }
        throw fail("the map has no key '\(name)'", expression)
      default:
        throw fail("\(value.typeName) has no field '\(name)'", expression)
      }
    case .index(let receiver, let indexExpression):
      let value = try evaluate(receiver, locals)
      let index = try evaluate(indexExpression, locals)
      do {
        return try RulesOperators.index(value, index)
      } catch {
        throw fail(error.message, expression)
      }
    case .range(let receiver, let startExpression, let endExpression):
      let value = try evaluate(receiver, locals)
      let start = try startExpression.map { (e) throws(RulesEvalError) in try evaluate(e, locals) }
      let end = try endExpression.map { (e) throws(RulesEvalError) in try evaluate(e, locals) }
      do {
        return try RulesOperators.range(value, start, end)
      } catch {
        throw fail(error.message, expression)
      }
    case .call(let name, let argumentExpressions):
      var arguments: [RulesValue] = []
      for argument in argumentExpressions { arguments.append(try evaluate(argument, locals)) }
      if let function = lookupFunction(name) { return try call(function, arguments, at: expression) }
      do {
        return try RulesFunctions.global(name, arguments)
      } catch {
        throw fail(error.message, expression)
      }
    case .method(let receiver, let name, let argumentExpressions):
      var arguments: [RulesValue] = []
      for argument in argumentExpressions { arguments.append(try evaluate(argument, locals)) }
      if case .variable(let namespace) = receiver.node, Self.namespaces.contains(namespace),
        locals[namespace] == nil, globals[namespace] == nil, !bindings.contains(where: { $0.0 == namespace })
      {
        do {
          return try RulesFunctions.namespaced(namespace, name, arguments)
        } catch {
          throw fail(error.message, expression)
        }
      }
      let value = try evaluate(receiver, locals)
      steps += RulesFunctions.cost(of: value)
      do {
        return try RulesFunctions.method(value, name, arguments)
      } catch {
        throw fail(error.message, expression)
      }
    }
  }

  /// `&&` and `||` short-circuit, and an error on one side is absorbed when the other side
  /// decides (`error || true` is true, `error && false` is false), as the rules language does.
  private mutating func logical(
    _ isAnd: Bool, _ left: Expression, _ right: Expression, _ locals: [String: RulesValue]
  ) throws(RulesEvalError) -> RulesValue {
    var leftError: RulesEvalError?
    do throws(RulesEvalError) {
      let value = try evaluate(left, locals)
      guard case .bool(let flag) = value else {
        throw fail("'\(isAnd ? "&&" : "||")' needs bools, not \(value.typeName)", left)
      }
      if flag != isAnd { return .bool(flag) }
    } catch {
      if steps > Self.maxSteps { throw error }
      leftError = error
    }
    let value = try evaluate(right, locals)
    guard case .bool(let flag) = value else {
      throw fail("'\(isAnd ? "&&" : "||")' needs bools, not \(value.typeName)", right)
    }
    if flag != isAnd { return .bool(flag) }
    if let leftError { throw leftError }
    return .bool(flag)
  }

  private func lookupFunction(_ name: String) -> FunctionDeclaration? {
    for scope in functionScopes.reversed() {
      if let function = scope[name] { return function }
    }
    return nil
  }

  private mutating func call(_ function: FunctionDeclaration, _ arguments: [RulesValue], at expression: Expression)
    throws(RulesEvalError) -> RulesValue
  {
    guard arguments.count == function.parameters.count else {
      throw fail(
        "\(function.name)() takes \(function.parameters.count) arguments, not \(arguments.count)", expression)
    }
    guard callDepth < Self.maxCallDepth else {
      throw fail("function calls nest deeper than \(Self.maxCallDepth) (recursion?)", expression)
    }
    callDepth += 1
    defer { callDepth -= 1 }
    var locals: [String: RulesValue] = [:]
    for (parameter, argument) in zip(function.parameters, arguments) { locals[parameter] = argument }
    for (name, value) in function.lets { locals[name] = try evaluate(value, locals) }
    return try evaluate(function.body, locals)
  }
}
