import EmulatorApp
import Foundation
import Testing

/// `--rules`, `--firebase-json` and their config-file keys.
@Suite struct RulesConfigurationTests {
  @Test func flagsSetTheRulesSources() throws {
    let configuration = try CommandLineTool.parse(["--rules", "a.rules", "--firebase-json", "f.json"])
    #expect(configuration.rulesFile == "a.rules")
    #expect(configuration.firebaseJSON == "f.json")
    #expect(throws: ConfigurationError.self) { try CommandLineTool.parse(["--rules"]) }
  }

  @Test func configFileKeysSetTheRulesSources() throws {
    var configuration = EmulatorConfiguration()
    try configuration.apply(configFile: "rules = \"s.rules\"\nfirebase_json = \"firebase.json\"\n")
    #expect(configuration.rulesFile == "s.rules")
    #expect(configuration.firebaseJSON == "firebase.json")
  }

  @Test func missingOrMalformedSourcesAreErrorsNamingTheFile() throws {
    var configuration = EmulatorConfiguration()
    configuration.rulesFile = "/nonexistent/storage.rules"
    #expect(throws: ConfigurationError("cannot read the rules file '/nonexistent/storage.rules'")) {
      try RulesLoader.files(for: configuration)
    }
    let json = FileManager.default.temporaryDirectory.appendingPathComponent("se-fb-\(UUID().uuidString).json")
    defer { try? FileManager.default.removeItem(at: json) }
    try #"{"hosting":{}}"#.write(to: json, atomically: true, encoding: .utf8)
    configuration = EmulatorConfiguration()
    configuration.firebaseJSON = json.path
    #expect(throws: ConfigurationError("\(json.path) has no \"storage\" section")) {
      try RulesLoader.files(for: configuration)
    }
    #expect(try RulesLoader.files(for: EmulatorConfiguration()) == nil)
  }
}
