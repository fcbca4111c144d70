/// A parsed regular expression.
indirect enum RegexNode {
  case empty
  case scalar(UInt32)
  case any
  case ranges([ClosedRange<UInt32>], negated: Bool)
  case begin
  case end
  case concatenation([RegexNode])
  case alternation([RegexNode])
  case repeated(RegexNode, min: Int, max: Int?)
}

/// Parses the RE2 subset `RulesRegex` documents; nesting is bounded.
struct RegexParser {
  let scalars: [Unicode.Scalar]
  var index = 0
  var depth = 0

  init(scalars: [Unicode.Scalar]) { self.scalars = scalars }

  private var current: Unicode.Scalar? { index < scalars.count ? scalars[index] : nil }

  static let digit: [ClosedRange<UInt32>] = [48...57]
  static let word: [ClosedRange<UInt32>] = [48...57, 65...90, 95...95, 97...122]
  static let space: [ClosedRange<UInt32>] = [9...10, 12...13, 32...32]

  mutating func parseAlternation() throws(RulesFailure) -> RegexNode {
    depth += 1
    defer { depth -= 1 }
    guard depth <= 100 else { throw RulesFailure("the regular expression nests too deeply") }
    var branches = [try parseConcatenation()]
    while current == "|" {
      index += 1
      branches.append(try parseConcatenation())
    }
    return branches.count == 1 ? branches[0] : .alternation(branches)
  }

  private mutating func parseConcatenation() throws(RulesFailure) -> RegexNode {
    var items: [RegexNode] = []
    while let scalar = current, scalar != "|", scalar != ")" {
      var atom = try parseAtom()
      var quantified = false
      while let next = current, next == "*" || next == "+" || next == "?" || next == "{" {
        if next == "{", !looksLikeCount() { break }
        if case .begin = atom { throw RulesFailure("nothing to repeat before '\(next)'") }
        if case .end = atom { throw RulesFailure("nothing to repeat before '\(next)'") }
        if quantified { throw RulesFailure("a repetition cannot be repeated again ('\(next)')") }
        quantified = true
        index += 1
        switch next {
        case "*": atom = .repeated(atom, min: 0, max: nil)
        case "+": atom = .repeated(atom, min: 1, max: nil)
        case "?": atom = .repeated(atom, min: 0, max: 1)
        default:
          let (low, high) = try parseCount()
          atom = .repeated(atom, min: low, max: high)
        }
        if current == "?" { index += 1 }  // lazy: the same set of matches
      }
      items.append(atom)
    }
    return items.count == 1 ? items[0] : (items.isEmpty ? .empty : .concatenation(items))
  }

  private func looksLikeCount() -> Bool {
    var probe = index + 1
    var sawDigit = false
    while probe < scalars.count {
      let scalar = scalars[probe]
      if ("0"..."9").contains(scalar) {
        sawDigit = true
      } else if scalar == "," {
      } else if scalar == "}" {
        return sawDigit
      } else {
        return false
      }
      probe += 1
    }
    return false
  }

  private mutating func number() -> Int? {
    var value = 0
    var any = false
    while let scalar = current, ("0"..."9").contains(scalar) {
      value = min(value * 10 + Int(scalar.value - 48), 1_000_000)
      any = true
      index += 1
    }
    return any ? value : nil
  }

  private mutating func parseCount() throws(RulesFailure) -> (Int, Int?) {
    let low = number() ?? 0
    var high: Int? = low
    if current == "," {
      index += 1
      high = number()
    }
    guard current == "}" else { throw RulesFailure("a repetition count is not closed with '}'") }
    index += 1
    guard low <= RulesRegex.maxRepeat, (high ?? 0) <= RulesRegex.maxRepeat else {
      throw RulesFailure("a repetition count is larger than \(RulesRegex.maxRepeat)")
    }
    if let high, high < low { throw RulesFailure("the repetition {\(low),\(high)} is backwards") }
    return (low, high)
  }

  private mutating func parseAtom() throws(RulesFailure) -> RegexNode {
    guard let scalar = current else { throw RulesFailure("the regular expression ends too early") }
    index += 1
    switch scalar {
    case ".": return .any
    case "^": return .begin
    case "$": return .end
    case "(":
      if current == "?" {
        guard index + 1 < scalars.count, scalars[index + 1] == ":" else {
          throw RulesFailure("only (?:...) groups are supported (no flags or lookaround)")
        }
        index += 2
      }
      let inner = try parseAlternation()
      guard current == ")" else { throw RulesFailure("a '(' in the regular expression is never closed") }
      index += 1
      return inner
    case "[": return try parseClass()
    case "\\": return try parseEscape(inClass: false)
    case "*", "+", "?": throw RulesFailure("nothing to repeat before '\(scalar)'")
    default: return .scalar(scalar.value)
    }
  }

