/// A parsed `service firebase.storage` ruleset: which requests it allows.
///
/// Paths are `/b/{bucket}/o/{name split on '/'}`. Evaluation finds every `match` block whose
/// path covers the request path and allows the request if any `allow` naming its method there
/// has a condition that is true; a condition that fails (a missing field, a wrong type, a limit)
/// is false for that `allow` only.
public struct Ruleset: Sendable {
  /// The largest rules source accepted (production's limit is 256 KiB too).
  public static let maxSourceBytes = 256 * 1024
  public static let maxTokens = 100_000

  /// 1 or 2 (`rules_version`); 1 when the file does not say.
  public let version: Int
  let root: MatchBlock

  /// Parses rules source; errors name `file:line:col`.
  public init(source: String, file: String = "storage.rules") throws(RulesSyntaxError) {
    guard source.utf8.count <= Self.maxSourceBytes else {
      throw RulesSyntaxError(
        file: file, location: SourceLocation(line: 1, column: 1),
        message: "the rules are \(source.utf8.count) bytes; at most \(Self.maxSourceBytes) are accepted")
    }
    var lexer = RulesLexer(source, file: file)
    var parser = RulesParser(tokens: try lexer.tokenize(maxTokens: Self.maxTokens), file: file)
    let parsed = try parser.parseFile()
    version = parsed.version
    root = parsed.root
  }

  /// Decides one request. `log` receives why conditions failed (for the emulator's log).
  public func evaluate(_ request: RulesRequest, log: ((String) -> Void)? = nil) -> Bool {
    if request.method == .list && version < 2 {
      log?("list is denied: list rules need rules_version = '2'")
      return false
    }
    var segments: [String?] = ["b", request.bucket, "o"]
    segments += request.pathSegments.map { Optional($0) }
    if request.method == .list && request.delimiter != nil { segments.append(nil) }
    var evaluator = RulesEvaluator(globals: request.globals, functionScopes: [root.functions])
    return walk(root, segments[...], &evaluator, request.method, log)
  }

  /// Tries `block`'s children against the rest of the path, depth first.
  private func walk(
    _ block: MatchBlock, _ rest: ArraySlice<String?>, _ evaluator: inout RulesEvaluator, _ method: RulesMethod,
    _ log: ((String) -> Void)?
  ) -> Bool {
    for child in block.children {
      guard let (remaining, bindings) = match(child.segments, rest) else { continue }
      // Pushed and popped, never copied: this runs for every matching block of every request.
      let bindingCount = evaluator.bindings.count
      evaluator.bindings += bindings
      let hasFunctions = !child.functions.isEmpty
      if hasFunctions { evaluator.functionScopes.append(child.functions) }
      defer {
        evaluator.bindings.removeSubrange(bindingCount...)
        if hasFunctions { evaluator.functionScopes.removeLast() }
      }
      if remaining.isEmpty && allows(child, &evaluator, method, log) { return true }
      if walk(child, remaining, &evaluator, method, log) { return true }
    }
    return false
  }

  private func allows(
    _ block: MatchBlock, _ evaluator: inout RulesEvaluator, _ method: RulesMethod, _ log: ((String) -> Void)?
  ) -> Bool {
    for allow in block.allows where allow.methods.contains(method) {
      guard let condition = allow.condition else { return true }
      do {
        let value = try evaluator.evaluate(condition, Locals())
        if case .bool(true) = value { return true }
        if case .bool = value { continue }
        log?("line \(allow.location.line): the condition is \(value.typeName), not bool: false")
      } catch {
        let place = error.location.map { " (\($0))" } ?? ""
        log?("line \(allow.location.line): \(error.message)\(place): false")
      }
    }
    return false
  }

  /// Consumes `pattern` from the front of `path`; nil when it does not match. A `nil` path
  /// segment stands for "any child" (a list with a delimiter): it matches `{x}` (leaving `x`
  /// unbound) and `{x=**}`, never a literal.
  private func match(_ pattern: [MatchSegment], _ path: ArraySlice<String?>)
    -> (ArraySlice<String?>, [(String, RulesValue)])?
  {
    var rest = path
    var bindings: [(String, RulesValue)] = []
    for segment in pattern {
      switch segment {
      case .literal(let text):
        guard let first = rest.first, let value = first, value == text else { return nil }
        rest = rest.dropFirst()
      case .single(let name):
        guard let first = rest.first else { return nil }
        if let value = first { bindings.append((name, .string(value))) }
        rest = rest.dropFirst()
      case .recursive(let name):
        if version < 2 && rest.isEmpty { return nil }
        bindings.append((name, .string(rest.compactMap { $0 }.joined(separator: "/"))))
        rest = rest[rest.endIndex...]
      }
    }
    return (rest, bindings)
  }
}

/// What a ruleset sees of one request.
public struct RulesRequest: Sendable {
  public var method: RulesMethod
  public var bucket: String
  /// The object name's segments (the name split on `/`); for a list, the prefix's without its
  /// trailing `/`.
  public var pathSegments: [String]
  /// For a list: the delimiter, if the request had one.
  public var delimiter: String?
  /// `request.auth`: `null` or `{uid, token}`.
  public var auth: RulesValue
  /// `resource`: the object as it is, or `null`.
  public var resource: RulesValue
  /// `request.resource`: the object as it would be after a create or update, or `null`.
  public var requestResource: RulesValue
  /// `request.time`.
  public var time: RulesValue

  public init(
    method: RulesMethod, bucket: String, pathSegments: [String], delimiter: String? = nil, auth: RulesValue = .null,
    resource: RulesValue = .null, requestResource: RulesValue = .null, time: RulesValue
  ) {
    self.method = method
    self.bucket = bucket
    self.pathSegments = pathSegments
    self.delimiter = delimiter
    self.auth = auth
    self.resource = resource
    self.requestResource = requestResource
    self.time = time
  }

  /// `request` and `resource` as variables.
  var globals: [String: RulesValue] {
    let path = RulesValue.path(["b", bucket, "o"] + pathSegments)
    let request: [String: RulesValue] = [
      "auth": auth, "resource": requestResource, "time": time, "path": path, "method": .string(method.rawValue),
    ]
    return ["request": .map(request), "resource": resource]
  }
}
