/// Recursive descent over the tokens of a rules file. Nesting (expressions and `match` blocks) is
/// bounded by `maxDepth`, so hostile input cannot exhaust the stack.
struct RulesParser {
  static let maxDepth = 64
  private var tokens: [Token]
  private var position = 0
  var depth = 0
  let file: String

  init(tokens: [Token], file: String) {
    self.tokens = tokens
    self.file = file
  }

  var token: Token { tokens[position] }

  func error(_ message: String, at location: SourceLocation? = nil) -> RulesSyntaxError {
    RulesSyntaxError(file: file, location: location ?? token.location, message: message)
  }

  private static func describe(_ kind: TokenKind) -> String {
    switch kind {
    case .identifier(let name): "'\(name)'"
    case .int(let value): "the number \(value)"
    case .float(let value): "the number \(value)"
    case .string: "a string"
    case .matchPath(let path), .pathLiteral(let path): "the path \(path.prefix(40))"
    case .symbol(let symbol): "'\(symbol)'"
    case .end: "the end of the file"
    }
  }

  private mutating func next() -> Token {
    let current = tokens[position]
    if position < tokens.count - 1 { position += 1 }
    return current
  }

  private func isSymbol(_ symbol: String) -> Bool { token.kind == .symbol(symbol) }
  private func isKeyword(_ word: String) -> Bool { token.kind == .identifier(word) }

  private mutating func expect(_ symbol: String, _ context: String) throws(RulesSyntaxError) {
    guard isSymbol(symbol) else {
      throw error("expected '\(symbol)' \(context), found \(Self.describe(token.kind))")
    }
    _ = next()
  }

  private mutating func identifier(_ context: String) throws(RulesSyntaxError) -> String {
    guard case .identifier(let name) = token.kind else {
      throw error("expected a name \(context), found \(Self.describe(token.kind))")
    }
    _ = next()
    return name
  }

  private mutating func enter() throws(RulesSyntaxError) {
    depth += 1
    if depth > Self.maxDepth { throw error("the rules nest deeper than \(Self.maxDepth) levels") }
  }

  // MARK: Declarations

  /// `[rules_version = '1'|'2';] service firebase.storage { ... }`
  mutating func parseFile() throws(RulesSyntaxError) -> (version: Int, service: String, root: MatchBlock) {
    var version = 1
    if isKeyword("rules_version") {
      _ = next()
      try expect("=", "after rules_version")
      let location = token.location
      guard case .string(let text) = next().kind else {
        throw error("rules_version must be a string: rules_version = '2';", at: location)
      }
      guard text == "1" || text == "2" else {
        throw error("rules_version must be '1' or '2', not '\(text)'", at: location)
      }
      version = text == "2" ? 2 : 1
      try expect(";", "after the rules_version")
    }
    guard isKeyword("service") else {
      throw error("expected 'service firebase.storage {', found \(Self.describe(token.kind))")
    }
    let serviceLocation = next().location
    var service = try identifier("after 'service'")
    while isSymbol(".") {
      _ = next()
      service += "." + (try identifier("in the service name"))
    }
    guard service == "firebase.storage" else {
      throw error("this emulator evaluates 'service firebase.storage', not '\(service)'", at: serviceLocation)
    }
    let root = try parseBlockBody(segments: [], location: serviceLocation, allowsAllowed: false)
    guard token.kind == .end else {
      throw error("unexpected \(Self.describe(token.kind)) after the service block")
    }
    return (version, service, root)
  }

  /// `{ (match | function | allow)* }`
  private mutating func parseBlockBody(
    segments: [MatchSegment], location: SourceLocation, allowsAllowed: Bool
  ) throws(RulesSyntaxError) -> MatchBlock {
    try enter()
    defer { depth -= 1 }
    try expect("{", "to open the block")
    var allows: [AllowStatement] = []
    var functions: [String: FunctionDeclaration] = [:]
    var children: [MatchBlock] = []
    while !isSymbol("}") {
      if isKeyword("match") {
        let matchLocation = next().location
        guard case .matchPath(let path) = token.kind else {
          throw error("expected a path starting with '/' after 'match'")
        }
        let pathLocation = next().location
        let childSegments = try parseMatchPath(path, at: pathLocation)
        children.append(try parseBlockBody(segments: childSegments, location: matchLocation, allowsAllowed: true))
      } else if isKeyword("function") {
        let function = try parseFunction()
        guard functions[function.name] == nil else {
          throw error("the function '\(function.name)' is declared twice in this block", at: function.location)
        }
        functions[function.name] = function
      } else if isKeyword("allow") {
        guard allowsAllowed else { throw error("'allow' must be inside a 'match' block") }
        allows.append(try parseAllow())
      } else if token.kind == .end {
        throw error("this block is never closed with '}'", at: location)
      } else {
        throw error("expected 'match', 'allow', 'function' or '}', found \(Self.describe(token.kind))")
      }
    }
    _ = next()
    return MatchBlock(segments: segments, allows: allows, functions: functions, children: children, location: location)
  }

