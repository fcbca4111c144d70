/// A place in a rules file, 1-based.
public struct SourceLocation: Sendable, Equatable, CustomStringConvertible {
  public var line: Int
  public var column: Int
  public var description: String { "\(line):\(column)" }
}

/// A rules file that cannot be loaded: where, and what is wrong, in words.
public struct RulesSyntaxError: Error, Sendable, Equatable, CustomStringConvertible {
  public var file: String
  public var location: SourceLocation
  public var message: String
  public var description: String { "\(file):\(location.line):\(location.column): \(message)" }
}

enum TokenKind: Equatable {
  case identifier(String)
  case int(Int64)
  case float(Double)
  case string(String)
  /// A `match` path, raw (`/b/{bucket}/o`).
  case matchPath(String)
  /// A path literal in an expression, raw (`/b/$(bucket)/o`).
  case pathLiteral(String)
  case symbol(String)
  case end
}

struct Token {
  var kind: TokenKind
  var location: SourceLocation
}

/// Splits rules source into tokens. Comments are `//` and `/* */`. A `match` keyword is followed
/// by a path token; a `/` where an operand is expected starts a path literal.
struct RulesLexer {
  private let scalars: [Unicode.Scalar]
  private var index = 0
  private var line = 1
  private var column = 1
  private let file: String

  init(_ text: String, file: String) {
    scalars = Array(text.unicodeScalars)
    self.file = file
  }

  static let symbols3: Set<String> = []
  static let symbols2: Set<String> = ["==", "!=", "<=", ">=", "&&", "||"]
  static let symbols1: Set<Unicode.Scalar> = [
    "{", "}", "(", ")", "[", "]", ";", ",", ".", ":", "?", "!", "<", ">", "+", "-", "*", "/", "%", "=",
  ]

  private func error(_ message: String, at location: SourceLocation) -> RulesSyntaxError {
    RulesSyntaxError(file: file, location: location, message: message)
  }

  private var current: Unicode.Scalar? { index < scalars.count ? scalars[index] : nil }
  private func peek(_ offset: Int) -> Unicode.Scalar? {
    index + offset < scalars.count ? scalars[index + offset] : nil
  }

  private mutating func advance() {
    if scalars[index] == "\n" {
      line += 1
      column = 1
    } else {
      column += 1
    }
    index += 1
  }

  private mutating func skipSpaceAndComments() throws(RulesSyntaxError) {
    while let scalar = current {
      if scalar == " " || scalar == "\t" || scalar == "\n" || scalar == "\r" {
        advance()
      } else if scalar == "/" && peek(1) == "/" {
        while let next = current, next != "\n" { advance() }
      } else if scalar == "/" && peek(1) == "*" {
        let start = SourceLocation(line: line, column: column)
        advance()
        advance()
        while true {
          guard let next = current else { throw error("this comment is never closed with */", at: start) }
          if next == "*" && peek(1) == "/" {
            advance()
            advance()
            break
          }
          advance()
        }
      } else {
        return
      }
    }
  }

  static func isIdentifierStart(_ scalar: Unicode.Scalar) -> Bool {
    scalar == "_" || ("a"..."z").contains(scalar) || ("A"..."Z").contains(scalar)
  }

  static func isIdentifierPart(_ scalar: Unicode.Scalar) -> Bool {
    isIdentifierStart(scalar) || ("0"..."9").contains(scalar)
  }

  /// All tokens, ending with `.end`. At most `maxTokens`.
  mutating func tokenize(maxTokens: Int) throws(RulesSyntaxError) -> [Token] {
    var tokens: [Token] = []
    while true {
      try skipSpaceAndComments()
      let location = SourceLocation(line: line, column: column)
      guard tokens.count < maxTokens else { throw error("the rules have too many tokens", at: location) }
      guard let scalar = current else {
        tokens.append(Token(kind: .end, location: location))
        return tokens
      }
      let previous = tokens.last?.kind
      if scalar == "/", previous == .identifier("match") {
        tokens.append(Token(kind: .matchPath(scanPath(allowInterpolation: false)), location: location))
      } else if scalar == "/", Self.expectsOperand(after: previous), let next = peek(1),
        Self.isIdentifierPart(next) || next == "$" || next == "{"
      {
        tokens.append(Token(kind: .pathLiteral(scanPath(allowInterpolation: true)), location: location))
      } else if Self.isIdentifierStart(scalar) {
        if (scalar == "r" || scalar == "R"), let quote = peek(1), quote == "'" || quote == "\"" {
          advance()
          tokens.append(Token(kind: .string(try scanString(raw: true, at: location)), location: location))
          continue
        }
        var name = ""
        while let next = current, Self.isIdentifierPart(next) {
          name.unicodeScalars.append(next)
          advance()
        }
        tokens.append(Token(kind: .identifier(name), location: location))
      } else if ("0"..."9").contains(scalar) {
        tokens.append(Token(kind: try scanNumber(at: location), location: location))
      } else if scalar == "'" || scalar == "\"" {
        tokens.append(Token(kind: .string(try scanString(raw: false, at: location)), location: location))
      } else if let next = peek(1), Self.symbols2.contains(String(scalar) + String(next)) {
        advance()
        advance()
        tokens.append(Token(kind: .symbol(String(scalar) + String(next)), location: location))
      } else if Self.symbols1.contains(scalar) {
        advance()
        tokens.append(Token(kind: .symbol(String(scalar)), location: location))
      } else {
        throw error("unexpected character '\(scalar.escaped(asASCII: true))'", at: location)
      }
    }
  }

