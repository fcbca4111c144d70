import Foundation
import Testing

@testable import EmulatorApp

/// `config/storage-emulator.toml`, README's options table and `--help` against the option list,
/// and the command line's routing to `serve` and `health` (no process started).
@Suite struct ShippedOptionDocsTests {
  static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent()

  static func text(_ path: String) throws -> String {
    try String(contentsOf: root.appendingPathComponent(path), encoding: .utf8)
  }

  @Test func theExampleConfigFileParsesToTheDefaults() throws {
    var fromFile = EmulatorConfiguration()
    try fromFile.apply(configFile: try Self.text("config/storage-emulator.toml"), name: "storage-emulator.toml")
    var defaults = EmulatorConfiguration()
    defaults.server.eventLoops = fromFile.server.eventLoops  // the default is the core count
    #expect(fromFile == defaults)
  }

  @Test func theExampleConfigFileNamesEveryOptionAndItsCommentedLinesParse() throws {
    let text = try Self.text("config/storage-emulator.toml")
    // Commented `# key = value` lines (and the rest of an array they open) uncommented.
    var uncommented: [String] = []
    var inArray = false
    for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
      let key = line.dropFirst(2).prefix { $0 != " " }
      if line.hasPrefix("# "), inArray || EmulatorConfiguration.optionsByKey[String(key)] != nil && line.contains(" = ")
      {
        uncommented.append(String(line.dropFirst(2)))
        inArray = line.hasSuffix("[") || inArray && !line.hasSuffix("]")
      } else {
        uncommented.append(String(line))
      }
    }
    for option in EmulatorConfiguration.options {
      let set = uncommented.contains { $0.hasPrefix(option.key + " = ") }
      #expect(set, "config/storage-emulator.toml has no `\(option.key) = …` line, commented or not")
    }
    var configuration = EmulatorConfiguration()
    try configuration.apply(configFile: uncommented.joined(separator: "\n"), name: "uncommented")
    #expect(configuration != EmulatorConfiguration(), "no commented example line was found")
  }

  @Test func theReadmeOptionsTableNamesEveryFlagVariableAndKey() throws {
    let readme = try Self.text("README.md")
    let start = try #require(readme.range(of: "\n## Configuration\n"))
    let end = readme.range(of: "\n## ", range: start.upperBound..<readme.endIndex)?.lowerBound ?? readme.endIndex
    let section = readme[start.upperBound..<end]
    for option in EmulatorConfiguration.options {
      let row = section.split(separator: "\n").first { $0.contains("`\(option.key)`") }
      let flag = option.kind == .bool ? option.flag.replacingOccurrences(of: "--", with: "--[no-]") : option.flag
      #expect(row?.contains("`\(flag)") == true, "README has no row with `\(option.key)` and \(flag)")
      #expect(row?.contains("`\(option.variable)`") == true, "README's row for \(option.key) lacks \(option.variable)")
    }
  }

  @Test func helpListsEveryOptionWithItsSources() {
    for help in [
      StorageEmulatorCommand.helpMessage(columns: 100),
      StorageEmulatorCommand.helpMessage(for: Serve.self, columns: 80),
    ] {
      for option in EmulatorConfiguration.options {
        #expect(
          help.contains(option.flag.replacingOccurrences(of: "--", with: option.kind == .bool ? "--[no-]" : "--")))
        #expect(help.contains(option.variable) && help.contains("key \(option.key)"), "\(option.key)")
      }
      #expect(help.contains("--config FILE") && help.contains("STORAGE_EMULATOR_CONFIG"))
    }
    for line in EmulatorConfiguration.optionsHelp.split(separator: "\n") {
      #expect(line.count < 80, "help line of 80 columns or more (the parser would wrap it): \(line)")
    }
  }

  @Test func serveIsTheDefaultSubcommandAndTakesTheOptions() throws {
    let bare = try #require(try StorageEmulatorCommand.parseAsRoot(["--port", "1", "--in-memory"]) as? Serve)
    #expect(bare.options == ["--port", "1", "--in-memory"])
    let named = try #require(try StorageEmulatorCommand.parseAsRoot(["serve", "--bucket=b"]) as? Serve)
    #expect(named.options == ["--bucket=b"])
  }

  @Test func healthTakesHostAndPortAndRefusesABadPort() throws {
    let health = try #require(
      try StorageEmulatorCommand.parseAsRoot(["health", "--host", "::1", "--port", "5"]) as? Health)
    #expect(health.host == "::1" && health.port == 5)
    for bad in [
      ["health", "--port", "0"], ["health", "--port", "x"], ["health", "--port", "70000"], ["health", "extra"],
    ] {
      #expect(throws: (any Error).self, "\(bad)") { try StorageEmulatorCommand.parseAsRoot(bad) }
    }
  }
}