  private mutating func parseEscape(inClass: Bool) throws(RulesFailure) -> RegexNode {
    guard let escaped = current else { throw RulesFailure("the regular expression ends with '\\'") }
    index += 1
    switch escaped {
    case "d": return .ranges(Self.digit, negated: false)
    case "D": return .ranges(Self.digit, negated: true)
    case "w": return .ranges(Self.word, negated: false)
    case "W": return .ranges(Self.word, negated: true)
    case "s": return .ranges(Self.space, negated: false)
    case "S": return .ranges(Self.space, negated: true)
    case "n": return .scalar(10)
    case "t": return .scalar(9)
    case "r": return .scalar(13)
    case "f": return .scalar(12)
    case "v": return .scalar(11)
    default:
      if ("0"..."9").contains(escaped) { throw RulesFailure("backreferences (\\\(escaped)) are not supported") }
      if RulesLexer.isIdentifierPart(escaped) {
        throw RulesFailure("the escape \\\(escaped) is not supported")
      }
      return .scalar(escaped.value)
    }
  }

  private mutating func parseClass() throws(RulesFailure) -> RegexNode {
    var negated = false
    if current == "^" {
      negated = true
      index += 1
    }
    var ranges: [ClosedRange<UInt32>] = []
    var first = true
    while true {
      guard let scalar = current else { throw RulesFailure("a '[' in the regular expression is never closed") }
      if scalar == "]" && !first {
        index += 1
        break
      }
      first = false
      var low: UInt32
      if scalar == "[" && index + 1 < scalars.count && scalars[index + 1] == ":" {
        throw RulesFailure("POSIX classes like [:alpha:] are not supported")
      }
      index += 1
      if scalar == "\\" {
        switch try parseEscape(inClass: true) {
        case .scalar(let value): low = value
        case .ranges(let more, let negatedEscape):
          guard !negatedEscape else { throw RulesFailure("\\D, \\W and \\S are not supported inside [ ]") }
          ranges += more
          continue
        default: throw RulesFailure("bad escape in a character class")
        }
      } else {
        low = scalar.value
      }
      var high = low
      if current == "-", index + 1 < scalars.count, scalars[index + 1] != "]" {
        index += 1
        guard let end = current else { throw RulesFailure("a '[' in the regular expression is never closed") }
        index += 1
        if end == "\\" {
          guard case .scalar(let value) = try parseEscape(inClass: true) else {
            throw RulesFailure("a range cannot end with a class escape")
          }
          high = value
        } else {
          high = end.value
        }
        guard low <= high else { throw RulesFailure("the range in [ ] is backwards") }
      }
      ranges.append(low...high)
    }
    return .ranges(ranges, negated: negated)
  }
}

/// Turns a `RegexNode` into Pike VM instructions, bounded in size.
struct RegexCompiler {
  var program: [RulesRegex.Instruction] = []

  private mutating func append(_ instruction: RulesRegex.Instruction) throws(RulesFailure) -> Int {
    guard program.count < RulesRegex.maxProgramSize else {
      throw RulesFailure("the regular expression is too large once its repetitions are expanded")
    }
    program.append(instruction)
    return program.count - 1
  }

  mutating func emit(_ node: RegexNode) throws(RulesFailure) {
    switch node {
    case .empty: break
    case .scalar(let value): _ = try append(.scalar(value))
    case .any: _ = try append(.any)
    case .ranges(let ranges, let negated): _ = try append(.ranges(ranges, negated: negated))
    case .begin: _ = try append(.begin)
    case .end: _ = try append(.end)
    case .concatenation(let items): for item in items { try emit(item) }
    case .alternation(let branches):
      var jumps: [Int] = []
      for (offset, branch) in branches.enumerated() {
        if offset < branches.count - 1 {
          let split = try append(.split(0, 0))
          try emit(branch)
          jumps.append(try append(.jump(0)))
          program[split] = .split(split + 1, program.count)
        } else {
          try emit(branch)
        }
      }
      for jump in jumps { program[jump] = .jump(program.count) }
    case .repeated(let inner, let low, let high):
      for _ in 0..<low { try emit(inner) }
      if let high {
        var splits: [Int] = []
        for _ in low..<high {
          splits.append(try append(.split(0, 0)))
          try emit(inner)
        }
        for split in splits { program[split] = .split(split + 1, program.count) }
      } else {
        let split = try append(.split(0, 0))
        try emit(inner)
        _ = try append(.jump(split))
        program[split] = .split(split + 1, program.count)
      }
    }
  }
}
