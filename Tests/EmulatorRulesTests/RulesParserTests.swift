import Testing

@testable import EmulatorRules

@Suite struct RulesParserTests {
  func error(_ source: String) -> RulesSyntaxError? {
    do {
      _ = try Ruleset(source: source, file: "storage.rules")
      return nil
    } catch {
      return error
    }
  }

  @Test func parsesTheDefaultRules() throws {
    let ruleset = try Ruleset(
      source: """
        rules_version = '2';
        service firebase.storage {
          match /b/{bucket}/o {
            match /{allPaths=**} {
              allow read, write: if false;
            }
          }
        }
        """)
    #expect(ruleset.version == 2)
  }

  @Test func versionDefaultsToOne() throws {
    #expect(try Ruleset(source: "service firebase.storage { }").version == 1)
  }

  @Test func errorsNameFileLineAndColumn() {
    let failure = error("service firebase.storage {\n  match /b/{bucket}/o {\n    allow reed: if true;\n  }\n}")
    #expect(failure?.description.hasPrefix("storage.rules:3:11: ") == true, "\(String(describing: failure))")
    #expect(failure?.message.contains("'reed' is not a method") == true)
  }
}
