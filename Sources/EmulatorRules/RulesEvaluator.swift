/// Why an expression has no value: the `allow` it is in does not grant access.
struct RulesEvalError: Error {
  var message: String
  var location: SourceLocation?
}

/// A function's parameters and `let`s: a few names, searched from the latest (no hashing).
struct Locals {
  private var names: [String] = []
  private var values: [RulesValue] = []

  func value(_ name: String) -> RulesValue? {
    var index = names.count
    while index > 0 {
      index -= 1
      if names[index] == name { return values[index] }
    }
    return nil
  }

  mutating func bind(_ name: String, _ value: RulesValue) {
    names.append(name)
    values.append(value)
  }
}

/// Evaluates expressions for one request, within a budget of steps and a bound on call depth.
struct RulesEvaluator {
  static let maxSteps = 10_000
  static let maxCallDepth = 20
  /// Nested evaluations (expression depth across function calls): bounds the native stack a
  /// request may use, whatever the rules (handlers run on threads with small stacks).
  static let maxNesting = 100
  /// The largest string, list or bytes value an expression may build.
  static let maxValueSize = 1 << 20

  var globals: [String: RulesValue]
  /// Wildcards bound by the enclosing `match` blocks, outermost first (searched from the end).
  var bindings: [(String, RulesValue)] = []
  /// Function declarations visible from the block being evaluated, outermost first.
  var functionScopes: [[String: FunctionDeclaration]]
  var steps = 0
  var callDepth = 0
  var nesting = 0

  static let namespaces: Set<String> = ["math", "timestamp", "duration", "latlng", "hashing", "string"]

  func fail(_ message: String, _ expression: Expression? = nil) -> RulesEvalError {
    RulesEvalError(message: message, location: expression?.location)
  }

  /// Runs one step of the value model (an operator, a function); its failure becomes an error
  /// located at `expression`.
  func located(
    _ expression: Expression, _ step: () throws(RulesFailure) -> RulesValue
  ) throws(RulesEvalError) -> RulesValue {
    do {
      return try step()
    } catch {
      throw fail(error.message, expression)
    }
  }

  /// Each kind of node is evaluated by its own small function: the recursion passes through
  /// this dispatcher and one of them, so a level of nesting costs little native stack (a single
  /// function with every case kept a frame of kilobytes per level in debug builds).
  mutating func evaluate(_ expression: Expression, _ locals: Locals) throws(RulesEvalError)
    -> RulesValue
  {
    steps += 1
    if steps > Self.maxSteps { throw fail("evaluation took more than \(Self.maxSteps) steps", expression) }
    nesting += 1
    defer { nesting -= 1 }
    if nesting > Self.maxNesting { throw fail("expressions nest deeper than \(Self.maxNesting)", expression) }
    switch expression.node {
    case .literal(let value): return value
    case .variable(let name): return try variable(name, expression, locals)
    case .list(let items): return try list(items, locals)
    case .map(let members): return try map(members, locals)
    case .path(let parts): return try path(parts, locals)
    case .unary(let op, let operand): return try unary(op, operand, expression, locals)
    case .binary(let op, let left, let right): return try binary(op, left, right, expression, locals)
    case .ternary(let condition, let whenTrue, let whenFalse):
      return try ternary(condition, whenTrue, whenFalse, locals)
    case .isType(let operand, let type): return .bool(try evaluate(operand, locals).isType(type))
    case .member(let receiver, let name): return try member(receiver, name, expression, locals)
    case .index(let receiver, let position): return try index(receiver, position, expression, locals)
    case .range(let receiver, let start, let end): return try range(receiver, start, end, expression, locals)
    case .call(let name, let arguments): return try call(name, arguments, expression, locals)
    case .method(let receiver, let name, let arguments):
      return try method(receiver, name, arguments, expression, locals)
    }
  }

  private func variable(_ name: String, _ expression: Expression, _ locals: Locals)
    throws(RulesEvalError) -> RulesValue
  {
    if let value = locals.value(name) { return value }
    if let bound = bindings.last(where: { $0.0 == name }) { return bound.1 }
    if let value = globals[name] { return value }
    throw fail("'\(name)' is not defined here", expression)
  }

  private mutating func list(_ items: [Expression], _ locals: Locals) throws(RulesEvalError)
    -> RulesValue
  {
    var values: [RulesValue] = []
    values.reserveCapacity(items.count)
    for item in items { values.append(try evaluate(item, locals)) }
    return .list(values)
  }

  private mutating func map(_ members: [(String, Expression)], _ locals: Locals)
    throws(RulesEvalError) -> RulesValue
  {
    var map: [String: RulesValue] = [:]
    for (key, member) in members { map[key] = try evaluate(member, locals) }
    return .map(map)
  }

