/// An expression of the rules language, with where it was written.
final class Expression: Sendable {
  let node: Node
  let location: SourceLocation

  init(_ node: Node, _ location: SourceLocation) {
    self.node = node
    self.location = location
  }

  enum Node: Sendable {
    case literal(RulesValue)
    case variable(String)
    case list([Expression])
    case map([(String, Expression)])
    /// A path literal: each segment literal text or an interpolated expression.
    case path([PathPart])
    case unary(String, Expression)
    case binary(String, Expression, Expression)
    case ternary(Expression, Expression, Expression)
    case isType(Expression, String)
    case member(Expression, String)
    case index(Expression, Expression)
    case range(Expression, Expression?, Expression?)
    /// `name(args)`: a user function or a global (`string`, `int`, ...).
    case call(String, [Expression])
    /// `receiver.name(args)`: a method, or a namespaced function (`math.abs`, `timestamp.date`).
    case method(Expression, String, [Expression])
  }

  enum PathPart: Sendable {
    case text(String)
    case expression(Expression)
  }
}

/// One segment of a `match` path.
enum MatchSegment: Sendable, Equatable {
  case literal(String)
  case single(String)
  case recursive(String)
}

/// The operations a request can be; `read` and `write` name groups of them.
public enum RulesMethod: String, Sendable, CaseIterable {
  case get, list, create, update, delete
}

struct AllowStatement: Sendable {
  var methods: Set<RulesMethod>
  /// nil: `allow read;` with no condition.
  var condition: Expression?
  var location: SourceLocation
}

struct FunctionDeclaration: Sendable {
  var name: String
  var parameters: [String]
  var lets: [(String, Expression)]
  var body: Expression
  var location: SourceLocation
}

final class MatchBlock: Sendable {
  let segments: [MatchSegment]
  let allows: [AllowStatement]
  let functions: [String: FunctionDeclaration]
  let children: [MatchBlock]
  let location: SourceLocation

  init(
    segments: [MatchSegment], allows: [AllowStatement], functions: [String: FunctionDeclaration],
    children: [MatchBlock], location: SourceLocation
  ) {
    self.segments = segments
    self.allows = allows
    self.functions = functions
    self.children = children
    self.location = location
  }
}
