import EmulatorApp
import EmulatorStorage
import Foundation
import Testing

/// `--signing-key`, `--hmac-key` and their config keys, into the emulator; a bad key stops
/// start-up with a message naming it. (Signed requests over sockets: scripts/suites/signed-urls.)
@Suite struct SigningConfigTests {
  @Test func flagsAndConfigKeysAreRead() throws {
    let parsed = try CommandLineTool.parse(["--signing-key", "a.pem", "--signing-key", "sa.json", "--hmac-key", "ID:SECRET"])
    #expect(parsed.signingKeyFiles == ["a.pem", "sa.json"])
    #expect(parsed.hmacKeys == ["ID:SECRET"])
    var configuration = EmulatorConfiguration()
    try configuration.apply(configFile: "signing_keys = [\"k.pem\"]\nhmac_keys = [\"A:B\", \"C:D\"]")
    #expect(configuration.signingKeyFiles == ["k.pem"])
    #expect(configuration.hmacKeys == ["A:B", "C:D"])
    #expect(throws: ConfigurationError.self) { try CommandLineTool.parse(["--signing-key"]) }
  }

  @Test func theShippedConfigFileHasNoKeys() throws {
    let file = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
      .deletingLastPathComponent().appendingPathComponent("config/storage-emulator.toml")
    var configuration = EmulatorConfiguration()
    try configuration.apply(configFile: try String(contentsOf: file, encoding: .utf8))
    #expect(configuration.signingKeyFiles.isEmpty && configuration.hmacKeys.isEmpty)
  }

  @Test(arguments: [
    (["/nonexistent/signer.pem"], [String](), "cannot read the signing key file '/nonexistent/signer.pem'"),
    ([String](), ["no-colon"], "ACCESS_ID:SECRET"),
  ])
  func aBadKeyStopsStartUpNamingIt(_ files: [String], _ hmac: [String], _ expected: String) throws {
    var configuration = EmulatorConfiguration()
    configuration.inMemory = true
    configuration.signingKeyFiles = files
    configuration.hmacKeys = hmac
    do {
      let emulator = try makeEmulator(configuration)
      emulator.api.sessions.stopSweeping()
      Issue.record("the emulator started with a bad key")
    } catch {
      guard case .invalid(let message) = error else {
        Issue.record("unexpected error \(error)")
        return
      }
      #expect(message.contains(expected))
    }
  }

  @Test func aGarbageKeyFileIsRefused() throws {
    let file = FileManager.default.temporaryDirectory.appendingPathComponent("se-key-\(UUID().uuidString).pem")
    try Data("-----BEGIN PUBLIC KEY-----\nnot base64\n-----END PUBLIC KEY-----\n".utf8).write(to: file)
    defer { try? FileManager.default.removeItem(at: file) }
    var configuration = EmulatorConfiguration()
    configuration.inMemory = true
    configuration.signingKeyFiles = [file.path]
    #expect(throws: StorageError.self) { _ = try makeEmulator(configuration) }
  }
}
