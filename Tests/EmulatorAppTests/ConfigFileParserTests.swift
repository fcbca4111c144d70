import Testing

@testable import EmulatorApp

/// The config file reader from text: one test per construct it accepts, and a `file:line: …`
/// error for each one it refuses.
@Suite struct ConfigFileParserTests {
  func parse(_ text: String) throws(ConfigurationError) -> [ConfigFileParser.Entry] {
    try ConfigFileParser.parse(text, name: "f.toml")
  }

  func value(_ text: String) throws -> ConfigValue {
    let entries = try parse("k = " + text)
    try #require(entries.count == 1)
    return entries[0].value
  }

  func error(_ text: String) -> String? {
    do {
      _ = try parse(text)
      return nil
    } catch {
      return error.message
    }
  }

  @Test func bareAndQuotedKeys() throws {
    let entries = try parse("bare_key-1 = 1\n\"quoted key\" = 2\n'literal.key' = 3\n")
    #expect(entries.map(\.key) == ["bare_key-1", "quoted key", "literal.key"])
    #expect(entries.map(\.line) == [1, 2, 3])
  }

  @Test func basicStringsWithEveryEscape() throws {
    #expect(try value(#""plain""#) == .string("plain"))
    #expect(try value(#""a\"b\\c\td\ne\rf\bg\fh""#) == .string("a\"b\\c\td\ne\rf\u{8}g\u{C}h"))
    #expect(try value(#""\u00e9\U0001F600""#) == .string("é😀"))
    #expect(try value(##""# not a comment""##) == .string("# not a comment"))
    #expect(try value("\"tab\tinside\"") == .string("tab\tinside"))
  }

  @Test func literalStringsKeepBackslashes() throws {
    #expect(try value(#"'C:\path\"x'"#) == .string(#"C:\path\"x"#))
    #expect(try value("''") == .string(""))
  }

  @Test func decimalIntegersWithSignsAndUnderscores() throws {
    #expect(try value("9199") == .integer(9199))
    #expect(try value("+7") == .integer(7))
    #expect(try value("-12") == .integer(-12))
    #expect(try value("1_073_741_824") == .integer(1_073_741_824))
    #expect(try value("0") == .integer(0))
    #expect(try value("9223372036854775807") == .integer(Int.max))
    #expect(try value("-9223372036854775808") == .integer(Int.min))
  }

  @Test func integerOverflowIsAnErrorNotAWrap() {
    for text in ["9223372036854775808", "-9223372036854775809", "99999999999999999999999"] {
      #expect(error("k = \(text)")?.hasPrefix("f.toml:1: k: '\(text)' is not a value") == true, "\(text)")
    }
  }

  @Test func malformedNumbersAreRefused() {
    for text in [
      "012", "1__0", "10_", "_1", "0x1F", "0o17", "0b101", "1.5", "1e3", "inf", "nan", "1979-05-27", "+", "٣",
    ] {
      #expect(error("k = \(text)") != nil, "\(text)")
    }
  }

  @Test func booleans() throws {
    #expect(try value("true") == .bool(true))
    #expect(try value("false") == .bool(false))
    #expect(error("k = True") != nil)
    #expect(error("k = yes") != nil)
  }

  @Test func arraysWithCommasAndQuotesInsideStrings() throws {
    #expect(try value(#"["a,b", "c\"d", 'e]f', "g#h"]"#) == .strings(["a,b", "c\"d", "e]f", "g#h"]))
    #expect(try value("[]") == .strings([]))
    #expect(try value(#"[ "x" , ]"#) == .strings(["x"]))
  }

  @Test func arraysOverSeveralLinesWithComments() throws {
    let entries = try parse("list = [\n  \"a\", # first\n  # a comment line\n  \"b\",\r\n]\nnext = 1\n")
    #expect(entries.map(\.value) == [.strings(["a", "b"]), .integer(1)])
    #expect(entries.map(\.line) == [1, 6])
  }

  @Test func commentsBlankLinesAndLineEnds() throws {
    let entries = try parse("\u{FEFF}# header\n\n  \t\na = 1 # trailing\r\nb = \"x\"")
    #expect(entries.map(\.key) == ["a", "b"])
    #expect(entries.map(\.line) == [4, 5])
  }

  @Test(arguments: [
    ("[server]\nport = 1", "f.toml:1: tables ('[section]') are not supported"),
    ("a.b = 1", "f.toml:1: a: dotted keys are not supported"),
    ("a = {x = 1}", "f.toml:1: a: inline tables are not supported"),
    ("a = \"\"\"x\"\"\"", "f.toml:1: a: multi-line strings are not supported"),
    ("a = '''x'''", "f.toml:1: a: multi-line strings are not supported"),
    ("a = [1, 2]", "f.toml:1: a: arrays may only hold quoted strings"),
    ("a = [[\"x\"]]", "f.toml:1: a: arrays may only hold quoted strings"),
    ("a = [\"x\" \"y\"]", "f.toml:1: a: expected ',' or ']'"),
    ("a = [\"x\",\n", "f.toml:2: a: unterminated array"),
    ("a = \"open\nb = 1", "f.toml:1: a: unterminated string at the end of the line"),
    ("a = \"open", "f.toml:1: a: unterminated string"),
    ("a = 'open", "f.toml:1: a: unterminated string"),
    ("a = \"\\q\"", "f.toml:1: a: unknown escape '\\q'"),
    ("a = \"\\uD800\"", "f.toml:1: a: \\u needs 4 hexadecimal digits"),
    ("a = \"\\u12\"", "f.toml:1: a: \\u needs 4 hexadecimal digits"),
    ("a = \"bell\u{7}\"", "f.toml:1: a: control character in a string"),
    ("a = 1 2", "f.toml:1: a: expected the end of the line, found '2'"),
    ("a = \"x\" b", "f.toml:1: a: expected the end of the line, found 'b'"),
    ("a =", "f.toml:1: a: missing value after '='"),
    ("a = # nothing", "f.toml:1: a: missing value after '='"),
    ("a 1", "f.toml:1: a: expected '=' after the key"),
    ("= 1", "f.toml:1: expected a key, found '='"),
    ("x = 1\n\na = 1\na = 2", "f.toml:4: a: defined twice (first on line 3)"),
    ("a = 1\rb = 2", "f.toml:1: a: a carriage return must be followed by a line feed"),
    ("a = 1 # \u{1}", "f.toml:1: a: control character in a comment"),
  ])
  func refusedConstructsNameTheLineAndTheKey(_ text: String, _ expected: String) {
    let message = error(text)
    #expect(message?.hasPrefix(expected) == true, "\(text.debugDescription): \(message ?? "accepted")")
  }
}