  private mutating func path(_ parts: [Expression.PathPart], _ locals: Locals)
    throws(RulesEvalError) -> RulesValue
  {
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
  }

  private mutating func unary(
    _ op: String, _ operand: Expression, _ expression: Expression, _ locals: Locals
  ) throws(RulesEvalError) -> RulesValue {
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
  }

  private mutating func binary(
    _ op: String, _ left: Expression, _ right: Expression, _ expression: Expression, _ locals: Locals
  ) throws(RulesEvalError) -> RulesValue {
    if op == "&&" || op == "||" { return try logical(op == "&&", left, right, locals) }
    let a = try evaluate(left, locals)
    let b = try evaluate(right, locals)
    return try located(expression) { () throws(RulesFailure) in try RulesOperators.binary(op, a, b) }
  }

  private mutating func ternary(
    _ condition: Expression, _ whenTrue: Expression, _ whenFalse: Expression, _ locals: Locals
  ) throws(RulesEvalError) -> RulesValue {
    guard case .bool(let flag) = try evaluate(condition, locals) else {
      throw fail("the condition of '?:' must be a bool", condition)
    }
    return try evaluate(flag ? whenTrue : whenFalse, locals)
  }

  private mutating func member(
    _ receiver: Expression, _ name: String, _ expression: Expression, _ locals: Locals
  ) throws(RulesEvalError) -> RulesValue {
    let value = try evaluate(receiver, locals)
    guard case .map(let map) = value else { throw fail("\(value.typeName) has no field '\(name)'", expression) }
    if let member = map[name] { return member }
    throw fail("the map has no key '\(name)'", expression)
  }

  private mutating func index(
    _ receiver: Expression, _ indexExpression: Expression, _ expression: Expression, _ locals: Locals
  ) throws(RulesEvalError) -> RulesValue {
    let value = try evaluate(receiver, locals)
    let index = try evaluate(indexExpression, locals)
    return try located(expression) { () throws(RulesFailure) in try RulesOperators.index(value, index) }
  }

  private mutating func range(
    _ receiver: Expression, _ startExpression: Expression?, _ endExpression: Expression?, _ expression: Expression,
    _ locals: Locals
  ) throws(RulesEvalError) -> RulesValue {
    let value = try evaluate(receiver, locals)
    var start: RulesValue?
    var end: RulesValue?
    if let startExpression { start = try evaluate(startExpression, locals) }
    if let endExpression { end = try evaluate(endExpression, locals) }
    return try located(expression) { () throws(RulesFailure) in try RulesOperators.range(value, start, end) }
  }

  private mutating func call(
    _ name: String, _ argumentExpressions: [Expression], _ expression: Expression, _ locals: Locals
  ) throws(RulesEvalError) -> RulesValue {
    var arguments: [RulesValue] = []
    for argument in argumentExpressions { arguments.append(try evaluate(argument, locals)) }
    if let function = lookupFunction(name) { return try call(function, arguments, at: expression) }
    return try located(expression) { () throws(RulesFailure) in try RulesFunctions.global(name, arguments) }
  }

  private mutating func method(
    _ receiver: Expression, _ name: String, _ argumentExpressions: [Expression], _ expression: Expression,
    _ locals: Locals
  ) throws(RulesEvalError) -> RulesValue {
    var arguments: [RulesValue] = []
    for argument in argumentExpressions { arguments.append(try evaluate(argument, locals)) }
    if case .variable(let namespace) = receiver.node, Self.namespaces.contains(namespace),
      locals.value(namespace) == nil, globals[namespace] == nil, !bindings.contains(where: { $0.0 == namespace })
    {
      return try located(expression) { () throws(RulesFailure) in
        try RulesFunctions.namespaced(namespace, name, arguments)
      }
    }
    let value = try evaluate(receiver, locals)
    steps += RulesFunctions.cost(of: value)
    return try located(expression) { () throws(RulesFailure) in try RulesFunctions.method(value, name, arguments) }
  }

  /// `&&` and `||` short-circuit, and an error on one side is absorbed when the other side
  /// decides (`error || true` is true, `error && false` is false), as the rules language does.
  private mutating func logical(
    _ isAnd: Bool, _ left: Expression, _ right: Expression, _ locals: Locals
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
    var locals = Locals()
    for (parameter, argument) in zip(function.parameters, arguments) { locals.bind(parameter, argument) }
    for (name, value) in function.lets { locals.bind(name, try evaluate(value, locals)) }
    return try evaluate(function.body, locals)
  }
}
