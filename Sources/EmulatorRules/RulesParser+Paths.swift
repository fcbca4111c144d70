/// The two kinds of path in rules: `match` patterns and path literals in expressions.
extension RulesParser {
  /// `/literal/{name}/{rest=**}`
  func parseMatchPath(_ path: String, at location: SourceLocation) throws(RulesSyntaxError) -> [MatchSegment] {
    var segments: [MatchSegment] = []
    let parts = path.split(separator: "/", omittingEmptySubsequences: false).dropFirst()
    for (offset, part) in parts.enumerated() {
      guard !part.isEmpty else { throw error("the match path \(path) has an empty segment", at: location) }
      if part.first == "{" {
        guard part.last == "}" else { throw error("the segment \(part) is missing its closing '}'", at: location) }
        let inner = part.dropFirst().dropLast().filter { $0 != " " }
        let pieces = inner.split(separator: "=", omittingEmptySubsequences: false)
        let name = String(pieces[0])
        guard let first = name.unicodeScalars.first, RulesLexer.isIdentifierStart(first),
          name.unicodeScalars.allSatisfy(RulesLexer.isIdentifierPart)
        else {
          throw error("'\(name)' in \(path) is not a valid variable name", at: location)
        }
        if pieces.count == 1 {
          segments.append(.single(name))
        } else if pieces.count == 2 && pieces[1] == "**" {
          guard offset == parts.count - 1 else {
            throw error("the recursive wildcard {\(name)=**} must be the last segment of the path", at: location)
          }
          segments.append(.recursive(name))
        } else {
          throw error("'\(part)' is not a wildcard: write {name} or {name=**}", at: location)
        }
      } else {
        guard !part.contains("{") && !part.contains("}") else {
          throw error("a wildcard must be a whole segment: '\(part)' in \(path)", at: location)
        }
        segments.append(.literal(String(part)))
      }
    }
    return segments
  }

  /// `/b/$(bucket)/o/$(name)`: literal text and `$(expr)` parts per segment.
  func parsePathLiteral(_ raw: String, at location: SourceLocation) throws(RulesSyntaxError)
    -> [Expression.PathPart]
  {
    var parts: [Expression.PathPart] = []
    var rest = Substring(raw)
    while !rest.isEmpty {
      if rest.hasPrefix("$(") {
        var level = 0
        var end = rest.startIndex
        for index in rest.indices {
          if rest[index] == "(" { level += 1 }
          if rest[index] == ")" {
            level -= 1
            if level == 0 {
              end = index
              break
            }
          }
        }
        guard level == 0, end > rest.startIndex else { throw error("'$(' in a path is never closed", at: location) }
        let inner = String(rest[rest.index(rest.startIndex, offsetBy: 2)..<end])
        var lexer = RulesLexer(inner, file: file)
        var sub = RulesParser(tokens: try lexer.tokenize(maxTokens: 10_000), file: file)
        sub.depth = depth + 1
        let expression = try sub.parseExpression()
        guard sub.token.kind == .end else { throw error("unexpected text inside $( ) in a path", at: location) }
        parts.append(.expression(expression))
        rest = rest[rest.index(after: end)...]
      } else {
        let end = rest.firstRange(of: "$(")?.lowerBound ?? rest.endIndex
        parts.append(.text(String(rest[..<end])))
        rest = rest[end...]
      }
    }
    return parts
  }
}
