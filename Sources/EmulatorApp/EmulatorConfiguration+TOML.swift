/// The config file's reader: a strict subset of TOML 1.0, written here rather than taken from a
/// TOML library.
///
/// Why not a library: the one available (TOMLKit) wraps the C++ toml++ and would add a C++
/// compile of several minutes on the 2-core machines this builds on, for a file that is a flat list
/// of `key = value` lines. Its errors would also not name our keys. This reader accepts exactly
/// what the emulator's settings need and refuses everything else with `file:line: what is wrong`
/// (`file:line: key: …` once the key is known), never by skipping it:
///
/// - bare keys (`A-Z a-z 0-9 _ -`) and quoted keys (`"key"`, `'key'`); a key given twice is an error;
/// - basic strings `"…"` with the escapes `\b \t \n \f \r \" \\ \uXXXX \UXXXXXXXX`, and literal
///   strings `'…'` (no escapes);
/// - decimal integers with an optional sign and `_` between digits, overflow-checked;
/// - `true` and `false`;
/// - arrays of strings, over several lines if wanted, with comments and a trailing comma;
/// - `#` comments, blank lines, LF or CRLF line ends.
///
/// Refused with a message saying so: `[table]` headers (every key is top-level), dotted keys,
/// inline tables, multi-line strings, floats, dates, hexadecimal/octal/binary integers, arrays of
/// anything but strings.
struct ConfigFileParser {
  /// One `key = value` line.
  struct Entry: Equatable {
    var key: String
    var value: ConfigValue
    var line: Int
  }

  private let bytes: [UInt8]
  private let name: String
  private var index = 0
  private var line = 1
  /// The key being read, for error messages.
  private var key: String?

  init(_ text: String, name: String) {
    bytes = Array(text.utf8)
    self.name = name
  }

  /// Every entry in file order.
  static func parse(_ text: String, name: String) throws(ConfigurationError) -> [Entry] {
    var parser = ConfigFileParser(text, name: name)
    return try parser.entries()
  }

  private mutating func entries() throws(ConfigurationError) -> [Entry] {
    if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { index = 3 }
    var entries: [Entry] = []
    var firstLine: [String: Int] = [:]
    while true {
      skipSpaces()
      guard let byte = peek else { return entries }
      switch byte {
      case UInt8(ascii: "#"), UInt8(ascii: "\n"), UInt8(ascii: "\r"): try endOfLine()
      case UInt8(ascii: "["):
        throw fail("tables ('[section]') are not supported: every key is at the top level")
      default:
        let entryLine = line
        let name = try readKey()
        key = name
        if let first = firstLine[name] { throw fail("defined twice (first on line \(first))") }
        firstLine[name] = entryLine
        skipSpaces()
        if peek == UInt8(ascii: ".") { throw fail("dotted keys are not supported") }
        guard peek == UInt8(ascii: "=") else { throw fail("expected '=' after the key") }
        index += 1
        skipSpaces()
        let value = try readValue()
        skipSpaces()
        try endOfLine()
        entries.append(Entry(key: name, value: value, line: entryLine))
        key = nil
      }
    }
  }

  private var peek: UInt8? { index < bytes.count ? bytes[index] : nil }

  private func fail(_ message: String) -> ConfigurationError {
    ConfigurationError("\(name):\(line): " + (key.map { "\($0): " } ?? "") + message)
  }

  private mutating func skipSpaces() {
    while let byte = peek, byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") { index += 1 }
  }

  /// An optional comment, then a line end or the end of the file.
  private mutating func endOfLine() throws(ConfigurationError) {
    if peek == UInt8(ascii: "#") {
      while let byte = peek, byte != UInt8(ascii: "\n"), byte != UInt8(ascii: "\r") {
        if byte < 0x20 && byte != UInt8(ascii: "\t") || byte == 0x7F {
          throw fail("control character in a comment")
        }
        index += 1
      }
    }
    guard let byte = peek else { return }
    if byte == UInt8(ascii: "\r") {
      index += 1
      guard peek == UInt8(ascii: "\n") else { throw fail("a carriage return must be followed by a line feed") }
    } else if byte != UInt8(ascii: "\n") {
      throw fail("expected the end of the line, found '\(character(at: index))'")
    }
    index += 1
    line += 1
  }

