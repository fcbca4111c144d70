import EmulatorSupport

/// The RE2 subset rules use (`matches`, `split`, `replace`), run as a Thompson NFA (Pike VM):
/// time is linear in the text times the program size, whatever the pattern, so a pattern cannot
/// make the server backtrack exponentially. Supported: literals, `.`, classes `[a-z]` `[^...]`,
/// `\d \w \s \D \W \S`, escapes, groups `( )` `(?: )`, `|`, `* + ?`, `{n}` `{n,}` `{n,m}` (lazy
/// forms accepted and treated alike), `^` and `$`. Not supported (an error, so the allow is
/// false): backreferences (RE2 has none either), lookaround, flags, `\b`, POSIX classes.
struct RulesRegex: Sendable {
  static let maxPatternLength = 4096
  static let maxProgramSize = 10_000
  static let maxRepeat = 1000

  enum Instruction: Sendable {
    case scalar(UInt32)
    case any
    case ranges([ClosedRange<UInt32>], negated: Bool)
    case split(Int, Int)
    case jump(Int)
    case begin
    case end
    case match
  }

  let program: [Instruction]

  init(_ pattern: String) throws(RulesFailure) {
    guard pattern.unicodeScalars.count <= Self.maxPatternLength else {
      throw RulesFailure("the regular expression is longer than \(Self.maxPatternLength) characters")
    }
    var parser = RegexParser(scalars: Array(pattern.unicodeScalars))
    let node = try parser.parseAlternation()
    guard parser.index == parser.scalars.count else {
      throw RulesFailure("unbalanced ')' in the regular expression '\(pattern.prefix(60))'")
    }
    var compiler = RegexCompiler()
    try compiler.emit(node)
    compiler.program.append(.match)
    program = compiler.program
  }

  // MARK: Cache

  private static let cache = RegexCache()

  /// A compiled pattern, from a small process-wide cache (rules repeat the same few patterns).
  static func cached(_ pattern: String) throws(RulesFailure) -> RulesRegex {
    if let hit = cache.get(pattern) { return hit }
    let regex = try RulesRegex(pattern)
    cache.put(pattern, regex)
    return regex
  }

  // MARK: Matching

  /// Whether the whole text matches.
  func wholeMatch(_ text: String) -> Bool {
    let scalars = Array(text.unicodeScalars.map(\.value))
    return search(scalars, from: 0, anchored: true).map { $0.upperBound == scalars.count } ?? false
  }

  /// The leftmost-longest match at or after `from`. Anchored: only matches starting at `from`, and
  /// with `wholeMatch` only those ending at the end count.
  func search(_ text: [UInt32], from: Int, anchored: Bool = false) -> Range<Int>? {
    var current: [(pc: Int, start: Int)] = []
    var next: [(pc: Int, start: Int)] = []
    var seen = [Int](repeating: -1, count: program.count)
    var best: Range<Int>?
    var generation = 0
    func add(_ list: inout [(pc: Int, start: Int)], _ pc: Int, _ start: Int, _ position: Int) {
      var stack = [pc]
      while let pc = stack.popLast() {
        if seen[pc] == generation { continue }
        seen[pc] = generation
        switch program[pc] {
        case .split(let first, let second):
          stack.append(second)
          stack.append(first)
        case .jump(let target): stack.append(target)
        case .begin: if position == 0 { stack.append(pc + 1) }
        case .end: if position == text.count { stack.append(pc + 1) }
        default: list.append((pc, start))
        }
      }
    }
    var position = from
    generation += 1
    add(&current, 0, from, from)
    while true {
      for thread in current {
        if case .match = program[thread.pc] {
          let candidate = thread.start..<position
          if anchored {
            if position == text.count { return candidate }
            if best == nil { best = candidate }
          } else if best == nil || candidate.lowerBound < best!.lowerBound
            || (candidate.lowerBound == best!.lowerBound && candidate.upperBound > best!.upperBound)
          {
            best = candidate
          }
        }
      }
      if position == text.count { break }
      generation += 1
      next.removeAll(keepingCapacity: true)
      let scalar = text[position]
      for thread in current {
        if let bestStart = best?.lowerBound, thread.start > bestStart { continue }
        if Self.accepts(program[thread.pc], scalar) { add(&next, thread.pc + 1, thread.start, position + 1) }
      }
      position += 1
      if !anchored && best == nil { add(&next, 0, position, position) }
      swap(&current, &next)
      if current.isEmpty { break }
    }
    return anchored ? (best.flatMap { $0.upperBound == text.count ? $0 : nil }) : best
  }

  private static func accepts(_ instruction: Instruction, _ scalar: UInt32) -> Bool {
    switch instruction {
    case .scalar(let expected): return scalar == expected
    case .any: return scalar != 10
    case .ranges(let ranges, let negated): return ranges.contains { $0.contains(scalar) } != negated
    default: return false
    }
  }

  /// Pieces between matches (an empty match splits between characters; RE2's behaviour).
  func split(_ text: String) -> [String] {
    let scalars = Array(text.unicodeScalars.map(\.value))
    var pieces: [String] = []
    var start = 0
    var position = 0
    while position <= scalars.count, let found = search(scalars, from: position) {
      if found.isEmpty {
        if found.lowerBound >= scalars.count { break }
        if found.lowerBound == 0 {
          position = 1
          continue
        }
      }
      pieces.append(Self.string(scalars[start..<found.lowerBound]))
      start = found.upperBound
      position = found.isEmpty ? found.upperBound + 1 : found.upperBound
    }
    pieces.append(Self.string(scalars[min(start, scalars.count)...]))
    return pieces
  }

  /// Every match replaced; `$0` or `\0` in the replacement is the match (RE2 `GlobalReplace`).
  func replace(_ text: String, with replacement: String) -> String {
    let scalars = Array(text.unicodeScalars.map(\.value))
    var output: [UInt32] = []
    var position = 0
    var copied = 0
    while position <= scalars.count, let found = search(scalars, from: position) {
      output.append(contentsOf: scalars[copied..<found.lowerBound])
      let matched = Self.string(scalars[found])
      output.append(
        contentsOf: replacement.replacing("$0", with: matched)
          .replacing("\\0", with: matched).unicodeScalars.map(\.value))
      copied = found.upperBound
      if found.isEmpty {
        if found.upperBound < scalars.count { output.append(scalars[found.upperBound]) }
        copied = found.upperBound + 1
        position = found.upperBound + 1
      } else {
        position = found.upperBound
      }
      if output.count > RulesEvaluator.maxValueSize { break }
    }
    if copied < scalars.count { output.append(contentsOf: scalars[copied...]) }
    return Self.string(output[...])
  }

  static func string(_ values: ArraySlice<UInt32>) -> String {
    var text = ""
    for value in values { if let scalar = Unicode.Scalar(value) { text.unicodeScalars.append(scalar) } }
    return text
  }
}

/// A bounded pattern → program cache behind a lock.
final class RegexCache: @unchecked Sendable {
  // Invariant: `entries` is only touched with `lock` held.
  private let lock = PosixLock()
  private var entries: [String: RulesRegex] = [:]

  func get(_ key: String) -> RulesRegex? {
    lock.lock()
    defer { lock.unlock() }
    return entries[key]
  }

  func put(_ key: String, _ value: RulesRegex) {
    lock.lock()
    defer { lock.unlock() }
    if entries.count >= 256 { entries.removeAll() }
    entries[key] = value
  }
}
