@testable import EmulatorApp
import EmulatorHTTP
import Foundation
import Testing

/// Options that existed before the option table, from flags, the environment and the config file
/// (moved from EndToEndTests: they need no socket).
@Suite struct SettingSourcesTests {
  @Test func levelAndFormatFromFlagsEnvironmentAndConfigFile() throws {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("se-log-\(UUID().uuidString).toml")
    defer { try? FileManager.default.removeItem(at: folder) }
    try "log_level = \"warning\"\nlog_format = \"json\"\n".write(to: folder, atomically: true, encoding: .utf8)
    let defaults = try CommandLineTool.parse([], environment: [:])
    #expect(defaults.logLevel == .notice)
    #expect(defaults.logFormat == .text)
    let fromFile = try CommandLineTool.parse(["--config", folder.path], environment: [:])
    #expect(fromFile.logLevel == .warning)
    #expect(fromFile.logFormat == .json)
    // The environment overrides the file; flags override both.
    let environment = ["STORAGE_EMULATOR_LOG_LEVEL": "DEBUG", "STORAGE_EMULATOR_LOG_FORMAT": "text"]
    let fromEnvironment = try CommandLineTool.parse(["--config", folder.path], environment: environment)
    #expect(fromEnvironment.logLevel == .debug)
    #expect(fromEnvironment.logFormat == .text)
    let fromFlags = try CommandLineTool.parse(
      ["--log-level", "error", "--log-format", "json"], environment: environment)
    #expect(fromFlags.logLevel == .error)
    #expect(fromFlags.logFormat == .json)
    #expect(throws: ConfigurationError.self) { try CommandLineTool.parse(["--log-level", "loud"], environment: [:]) }
    #expect(throws: ConfigurationError.self) { try CommandLineTool.parse(["--log-format", "xml"], environment: [:]) }
    #expect(throws: ConfigurationError.self) {
      try CommandLineTool.parse([], environment: ["STORAGE_EMULATOR_LOG_LEVEL": "chatty"])
    }
  }

  @Test func webhookURLsFromFlagsAndConfigAreChecked() throws {
    let parsed = try CommandLineTool.parse(
      ["--webhook", "http://127.0.0.1:8080/a", "--webhook", "http://[::1]:9/b?c"], environment: [:])
    #expect(parsed.webhooks == ["http://127.0.0.1:8080/a", "http://[::1]:9/b?c"])
    for bad in ["https://example.com/", "ftp://x", "http://", "http://host:99999/", "http://a b/", "http://u@h/"] {
      #expect(throws: ConfigurationError.self, "\(bad)") {
        try CommandLineTool.parse(["--webhook", bad], environment: [:])
      }
    }
    var configuration = EmulatorConfiguration()
    try configuration.apply(configFile: #"webhooks = ["http://localhost:7000/events"]"#)
    #expect(configuration.webhooks == ["http://localhost:7000/events"])
    #expect(throws: ConfigurationError.self) { try configuration.apply(configFile: #"webhooks = ["nope"]"#) }
    let endpoint = try #require(WebhookDispatcher.Endpoint("http://[::1]:9/b?c"))
    #expect(endpoint.host == "::1")
    #expect(endpoint.port == 9)
    #expect(endpoint.target == "/b?c")
    #expect(WebhookDispatcher.Endpoint("http://host")?.target == "/")
    #expect(WebhookDispatcher.Endpoint("http://host")?.port == 80)
  }

  @Test func originsAndHostsFromFlagsEnvironmentAndConfigFile() throws {
    let file = FileManager.default.temporaryDirectory.appendingPathComponent("se-cors-\(UUID().uuidString).toml")
    try "cors_origins = [\"https://file.example\"]\nallowed_hosts = [\"file-host\"]\n".write(
      to: file, atomically: true, encoding: .utf8)
    defer { try? FileManager.default.removeItem(at: file) }
    let parsed = try CommandLineTool.parse(
      ["--config", file.path, "--cors-origin", "https://flag.example", "--allowed-host", "flag-host"],
      environment: [
        "STORAGE_EMULATOR_CORS_ORIGINS": "https://env.example, http://env2.example:8080",
        "STORAGE_EMULATOR_ALLOWED_HOSTS": "env-host",
      ])
    for origin in ["https://file.example", "https://flag.example", "https://env.example", "http://env2.example:8080"] {
      #expect(parsed.origins.allows(origin), "\(origin)")
    }
    #expect(!parsed.origins.allows("https://other.example"))
    #expect(parsed.origins.allows("http://localhost:3000"))
    let hosts = parsed.crossOrigin.hosts
    for host in ["file-host", "flag-host:9199", "env-host", "localhost"] { #expect(hosts.allows(host), "\(host)") }
    #expect(!hosts.allows("other-host"))
    // The shipped config file lists the keys with their defaults.
    let shipped = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
      .deletingLastPathComponent().appendingPathComponent("config/storage-emulator.toml")
    var defaults = EmulatorConfiguration()
    try defaults.apply(configFile: try String(contentsOf: shipped, encoding: .utf8))
    #expect(defaults.origins.origins.isEmpty && defaults.allowedHosts.isEmpty)
    #expect(throws: ConfigurationError.self) {
      try CommandLineTool.parse(["--cors-origin", "app.example.com"], environment: [:])
    }
    #expect(throws: ConfigurationError.self) { try CommandLineTool.parse(["--allowed-host", "a/b"], environment: [:]) }
    #expect(throws: ConfigurationError.self) {
      try CommandLineTool.parse([], environment: ["STORAGE_EMULATOR_CORS_ORIGINS": "not an origin"])
    }
  }
}
