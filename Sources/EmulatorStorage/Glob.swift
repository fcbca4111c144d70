/// A compiled `matchGlob` pattern of objects.list.
///
/// Syntax (as GCS): `*` matches any run of characters except `/`, `**` any run including `/`,
/// `?` one character other than `/`, `[abc]`, `[a-z]`, `[!a]` (or `[^a]`) one character of a
/// class (never `/`), `{a,b}` one of the alternatives (which may nest), `\x` the character `x`.
/// A character is one UTF-8 sequence; a byte that starts no valid sequence is a character of
/// its own, so any bytes can be matched.
///
/// Patterns are hostile input, so work is bounded: a pattern has at most `maxPatternBytes`
/// bytes and nests `{` at most `maxNesting` deep (else `StorageError.invalid`, a 400). It is
/// compiled to a nondeterministic automaton of at most a few states per pattern character, and
/// `matches` runs it over the name once, keeping the set of states alive after each character
/// (no backtracking): time is O(name length × pattern length), memory O(pattern length).
public struct Glob: Sendable {
  public static let maxPatternBytes = 1024
  public static let maxNesting = 10

  /// What one automaton state consumes.
  enum Matcher: Sendable, Equatable {
    case character(UInt32)
    /// `?` and the step of `*`.
    case anyButSlash
    /// The step of `**`.
    case any
    case charClass([ClosedRange<UInt32>], negated: Bool)
  }

  enum Instruction: Sendable, Equatable {
    /// Consumes one character that `Matcher` accepts, then goes on to the next instruction.
    case consume(Matcher)
    /// `*` or `**`: consumes any number of characters `Matcher` accepts (a state that stays
    /// alive while it matches), and lets the next instruction go on at once (zero of them).
    case star(Matcher)
    /// Goes on, without consuming, to every target.
    case fork([Int])
    case jump(Int)
    case accept
  }

  let program: [Instruction]
  let machine: Machine

  /// Compiles `pattern` (the decoded `matchGlob` parameter).
  public init(pattern: String) throws(StorageError) {
    try self.init(patternBytes: Array(pattern.utf8))
  }

  /// The same, unlabelled (the form the first fuzz target was written against).
  public init(_ pattern: String) throws(StorageError) {
    try self.init(pattern: pattern)
  }

  /// Compiles a pattern given as bytes (any bytes: this is what the fuzzer calls).
  public init(patternBytes: [UInt8]) throws(StorageError) {
    guard patternBytes.count <= Self.maxPatternBytes else {
      throw StorageError.invalid(
        "matchGlob is \(patternBytes.count) bytes long; the limit is \(Self.maxPatternBytes) bytes.")
    }
    var compiler = Compiler(characters: Self.characters(patternBytes))
    try compiler.compileSequence(depth: 0)
    if compiler.position < compiler.characters.count {
      throw StorageError.invalid("matchGlob has a '}' outside braces: escape it as '\\}'.")
    }
    compiler.program.append(.accept)
    program = compiler.program
    machine = Machine(program)
  }

  /// Whether the whole name matches.
  public func matches(_ name: [UInt8]) -> Bool {
    var steps = 0
    return matches(name, steps: &steps)
  }

  public func matches(_ name: String) -> Bool { matches(Array(name.utf8)) }

  /// `matches`, adding to `steps` one per automaton state visited (tests check it grows
  /// linearly with the name).
  func matches(_ name: [UInt8], steps: inout Int) -> Bool {
    var simulation = Simulation(machine: machine)
    defer { simulation.deallocate() }
    simulation.start(&steps)
    var offset = 0
    while offset < name.count {
      let (character, length) = Self.character(in: name, at: offset)
      offset += length
      if !simulation.step(character, &steps) { return false }
    }
    return simulation.accepts
  }

  // MARK: Characters

  /// A byte that begins no valid UTF-8 sequence, as a character: beyond every scalar value.
  static func invalidByte(_ byte: UInt8) -> UInt32 { 0x11_0000 + UInt32(byte) }

  /// The character at `offset` and its length in bytes.
  static func character(in bytes: [UInt8], at offset: Int) -> (UInt32, Int) {
    let lead = bytes[offset]
    let length: Int
    var value: UInt32
    switch lead {
    case 0..<0x80: return (UInt32(lead), 1)
    case 0xC2...0xDF: (length, value) = (2, UInt32(lead & 0x1F))
    case 0xE0...0xEF: (length, value) = (3, UInt32(lead & 0x0F))
    case 0xF0...0xF4: (length, value) = (4, UInt32(lead & 0x07))
    default: return (invalidByte(lead), 1)
    }
    guard bytes.count - offset >= length else { return (invalidByte(lead), 1) }
    for index in (offset + 1)..<(offset + length) {
      let next = bytes[index]
      guard next & 0xC0 == 0x80 else { return (invalidByte(lead), 1) }
      value = value << 6 | UInt32(next & 0x3F)
    }
    // Overlong forms, surrogates and values past U+10FFFF are not characters.
    let smallest: UInt32 = length == 2 ? 0x80 : length == 3 ? 0x800 : 0x1_0000
    guard value >= smallest, value <= 0x10_FFFF, !(0xD800...0xDFFF).contains(value) else {
      return (invalidByte(lead), 1)
    }
    return (value, length)
  }

