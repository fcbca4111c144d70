import EmulatorSupport

/// Where settings come from, lowest to highest: defaults, the config file (`--config FILE` or
/// `STORAGE_EMULATOR_CONFIG`), the environment (`STORAGE_EMULATOR_<KEY>`), flags. A higher source
/// replaces what a lower one set; the allow-lists (buckets, keys, origins, hosts) take items from
/// every source instead. Each error names its source: `file:line: key: …`, `VARIABLE: …`, `--flag: …`.
extension EmulatorConfiguration {
  public static let configFileVariable = "STORAGE_EMULATOR_CONFIG"

  /// The configuration that `storage-emulator serve ARGUMENTS` runs with.
  public static func resolve(
    arguments: [String], environment: [String: String],
    readFile: (String) -> String? = { try? String(contentsOfFile: $0, encoding: .utf8) }
  ) throws(ConfigurationError) -> EmulatorConfiguration {
    let flags = try FlagValues(arguments)
    var configuration = EmulatorConfiguration()
    if let path = flags.configFile ?? environment[configFileVariable].flatMap({ $0.isEmpty ? nil : $0 }) {
      guard let text = readFile(path) else { throw ConfigurationError("cannot read the config file '\(path)'") }
      try configuration.apply(configFile: text, name: path)
    }
    try configuration.apply(environment: environment)
    for option in options {
      guard let value = flags.values[option.key] else { continue }
      try configuration.apply(option, value, source: option.flag)
    }
    return configuration
  }

  /// Applies a config file's `key = value` lines (see `ConfigFileParser` for the accepted syntax).
  public mutating func apply(configFile text: String, name: String = "config") throws(ConfigurationError) {
    for entry in try ConfigFileParser.parse(text, name: name) {
      let source = "\(name):\(entry.line): \(entry.key)"
      guard let option = Self.optionsByKey[entry.key] else {
        throw ConfigurationError("\(source): unknown key (config/storage-emulator.toml lists every key)")
      }
      try apply(option, entry.value, source: source)
    }
  }

  /// Applies the `STORAGE_EMULATOR_*` variables that are set and not empty.
  public mutating func apply(environment: [String: String]) throws(ConfigurationError) {
    for option in Self.options {
      guard let text = environment[option.variable], !text.isEmpty else { continue }
      try apply(option, try Self.read(option, text, source: option.variable), source: option.variable)
    }
  }

  private mutating func apply(_ option: ConfigOption, _ value: ConfigValue, source: String) throws(ConfigurationError) {
    do {
      try option.apply(&self, value)
    } catch {
      throw ConfigurationError("\(source): \(error.message)")
    }
  }

  fileprivate static func read(_ option: ConfigOption, _ text: String, source: String) throws(ConfigurationError)
    -> ConfigValue
  {
    do {
      return try option.value(fromText: text)
    } catch {
      throw ConfigurationError("\(source): \(error.message)")
    }
  }
}

/// The flags of `serve`: `--name VALUE`, `--name=VALUE`, `--flag` / `--no-flag` for booleans; a
/// list flag is repeatable, a repeated scalar flag keeps its last value.
struct FlagValues {
  var configFile: String?
  var values: [String: ConfigValue] = [:]

  static let optionsByFlag: [String: ConfigOption] = Dictionary(
    uniqueKeysWithValues: EmulatorConfiguration.options.map { ($0.flag, $0) })

  init(_ arguments: [String]) throws(ConfigurationError) {
    var rest = arguments[...]
    while let argument = rest.popFirst() {
      guard argument.hasPrefix("--") else {
        throw ConfigurationError("unexpected argument '\(argument)' (options start with --; see --help)")
      }
      var flag = argument
      var inline: String?
      if let equals = argument.firstIndex(of: "=") {
        flag = String(argument[..<equals])
        inline = String(argument[argument.index(after: equals)...])
      }
      func text() throws(ConfigurationError) -> String {
        if let inline { return inline }
        guard let next = rest.popFirst() else { throw ConfigurationError("\(flag) needs a value") }
        return next
      }
      if flag == "--config" {
        configFile = try text()
      } else if let option = Self.optionsByFlag[flag] {
        switch option.kind {
        case .bool:
          values[option.key] =
            try inline.map { text throws(ConfigurationError) in
              try EmulatorConfiguration.read(option, text, source: flag)
            } ?? .bool(true)
        case .list:
          let items = (try? values[option.key]?.strings()) ?? []
          values[option.key] = .strings(items + [try text()])
        case .integer, .string:
          values[option.key] = try EmulatorConfiguration.read(option, try text(), source: flag)
        }
      } else if flag.hasPrefix("--no-"), inline == nil, let option = Self.optionsByFlag["--" + flag.dropFirst(5)],
        option.kind == .bool
      {
        values[option.key] = .bool(false)
      } else {
        throw ConfigurationError("unknown option '\(flag)' (see --help)")
      }
    }
  }
}

extension EmulatorConfiguration {
  /// The options part of `--help`, made from `options`, under 80 columns (the argument parser
  /// wraps lines at the terminal's width and would break the layout of longer ones). Made once, the
  /// first time the argument parser reads the commands' descriptions (never on a plain start).
  public static let optionsHelp: String = {
    var lines = [
      "Each option is a flag, an environment variable and a config file key:",
      "flags override the environment, which overrides the config file. Lists",
      "marked + add up across sources.", "",
    ]
    for option in options {
      var head =
        "  " + (option.kind == .bool ? option.flag.replacing("--", with: "--[no-]") : option.flag)
      if !option.valueName.isEmpty { head += " " + option.valueName }
      var repeatable = ""
      if case .list(let accumulates) = option.kind { repeatable = accumulates ? " (repeatable, +)" : " (repeatable)" }
      lines += helpEntry(
        head,
        [
          (option.help + repeatable).split(separator: " ").map(String.init),
          ["default \(option.defaultText);", "env \(option.variable);", "key \(option.key)"],
        ])
    }
    lines += helpEntry(
      "  --config FILE",
      [
        "read settings from FILE (see config/storage-emulator.toml)".split(separator: " ").map(String.init),
        ["env \(configFileVariable)"],
      ])
    return lines.joined(separator: "\n")
  }()

  /// `head` in the first 30 columns, then each paragraph's words wrapped at 76 columns (a longer
  /// word, such as a long variable name, stands alone on its line).
  private static func helpEntry(_ head: String, _ paragraphs: [[String]]) -> [String] {
    let column = 30
    let indent = String(repeating: " ", count: column)
    var lines: [String] = []
    var line = head
    if head.count + 2 > column {
      lines.append(head)
      line = indent
    } else {
      line += String(repeating: " ", count: column - head.count)
    }
    for words in paragraphs {
      var empty = true
      for word in words {
        if !empty && line.count + 1 + word.count > 76 {
          lines.append(line)
          line = indent
          empty = true
        }
        line += (empty ? "" : " ") + word
        empty = false
      }
      lines.append(line)
      line = indent
    }
    return lines
  }
}