  /// `allow read, write: if expr;` (the condition may be left out: always allowed).
  private mutating func parseAllow() throws(RulesSyntaxError) -> AllowStatement {
    let location = next().location
    var methods: Set<RulesMethod> = []
    repeat {
      if isSymbol(",") { _ = next() }
      let methodLocation = token.location
      let name = try identifier("after 'allow' (read, write, get, list, create, update or delete)")
      switch name {
      case "read": methods.formUnion([.get, .list])
      case "write": methods.formUnion([.create, .update, .delete])
      default:
        guard let method = RulesMethod(rawValue: name) else {
          throw error(
            "'\(name)' is not a method: use read, write, get, list, create, update or delete", at: methodLocation)
        }
        methods.insert(method)
      }
    } while isSymbol(",")
    var condition: Expression?
    if isSymbol(":") {
      _ = next()
      guard isKeyword("if") else { throw error("expected 'if' after ':' in an allow statement") }
      _ = next()
      condition = try parseExpression()
    }
    try expect(";", "at the end of the allow statement")
    return AllowStatement(methods: methods, condition: condition, location: location)
  }

  /// `function name(a, b) { let x = ...; return expr; }`
  private mutating func parseFunction() throws(RulesSyntaxError) -> FunctionDeclaration {
    let location = next().location
    let name = try identifier("after 'function'")
    try expect("(", "after the function name")
    var parameters: [String] = []
    while !isSymbol(")") {
      if !parameters.isEmpty { try expect(",", "between parameters") }
      let parameter = try identifier("as a parameter")
      guard !parameters.contains(parameter) else { throw error("the parameter '\(parameter)' is repeated") }
      parameters.append(parameter)
    }
    _ = next()
    try expect("{", "to open the function body")
    var lets: [(String, Expression)] = []
    while isKeyword("let") {
      _ = next()
      let variable = try identifier("after 'let'")
      try expect("=", "after the let name")
      lets.append((variable, try parseExpression()))
      try expect(";", "after the let binding")
    }
    guard isKeyword("return") else {
      throw error("expected 'let' or 'return' in the body of function '\(name)'")
    }
    _ = next()
    let body = try parseExpression()
    try expect(";", "after the return expression")
    try expect("}", "to close the function body")
    return FunctionDeclaration(name: name, parameters: parameters, lets: lets, body: body, location: location)
  }

  // MARK: Expressions

  mutating func parseExpression() throws(RulesSyntaxError) -> Expression {
    try enter()
    defer { depth -= 1 }
    let condition = try parseBinary(level: 0)
    guard isSymbol("?") else { return condition }
    let location = next().location
    let whenTrue = try parseExpression()
    try expect(":", "in the conditional (a ? b : c)")
    let whenFalse = try parseExpression()
    return Expression(.ternary(condition, whenTrue, whenFalse), location)
  }

  private static let levels: [[String]] = [
    ["||"], ["&&"], ["==", "!=", "<", "<=", ">", ">=", "in", "is"], ["+", "-"], ["*", "/", "%"],
  ]

  private func binaryOperator(level: Int) -> String? {
    switch token.kind {
    case .symbol(let symbol) where Self.levels[level].contains(symbol): return symbol
    case .identifier(let word) where (word == "in" || word == "is") && level == 2: return word
    default: return nil
    }
  }