  static func characters(_ bytes: [UInt8]) -> [UInt32] {
    var out: [UInt32] = []
    out.reserveCapacity(bytes.count)
    var offset = 0
    while offset < bytes.count {
      let (character, length) = character(in: bytes, at: offset)
      out.append(character)
      offset += length
    }
    return out
  }

  // MARK: Compiling

  private struct Compiler {
    let characters: [UInt32]
    var position = 0
    var program: [Instruction] = []

    init(characters: [UInt32]) { self.characters = characters }

    private static let slash = UInt32(UInt8(ascii: "/"))

    private func isCharacter(_ ascii: Unicode.Scalar, at index: Int) -> Bool {
      index < characters.count && characters[index] == ascii.value
    }

    /// Compiles characters up to the end, or (inside braces) up to the `,` or `}` that ends an
    /// alternative. Recursion is only into braces, at most `maxNesting` deep.
    mutating func compileSequence(depth: Int) throws(StorageError) {
      while position < characters.count {
        let character = characters[position]
        switch character {
        case UInt32(UInt8(ascii: ",")) where depth == 0:
          program.append(.consume(.character(character)))  // a comma outside braces is itself
          position += 1
        case UInt32(UInt8(ascii: ",")), UInt32(UInt8(ascii: "}")):
          return  // the end of an alternative, or a stray '}' the top level refuses
        case UInt32(UInt8(ascii: "*")):
          let double = isCharacter("*", at: position + 1)
          position += double ? 2 : 1
          // A run of stars means what the longest star in it means.
          while isCharacter("*", at: position) { position += 1 }
          program.append(.star(double ? .any : .anyButSlash))
        case UInt32(UInt8(ascii: "?")):
          program.append(.consume(.anyButSlash))
          position += 1
        case UInt32(UInt8(ascii: "\\")):
          guard position + 1 < characters.count else {
            throw StorageError.invalid("matchGlob ends with a lone '\\'.")
          }
          program.append(.consume(.character(characters[position + 1])))
          position += 2
        case UInt32(UInt8(ascii: "[")):
          try compileClass()
        case UInt32(UInt8(ascii: "{")):
          try compileAlternatives(depth: depth + 1)
        default:
          program.append(.consume(.character(character)))
          position += 1
        }
      }
    }

    /// `[...]`, `position` at the `[`.
    private mutating func compileClass() throws(StorageError) {
      var index = position + 1
      var negated = false
      if isCharacter("!", at: index) || isCharacter("^", at: index) {
        negated = true
        index += 1
      }
      var ranges: [ClosedRange<UInt32>] = []
      var first = true
      func item() throws(StorageError) -> UInt32 {
        if isCharacter("\\", at: index) {
          guard index + 1 < characters.count else { throw StorageError.invalid("matchGlob has an unclosed '['.") }
          index += 2
          return characters[index - 1]
        }
        index += 1
        return characters[index - 1]
      }
      while index < characters.count && (first || !isCharacter("]", at: index)) {
        first = false
        let low = try item()
        if isCharacter("-", at: index) && index + 1 < characters.count && !isCharacter("]", at: index + 1) {
          index += 1
          let high = try item()
          guard low <= high else { throw StorageError.invalid("matchGlob has an inverted range in '[...]'.") }
          ranges.append(low...high)
        } else {
          ranges.append(low...low)
        }
      }
      guard index < characters.count else { throw StorageError.invalid("matchGlob has an unclosed '['.") }
      program.append(.consume(.charClass(ranges, negated: negated)))
      position = index + 1
    }

    /// `{a,b,...}`, `position` at the `{`: a fork to each alternative, each jumping to the end.
    private mutating func compileAlternatives(depth: Int) throws(StorageError) {
      guard depth <= Glob.maxNesting else {
        throw StorageError.invalid("matchGlob nests '{' more than \(Glob.maxNesting) levels deep.")
      }
      position += 1
      let fork = program.count
      program.append(.fork([]))
      var starts: [Int] = []
      var jumps: [Int] = []
      while true {
        starts.append(program.count)
        try compileSequence(depth: depth)
        guard position < characters.count else { throw StorageError.invalid("matchGlob has an unclosed '{'.") }
        jumps.append(program.count)
        program.append(.jump(-1))
        position += 1
        if characters[position - 1] == UInt32(UInt8(ascii: "}")) { break }
      }
      program[fork] = .fork(starts)
      for jump in jumps { program[jump] = .jump(program.count) }
    }
  }
}
