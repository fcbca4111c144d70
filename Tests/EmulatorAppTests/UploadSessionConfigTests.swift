import EmulatorApp
import EmulatorStorage
import Foundation
import Testing

/// The upload-session options from the shipped config file, the flags, and into the emulator.
@Suite struct UploadSessionConfigTests {
  @Test func theShippedConfigFileSetsTheDefaults() throws {
    let file = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
      .deletingLastPathComponent().appendingPathComponent("config/storage-emulator.toml")
    var configuration = EmulatorConfiguration()
    try configuration.apply(configFile: try String(contentsOf: file, encoding: .utf8))
    #expect(configuration.uploadSessions == UploadSessions.Options())
    #expect(configuration.uploadSessions.ttlSeconds == 86_400)
    #expect(configuration.uploadSessions.maxOpen == 1000)
  }

  @Test func flagsOverrideTheFileAndBadValuesAreRefused() throws {
    let parsed = try CommandLineTool.parse(["--upload-session-ttl", "60", "--max-upload-sessions", "5", "--in-memory"])
    #expect(parsed.uploadSessions.ttlSeconds == 60)
    #expect(parsed.uploadSessions.maxOpen == 5)
    for bad in [["--max-upload-sessions", "0"], ["--max-upload-sessions", "x"], ["--upload-session-ttl", "-1"]] {
      #expect(throws: ConfigurationError.self) { try CommandLineTool.parse(bad) }
    }
    var configuration = EmulatorConfiguration()
    #expect(throws: ConfigurationError.self) { try configuration.apply(configFile: "max_upload_sessions = 0") }
  }

  @Test func theEmulatorUsesTheOptionsAndFsync() throws {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("se-cfg-\(UUID().uuidString)")
    defer { try? FileManager.default.removeItem(at: folder) }
    var configuration = EmulatorConfiguration()
    configuration.dataDirectory = folder.path
    configuration.fsync = true
    configuration.uploadSessions.maxOpen = 7
    configuration.uploadSessions.ttlSeconds = 120
    let emulator = try makeEmulator(configuration)
    defer { emulator.api.sessions.stopSweeping() }
    #expect(emulator.api.sessions.options == UploadSessions.Options(ttlSeconds: 120, maxOpen: 7, fsync: true))
  }
}
