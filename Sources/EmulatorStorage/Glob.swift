/// `matchGlob` patterns of objects.list: `*` matches any run of bytes except `/`, `**` any run
/// including `/`, `?` one character other than `/`, `[abc]`/`[a-z]`/`[!a]` a class, `{a,b}` an
/// alternative, `\x` a literal.
struct Glob: Sendable {
  private indirect enum Token: Sendable {
    case literal(UInt8)
    case any  // ?
    case star  // *
    case globstar  // **
    case charClass([ClosedRange<UInt8>], negated: Bool)
    case alternatives([[Token]])
  }

  private let tokens: [Token]

  init(_ pattern: String) throws(StorageError) {
    var index = 0
    let bytes = Array(pattern.utf8)
    tokens = try Self.parse(bytes, &index, inBraces: false)
    if index != bytes.count { throw StorageError.invalid("matchGlob '\(pattern)' has an unmatched '}'.") }
  }

  private static func parse(_ b: [UInt8], _ i: inout Int, inBraces: Bool) throws(StorageError) -> [Token] {
    var out: [Token] = []
    while i < b.count {
      let c = b[i]
      if inBraces && (c == UInt8(ascii: ",") || c == UInt8(ascii: "}")) { return out }
      switch c {
      case UInt8(ascii: "*"):
        if i + 1 < b.count && b[i + 1] == UInt8(ascii: "*") {
          out.append(.globstar)
          i += 2
        } else {
          out.append(.star)
          i += 1
        }
      case UInt8(ascii: "?"):
        out.append(.any)
        i += 1
      case UInt8(ascii: "\\"):
        guard i + 1 < b.count else { throw StorageError.invalid("matchGlob ends with a lone '\\'.") }
        out.append(.literal(b[i + 1]))
        i += 2
      case UInt8(ascii: "["):
        var j = i + 1
        var negated = false
        if j < b.count && (b[j] == UInt8(ascii: "!") || b[j] == UInt8(ascii: "^")) {
          negated = true
          j += 1
        }
        var ranges: [ClosedRange<UInt8>] = []
        var first = true
        while j < b.count && (first || b[j] != UInt8(ascii: "]")) {
          first = false
          if j + 2 < b.count && b[j + 1] == UInt8(ascii: "-") && b[j + 2] != UInt8(ascii: "]") {
            guard b[j] <= b[j + 2] else { throw StorageError.invalid("matchGlob has an inverted range.") }
            ranges.append(b[j]...b[j + 2])
            j += 3
          } else {
            ranges.append(b[j]...b[j])
            j += 1
          }
        }
        guard j < b.count else { throw StorageError.invalid("matchGlob has an unclosed '['.") }
        out.append(.charClass(ranges, negated: negated))
        i = j + 1
      case UInt8(ascii: "{"):
        i += 1
        var options: [[Token]] = []
        while true {
          options.append(try parse(b, &i, inBraces: true))
          guard i < b.count else { throw StorageError.invalid("matchGlob has an unclosed '{'.") }
          i += 1
          if b[i - 1] == UInt8(ascii: "}") { break }
        }
        out.append(.alternatives(options))
      default:
        out.append(.literal(c))
        i += 1
      }
    }
    return out
  }

  func matches(_ name: [UInt8]) -> Bool {
    Self.match(tokens[...], name[...])
  }

  private static func match(_ pattern: ArraySlice<Token>, _ text: ArraySlice<UInt8>) -> Bool {
    guard let token = pattern.first else { return text.isEmpty }
    let rest = pattern.dropFirst()
    switch token {
    case .literal(let byte):
      return text.first == byte && match(rest, text.dropFirst())
    case .any:
      guard let byte = text.first, byte != UInt8(ascii: "/") else { return false }
      var tail = text.dropFirst()
      while let next = tail.first, next & 0xC0 == 0x80 { tail = tail.dropFirst() }  // whole UTF-8 character
      return match(rest, tail)
    case .star, .globstar:
      var tail = text
      while true {
        if match(rest, tail) { return true }
        guard let byte = tail.first else { return false }
        if case .star = token, byte == UInt8(ascii: "/") { return false }
        tail = tail.dropFirst()
      }
    case .charClass(let ranges, let negated):
      guard let byte = text.first, byte != UInt8(ascii: "/") else { return false }
      guard ranges.contains(where: { $0.contains(byte) }) != negated else { return false }
      return match(rest, text.dropFirst())
    case .alternatives(let options):
      return options.contains { match(ArraySlice($0) + rest, text) }
    }
  }
}