  private mutating func parseBinary(level: Int) throws(RulesSyntaxError) -> Expression {
    guard level < Self.levels.count else { return try parseUnary() }
    var left = try parseBinary(level: level + 1)
    while let op = binaryOperator(level: level) {
      let location = next().location
      if op == "is" {
        let type = try identifier("after 'is' (a type name such as string, int, map)")
        let known = [
          "bool", "int", "float", "number", "string", "list", "map", "set", "timestamp", "duration",
          "path", "latlng", "bytes", "map_diff",
        ]
        guard known.contains(type) else { throw error("'\(type)' is not a type", at: location) }
        left = Expression(.isType(left, type), location)
        continue
      }
      let right = try parseBinary(level: level + 1)
      left = Expression(.binary(op, left, right), location)
    }
    return left
  }

  private mutating func parseUnary() throws(RulesSyntaxError) -> Expression {
    if isSymbol("!") || isSymbol("-") {
      let operatorToken = next()
      guard case .symbol(let op) = operatorToken.kind else { throw error("expected an operator") }
      try enter()
      defer { depth -= 1 }
      let operand = try parseUnary()
      if op == "-", case .literal(.int(let value)) = operand.node {
        return Expression(.literal(.int(0 &- value)), operatorToken.location)
      }
      return Expression(.unary(op, operand), operatorToken.location)
    }
    return try parsePostfix(try parsePrimary())
  }

  private mutating func parsePostfix(_ base: Expression) throws(RulesSyntaxError) -> Expression {
    var expression = base
    var chain = 0
    while true {
      chain += 1
      if chain > 256 { throw error("this expression chains too many members or indexes") }
      if isSymbol(".") {
        let location = next().location
        let name = try identifier("after '.'")
        if isSymbol("(") {
          expression = Expression(.method(expression, name, try parseArguments()), location)
        } else {
          expression = Expression(.member(expression, name), location)
        }
      } else if isSymbol("[") {
        let location = next().location
        var start: Expression?
        if !isSymbol(":") { start = try parseExpression() }
        if isSymbol(":") {
          _ = next()
          var end: Expression?
          if !isSymbol("]") { end = try parseExpression() }
          try expect("]", "to close the range")
          expression = Expression(.range(expression, start, end), location)
        } else {
          try expect("]", "to close the index")
          guard let start else { throw error("an index needs an expression", at: location) }
          expression = Expression(.index(expression, start), location)
        }
      } else {
        return expression
      }
    }
  }

  private mutating func parseArguments() throws(RulesSyntaxError) -> [Expression] {
    try expect("(", "to open the arguments")
    var arguments: [Expression] = []
    while !isSymbol(")") {
      if !arguments.isEmpty { try expect(",", "between arguments") }
      arguments.append(try parseExpression())
    }
    _ = next()
    return arguments
  }

  private mutating func parsePrimary() throws(RulesSyntaxError) -> Expression {
    let current = next()
    let location = current.location
    switch current.kind {
    case .int(let value): return Expression(.literal(.int(value)), location)
    case .float(let value): return Expression(.literal(.float(value)), location)
    case .string(let value): return Expression(.literal(.string(value)), location)
    case .identifier("true"): return Expression(.literal(.bool(true)), location)
    case .identifier("false"): return Expression(.literal(.bool(false)), location)
    case .identifier("null"): return Expression(.literal(.null), location)
    case .identifier(let name):
      if isSymbol("(") { return Expression(.call(name, try parseArguments()), location) }
      return Expression(.variable(name), location)
    case .pathLiteral(let raw):
      return Expression(.path(try parsePathLiteral(raw, at: location)), location)
    case .symbol("("):
      let inner = try parseExpression()
      try expect(")", "to close the parenthesis")
      return inner
    case .symbol("["):
      var items: [Expression] = []
      while !isSymbol("]") {
        if !items.isEmpty { try expect(",", "between list items") }
        if isSymbol("]") { break }
        items.append(try parseExpression())
      }
      _ = next()
      return Expression(.list(items), location)
    case .symbol("{"):
      var members: [(String, Expression)] = []
      while !isSymbol("}") {
        if !members.isEmpty { try expect(",", "between map entries") }
        if isSymbol("}") { break }
        let keyLocation = token.location
        let key: String
        switch next().kind {
        case .string(let text): key = text
        case .identifier(let name): key = name
        default: throw error("a map key must be a string", at: keyLocation)
        }
        try expect(":", "after the map key")
        members.append((key, try parseExpression()))
      }
      _ = next()
      return Expression(.map(members), location)
    default:
      throw error("expected an expression, found \(Self.describe(current.kind))", at: location)
    }
  }
}
