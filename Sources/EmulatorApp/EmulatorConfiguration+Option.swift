import EmulatorSupport

/// One setting of the emulator as the three sources name it: config key `port`, environment
/// variable `STORAGE_EMULATOR_PORT`, flag `--port`. The list `EmulatorConfiguration.options`
/// drives the config file, the environment, the flags and `--help`, so an option is added in one
/// place.
public struct ConfigOption: Sendable {
  /// What the option takes, which decides how environment and flag text is read.
  public enum Kind: Sendable, Equatable {
    /// `--flag` alone sets true, `--no-flag` false; `true`/`false`/`1`/`0` from the environment.
    case bool
    case integer
    case string
    /// A list: each flag adds one item; the environment gives items separated by commas or spaces.
    /// `accumulates`: every source adds to the list (allow-lists); otherwise the highest source
    /// that gives the list replaces it whole.
    case list(accumulates: Bool)
  }

  public let key: String
  public let kind: Kind
  public let flag: String
  public let variable: String
  /// The value's name in `--help` (`PORT`, `DIR`); empty for a boolean.
  public let valueName: String
  public let defaultText: String
  public let help: String
  let apply: @Sendable (inout EmulatorConfiguration, ConfigValue) throws(ConfigurationError) -> Void

  /// `flag` and `variable` default to the key as `--kebab-case` and `STORAGE_EMULATOR_UPPER_CASE`.
  init(
    _ key: String, _ kind: Kind, flag: String? = nil, variable: String? = nil, value valueName: String = "",
    default defaultText: String, _ help: String,
    apply: @escaping @Sendable (inout EmulatorConfiguration, ConfigValue) throws(ConfigurationError) -> Void
  ) {
    self.key = key
    self.kind = kind
    self.flag = flag ?? "--" + key.replacing("_", with: "-")
    self.variable = variable ?? "STORAGE_EMULATOR_" + key.uppercased()
    self.valueName = valueName
    self.defaultText = defaultText
    self.help = help
    self.apply = apply
  }

  static func bool(
    _ key: String, default defaultText: String = "false", _ help: String,
    _ set: @escaping @Sendable (inout EmulatorConfiguration, Bool) -> Void
  ) -> ConfigOption {
    ConfigOption(key, .bool, default: defaultText, help) { configuration, value throws(ConfigurationError) in
      set(&configuration, try value.bool())
    }
  }

  static func integer(
    _ key: String, flag: String? = nil, value: String = "N", in range: ClosedRange<Int>, default defaultText: String,
    _ help: String, _ set: @escaping @Sendable (inout EmulatorConfiguration, Int) -> Void
  ) -> ConfigOption {
    ConfigOption(key, .integer, flag: flag, value: value, default: defaultText, help) {
      configuration, given throws(ConfigurationError) in
      set(&configuration, try given.integer(in: range))
    }
  }

  /// A string option; `check` may refuse a value (its message says why).
  static func string(
    _ key: String, flag: String? = nil, variable: String? = nil, value: String, default defaultText: String,
    _ help: String,
    _ set: @escaping @Sendable (inout EmulatorConfiguration, String) throws(ConfigurationError) -> Void
  ) -> ConfigOption {
    ConfigOption(key, .string, flag: flag, variable: variable, value: value, default: defaultText, help) {
      configuration, given throws(ConfigurationError) in
      try set(&configuration, try given.string())
    }
  }

  /// A list option: `add` gets each source's items (accumulating) or the winning list (replacing).
  static func list(
    _ key: String, accumulates: Bool = true, flag: String, value: String, _ help: String,
    _ add: @escaping @Sendable (inout EmulatorConfiguration, [String]) throws(ConfigurationError) -> Void
  ) -> ConfigOption {
    ConfigOption(key, .list(accumulates: accumulates), flag: flag, value: value, default: "none", help) {
      configuration, given throws(ConfigurationError) in
      try add(&configuration, try given.strings())
    }
  }

  /// The value given as text by a flag or the environment.
  func value(fromText text: String) throws(ConfigurationError) -> ConfigValue {
    switch kind {
    case .bool:
      switch text.lowercased() {
      case "true", "1", "yes": return .bool(true)
      case "false", "0", "no": return .bool(false)
      default: throw ConfigurationError("must be true or false, got '\(text)'")
      }
    case .integer:
      guard let number = ConfigFileParser.decimalInteger(text.trimmingWhitespace()) else {
        throw ConfigurationError("must be a decimal integer that fits 64 bits, got '\(text)'")
      }
      return .integer(number)
    case .string: return .string(text)
    case .list: return .strings(text.split(whereSeparator: { $0 == "," || $0 == " " }).map(String.init))
    }
  }
}

/// A value of the config file, the environment or a flag.
public enum ConfigValue: Sendable, Equatable {
  case string(String)
  case integer(Int)
  case bool(Bool)
  case strings([String])

  func string() throws(ConfigurationError) -> String {
    guard case .string(let value) = self else { throw ConfigurationError("must be a string, got \(self)") }
    return value
  }

  func integer(in range: ClosedRange<Int>) throws(ConfigurationError) -> Int {
    guard case .integer(let value) = self, range.contains(value) else {
      throw ConfigurationError("must be an integer in \(range.lowerBound)...\(range.upperBound), got \(self)")
    }
    return value
  }

  func bool() throws(ConfigurationError) -> Bool {
    guard case .bool(let value) = self else { throw ConfigurationError("must be true or false, got \(self)") }
    return value
  }

  func strings() throws(ConfigurationError) -> [String] {
    switch self {
    case .strings(let values): return values
    case .string(let value): return [value]
    default: throw ConfigurationError("must be an array of strings, got \(self)")
    }
  }
}

extension ConfigValue: CustomStringConvertible {
  /// As the config file writes it, for messages.
  public var description: String {
    switch self {
    case .string(let text): return "\"\(text)\""
    case .integer(let number): return String(number)
    case .bool(let flag): return String(flag)
    case .strings(let items): return "[" + items.map { "\"\($0)\"" }.joined(separator: ", ") + "]"
    }
  }
}

public struct ConfigurationError: Error, Sendable, Equatable, CustomStringConvertible {
  public var message: String
  public init(_ message: String) { self.message = message }
  public var description: String { message }
}