  /// Whether an operand (not an operator) comes next after this token.
  private static func expectsOperand(after kind: TokenKind?) -> Bool {
    switch kind {
    case .none: return true
    case .symbol(let text): return text != ")" && text != "]" && text != "}"
    case .identifier(let name): return ["if", "return", "in", "is"].contains(name)
    default: return false
    }
  }

  /// A path up to white space, `{` opening a block, `;`, `)`, `,` or `]`. `{...}` segments are
  /// part of a match path; `$(...)` parts of a path literal (parentheses balanced).
  private mutating func scanPath(allowInterpolation: Bool) -> String {
    var text = ""
    var depth = 0
    while let scalar = current {
      if depth == 0 {
        if scalar == " " || scalar == "\t" || scalar == "\n" || scalar == "\r" || scalar == ";" || scalar == ","
          || scalar == "]" || scalar == ")"
        {
          break
        }
        if scalar == "{" && !allowInterpolation && text.unicodeScalars.last != "/" && !closesInSegment() { break }
        if scalar == "{" && allowInterpolation { break }
      }
      if allowInterpolation {
        if scalar == "(" { depth += 1 }
        if scalar == ")" { depth -= 1 }
      } else {
        if scalar == "{" { depth += 1 }
        if scalar == "}" { depth = max(0, depth - 1) }
      }
      text.unicodeScalars.append(scalar)
      advance()
    }
    return text
  }

  /// Whether the `{` here closes before white space (`/img-{id}`: part of the path, for the
  /// parser to reject clearly) rather than opening the block.
  private func closesInSegment() -> Bool {
    var probe = index + 1
    while probe < scalars.count {
      let scalar = scalars[probe]
      if scalar == "}" { return true }
      if scalar == " " || scalar == "\t" || scalar == "\n" || scalar == "\r" || scalar == "{" { return false }
      probe += 1
    }
    return false
  }

  private mutating func scanNumber(at location: SourceLocation) throws(RulesSyntaxError) -> TokenKind {
    var text = ""
    var isFloat = false
    while let scalar = current {
      if ("0"..."9").contains(scalar) {
        text.unicodeScalars.append(scalar)
      } else if scalar == ".", !isFloat, let next = peek(1), ("0"..."9").contains(next) {
        isFloat = true
        text.unicodeScalars.append(scalar)
      } else if scalar == "e" || scalar == "E" {
        isFloat = true
        text.unicodeScalars.append(scalar)
        if let sign = peek(1), sign == "+" || sign == "-" {
          advance()
          text.unicodeScalars.append(sign)
        }
      } else {
        break
      }
      advance()
    }
    if isFloat {
      guard let value = Double(text), value.isFinite else { throw error("'\(text)' is not a number", at: location) }
      return .float(value)
    }
    guard let value = Int64(text) else {
      throw error("the integer \(text.prefix(30)) does not fit in 64 bits", at: location)
    }
    return .int(value)
  }

  private mutating func scanString(raw: Bool, at location: SourceLocation) throws(RulesSyntaxError) -> String {
    guard let quote = current else { throw error("expected a string", at: location) }
    advance()
    var text = ""
    while true {
      guard let scalar = current, scalar != "\n" else {
        throw error("this string is never closed with \(quote)", at: location)
      }
      advance()
      if scalar == quote { return text }
      if scalar == "\\" && !raw {
        guard let escaped = current else { throw error("this string is never closed", at: location) }
        let escapeLocation = SourceLocation(line: line, column: column - 1)
        advance()
        switch escaped {
        case "n": text.unicodeScalars.append("\n")
        case "t": text.unicodeScalars.append("\t")
        case "r": text.unicodeScalars.append("\r")
        case "0": text.unicodeScalars.append("\0")
        case "\\", "'", "\"", "/": text.unicodeScalars.append(escaped)
        case "u":
          var hex = ""
          for _ in 0..<4 {
            guard let digit = current, digit.properties.isASCIIHexDigit else {
              throw error("\\u needs four hexadecimal digits", at: escapeLocation)
            }
            hex.unicodeScalars.append(digit)
            advance()
          }
          guard let code = UInt32(hex, radix: 16), let value = Unicode.Scalar(code) else {
            throw error("\\u\(hex) is not a character", at: escapeLocation)
          }
          text.unicodeScalars.append(value)
        default:
          // Kept as written, so regular expressions like '\\d' and '\d' both work.
          text.unicodeScalars.append("\\")
          text.unicodeScalars.append(escaped)
        }
      } else {
        text.unicodeScalars.append(scalar)
      }
    }
  }
}