  /// Skips spaces, comments and line ends (inside an array).
  private mutating func skipBlank() throws(ConfigurationError) {
    while true {
      skipSpaces()
      guard let byte = peek, [UInt8(ascii: "#"), UInt8(ascii: "\n"), UInt8(ascii: "\r")].contains(byte) else { return }
      try endOfLine()
    }
  }

  private mutating func readKey() throws(ConfigurationError) -> String {
    switch peek {
    case UInt8(ascii: "\""): return try readBasicString()
    case UInt8(ascii: "'"): return try readLiteralString()
    default:
      let start = index
      while let byte = peek, Self.isBareKey(byte) { index += 1 }
      guard index > start else { throw fail("expected a key, found '\(character(at: index))'") }
      return String(decoding: bytes[start..<index], as: UTF8.self)
    }
  }

  private static func isBareKey(_ byte: UInt8) -> Bool {
    switch byte {
    case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
      UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "_"), UInt8(ascii: "-"):
      return true
    default: return false
    }
  }

  private mutating func readValue() throws(ConfigurationError) -> ConfigValue {
    switch peek {
    case nil, UInt8(ascii: "\n"), UInt8(ascii: "\r"), UInt8(ascii: "#"): throw fail("missing value after '='")
    case UInt8(ascii: "\""): return .string(try readBasicString())
    case UInt8(ascii: "'"): return .string(try readLiteralString())
    case UInt8(ascii: "["): return .strings(try readArray())
    case UInt8(ascii: "{"): throw fail("inline tables are not supported")
    default:
      let start = index
      while let byte = peek, !Self.endsBareValue(byte) { index += 1 }
      let word = String(decoding: bytes[start..<index], as: UTF8.self)
      switch word {
      case "true": return .bool(true)
      case "false": return .bool(false)
      default:
        guard let number = Self.decimalInteger(word) else {
          throw fail(
            "'\(word)' is not a value this file takes (a quoted string, a decimal integer that fits 64 bits, "
              + "true, false, or an array of strings)")
        }
        return .integer(number)
      }
    }
  }

  private static func endsBareValue(_ byte: UInt8) -> Bool {
    [
      UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\n"), UInt8(ascii: "\r"), UInt8(ascii: "#"),
      UInt8(ascii: ","), UInt8(ascii: "]"),
    ].contains(byte)
  }

  /// `[+-]?(0|[1-9](_?[0-9])*)` as TOML writes decimal integers; nil if malformed or past 64 bits.
  static func decimalInteger(_ word: String) -> Int? {
    var digits = Substring(word)
    var negative = false
    if let sign = digits.first, sign == "+" || sign == "-" {
      negative = sign == "-"
      digits = digits.dropFirst()
    }
    guard let first = digits.first, first.isASCII, first.isNumber, !(first == "0" && digits.count > 1),
      digits.last != "_", !digits.contains("__")
    else { return nil }
    var value = 0
    for character in digits where character != "_" {
      guard let digit = character.wholeNumberValue, character.isASCII else { return nil }
      let (times, overflow) = value.multipliedReportingOverflow(by: 10)
      let (sum, overflow2) = negative ? times.subtractingReportingOverflow(digit) : times.addingReportingOverflow(digit)
      guard !overflow, !overflow2 else { return nil }
      value = sum
    }
    return value
  }

  private mutating func readArray() throws(ConfigurationError) -> [String] {
    index += 1
    var items: [String] = []
    while true {
      try skipBlank()
      switch peek {
      case UInt8(ascii: "]"):
        index += 1
        return items
      case UInt8(ascii: "\""): items.append(try readBasicString())
      case UInt8(ascii: "'"): items.append(try readLiteralString())
      case nil: throw fail("unterminated array: expected ']'")
      default: throw fail("arrays may only hold quoted strings, found '\(character(at: index))'")
      }
      try skipBlank()
      if peek == UInt8(ascii: ",") {
        index += 1
      } else if peek != UInt8(ascii: "]") {
        throw fail(
          "expected ',' or ']' in the array, found '\(peek.map { _ in character(at: index) } ?? "end of file")'")
      }
    }
  }

  private mutating func readLiteralString() throws(ConfigurationError) -> String {
    if bytes[index...].starts(with: Array("'''".utf8)) { throw fail("multi-line strings are not supported") }
    index += 1
    let start = index
    while let byte = peek, byte != UInt8(ascii: "'") {
      try checkStringByte(byte)
      index += 1
    }
    guard peek != nil else { throw fail("unterminated string: expected '") }
    defer { index += 1 }
    return String(decoding: bytes[start..<index], as: UTF8.self)
  }

  private mutating func readBasicString() throws(ConfigurationError) -> String {
    if bytes[index...].starts(with: Array("\"\"\"".utf8)) { throw fail("multi-line strings are not supported") }
    index += 1
    var out: [UInt8] = []
    while let byte = peek, byte != UInt8(ascii: "\"") {
      index += 1
      guard byte == UInt8(ascii: "\\") else {
        try checkStringByte(byte)
        out.append(byte)
        continue
      }
      guard let escape = peek else { break }
      index += 1
      if let byte = Self.escapes[escape] {
        out.append(byte)
      } else if escape == UInt8(ascii: "u") || escape == UInt8(ascii: "U") {
        out += try readUnicodeEscape(digits: escape == UInt8(ascii: "u") ? 4 : 8)
      } else {
        throw fail("unknown escape '\\\(character(at: index - 1))' in a string")
      }
    }
    guard peek != nil else { throw fail("unterminated string: expected \"") }
    index += 1
    return String(decoding: out, as: UTF8.self)
  }

  /// TOML's one-letter escapes and the byte each stands for.
  private static let escapes: [UInt8: UInt8] = [
    UInt8(ascii: "b"): 8, UInt8(ascii: "t"): 9, UInt8(ascii: "n"): 10, UInt8(ascii: "f"): 12, UInt8(ascii: "r"): 13,
    UInt8(ascii: "\""): UInt8(ascii: "\""), UInt8(ascii: "\\"): UInt8(ascii: "\\"),
  ]

  private func checkStringByte(_ byte: UInt8) throws(ConfigurationError) {
    if byte == UInt8(ascii: "\n") || byte == UInt8(ascii: "\r") {
      throw fail("unterminated string at the end of the line")
    }
    if byte < 0x20 && byte != UInt8(ascii: "\t") || byte == 0x7F {
      throw fail("control character in a string (write it as an escape)")
    }
  }

  private mutating func readUnicodeEscape(digits: Int) throws(ConfigurationError) -> [UInt8] {
    guard index + digits <= bytes.count,
      let value = UInt32(String(decoding: bytes[index..<index + digits], as: UTF8.self), radix: 16),
      bytes[index..<index + digits].allSatisfy({ $0 != UInt8(ascii: "+") && $0 != UInt8(ascii: "-") }),
      let scalar = Unicode.Scalar(value)
    else { throw fail("\\\(digits == 4 ? "u" : "U") needs \(digits) hexadecimal digits naming a Unicode scalar value") }
    index += digits
    return Array(String(Character(scalar)).utf8)
  }

  /// The character at a byte offset, for messages (a whole UTF-8 sequence when it starts one).
  private func character(at offset: Int) -> String {
    guard offset < bytes.count else { return "end of file" }
    let text = String(decoding: bytes[offset..<min(bytes.count, offset + 4)], as: UTF8.self)
    return text.first.map { String($0) } ?? "?"
  }
}
