import EmulatorHTTP
import Foundation
import Testing

@testable import EmulatorApp

/// Every option of `EmulatorConfiguration.options` from each source (flag, environment, config
/// file), the precedence between them, and the errors for bad values.
@Suite struct OptionSourcesTests {
  /// A value each option accepts that is not its default, as flag or environment text.
  static let samples: [String: String] = [
    "host": "0.0.0.0", "port": "8080", "data_dir": "/tmp/d", "in_memory": "true", "fsync": "true",
    "strict_buckets": "true", "lenient_buckets": "true", "discard_noncurrent": "true",
    // Not the default, which STORAGE_EMULATOR_EVENT_LOOP may have set for the whole test run.
    "event_loop": HTTPServerConfiguration().eventLoop == .portable ? "epoll" : "portable",
    "xml_virtual_host": "xml.test", "buckets": "b1",
    "signing_keys": "k.pem", "hmac_keys": "ID:SECRET", "cors_origins": "https://app.example",
    "allowed_hosts": "app.example", "max_upload_bytes": "5", "max_metadata_bytes": "100",
    "max_request_line_bytes": "100", "max_header_bytes": "1000", "max_header_count": "10", "max_connections": "5",
    "idle_timeout_seconds": "7", "header_timeout_seconds": "7", "body_stall_timeout_seconds": "7",
    "write_stall_timeout_seconds": "7", "upload_session_ttl_seconds": "60", "max_upload_sessions": "5",
    "shutdown_grace_seconds": "9", "blocking_lanes": "3", "event_loops": "63", "rules": "r.rules",
    "firebase_json": "f.json", "seed": "s", "import": "i", "export_on_exit": "e",
    "webhooks": "http://127.0.0.1:1/x", "log_level": "debug", "log_format": "json",
  ]

  static var keys: [String] { EmulatorConfiguration.options.map(\.key) }

  static func option(_ key: String) throws -> ConfigOption {
    try #require(EmulatorConfiguration.optionsByKey[key])
  }

  /// The sample as a config file line.
  static func fileLine(_ option: ConfigOption, _ text: String) -> String {
    switch option.kind {
    case .bool, .integer: return "\(option.key) = \(text)"
    case .string: return "\(option.key) = \"\(text)\""
    case .list: return "\(option.key) = [\"\(text)\"]"
    }
  }

  static func flagArguments(_ option: ConfigOption, _ text: String) -> [String] {
    option.kind == .bool ? [option.flag] : [option.flag, text]
  }

  static func resolve(
    _ arguments: [String] = [], environment: [String: String] = [:], file: String? = nil
  ) throws(ConfigurationError) -> EmulatorConfiguration {
    let all = file == nil ? arguments : ["--config", "test.toml"] + arguments
    return try EmulatorConfiguration.resolve(arguments: all, environment: environment) { _ in file }
  }

  @Test func everyOptionHasASampleHere() {
    #expect(Set(Self.samples.keys) == Set(Self.keys))
    #expect(Set(Self.keys).count == Self.keys.count, "two options share a key")
    #expect(Set(EmulatorConfiguration.options.map(\.flag)).count == Self.keys.count, "two options share a flag")
  }

  @Test(arguments: keys)
  func theOptionWorksFromEachSource(_ key: String) throws {
    let option = try Self.option(key)
    let text = try #require(Self.samples[key])
    let defaults = try Self.resolve()
    let fromFlag = try Self.resolve(Self.flagArguments(option, text))
    let fromInlineFlag = try Self.resolve([option.flag + "=" + text])
    let fromEnvironment = try Self.resolve(environment: [option.variable: text])
    let fromFile = try Self.resolve(file: Self.fileLine(option, text))
    #expect(fromFlag != defaults, "\(option.flag) changed nothing")
    #expect(fromInlineFlag == fromFlag)
    #expect(fromEnvironment == fromFlag, "\(option.variable)")
    #expect(fromFile == fromFlag, "config key \(key)")
  }

  @Test func samplesLandInTheRightFields() throws {
    let all = Self.keys.flatMap { key in
      (try? Self.option(key)).map { Self.flagArguments($0, Self.samples[key]!) } ?? []
    }
    let configuration = try Self.resolve(all)
    #expect(configuration.server.host == "0.0.0.0" && configuration.server.port == 8080)
    #expect(configuration.dataDirectory == "/tmp/d" && configuration.inMemory && configuration.fsync)
    #expect(
      configuration.strictBuckets && configuration.api.lenientBuckets && configuration.api.xmlVirtualHost == "xml.test")
    #expect(
      configuration.buckets == ["b1"] && configuration.signingKeyFiles == ["k.pem"]
        && configuration.hmacKeys == ["ID:SECRET"])
    #expect(configuration.origins.allows("https://app.example") && configuration.allowedHosts == ["app.example"])
    #expect(configuration.api.maxUploadBytes == 5 && configuration.api.maxMetadataBytes == 100)
    #expect(
      configuration.server.limits.maxRequestLineBytes == 100 && configuration.server.limits.maxHeaderBytes == 1000)
    #expect(configuration.server.limits.maxHeaderCount == 10 && configuration.server.maxConnections == 5)
    let timeouts = configuration.server.timeouts
    #expect(
      [timeouts.idleSeconds, timeouts.headerSeconds, timeouts.bodyStallSeconds, timeouts.writeStallSeconds] == [
        7, 7, 7, 7,
      ])
    #expect(configuration.uploadSessions.ttlSeconds == 60 && configuration.uploadSessions.maxOpen == 5)
    #expect(configuration.shutdownGraceSeconds == 9 && configuration.server.blockingLanes == 3)
    #expect(configuration.server.eventLoops == 63)
    #expect(configuration.rulesFile == "r.rules" && configuration.firebaseJSON == "f.json")
    #expect(
      configuration.seedDirectory == "s" && configuration.importDirectory == "i" && configuration.exportOnExit == "e")
    #expect(configuration.webhooks == ["http://127.0.0.1:1/x"])
    #expect(configuration.logLevel == .debug && configuration.logFormat == .json)
  }

  @Test func flagsOverrideTheEnvironmentWhichOverridesTheFile() throws {
    let file = "port = 1001\nhost = \"10.0.0.1\"\nlog_level = \"error\"\nfsync = true\ndata_dir = \"file\"\n"
    let environment = [
      "STORAGE_EMULATOR_PORT": "1002", "STORAGE_EMULATOR_LISTEN_HOST": "10.0.0.2",
      "STORAGE_EMULATOR_LOG_LEVEL": "warning", "STORAGE_EMULATOR_FSYNC": "false",
    ]
    let fileOnly = try Self.resolve(file: file)
    #expect(fileOnly.server.port == 1001 && fileOnly.server.host == "10.0.0.1" && fileOnly.logLevel == .error)
    #expect(fileOnly.fsync && fileOnly.dataDirectory == "file")
    let fileAndEnvironment = try Self.resolve(environment: environment, file: file)
    #expect(fileAndEnvironment.server.port == 1002 && fileAndEnvironment.server.host == "10.0.0.2")
    #expect(fileAndEnvironment.logLevel == .warning && !fileAndEnvironment.fsync)
    #expect(fileAndEnvironment.dataDirectory == "file", "what the environment does not set stays the file's")
    let all = try Self.resolve(
      ["--port", "1003", "--host=10.0.0.3", "--log-level", "info", "--fsync"], environment: environment, file: file)
    #expect(all.server.port == 1003 && all.server.host == "10.0.0.3" && all.logLevel == .info && all.fsync)
    let negated = try Self.resolve(["--no-fsync"], environment: ["STORAGE_EMULATOR_FSYNC": "1"])
    #expect(!negated.fsync)
    #expect(try Self.resolve(["--port", "1", "--port", "2"]).server.port == 2, "a repeated flag: the last wins")
  }

  @Test func allowListsAddUpAcrossSourcesAndWebhooksAreReplaced() throws {
    let file = "buckets = [\"file\"]\nhmac_keys = [\"F:1\"]\nwebhooks = [\"http://h/file\"]\n"
    let environment = [
      "STORAGE_EMULATOR_BUCKETS": "env1, env2", "STORAGE_EMULATOR_HMAC_KEYS": "E:1",
      "STORAGE_EMULATOR_WEBHOOKS": "http://h/env",
    ]
    let merged = try Self.resolve(["--bucket", "flag", "--hmac-key", "G:1"], environment: environment, file: file)
    #expect(merged.buckets == ["file", "env1", "env2", "flag"])
    #expect(merged.hmacKeys == ["F:1", "E:1", "G:1"])
    #expect(merged.webhooks == ["http://h/env"])
    let flagged = try Self.resolve(
      ["--webhook", "http://h/a", "--webhook", "http://h/b"], environment: environment, file: file)
    #expect(flagged.webhooks == ["http://h/a", "http://h/b"])
  }

  @Test func theConfigFileCanBeNamedByTheEnvironmentAndAFlagWins() throws {
    var asked: [String] = []
    let configuration = try EmulatorConfiguration.resolve(
      arguments: [], environment: ["STORAGE_EMULATOR_CONFIG": "env.toml"]
    ) { path in
      asked.append(path)
      return "port = 1234"
    }
    #expect(configuration.server.port == 1234 && asked == ["env.toml"])
    _ = try EmulatorConfiguration.resolve(
      arguments: ["--config", "flag.toml"], environment: ["STORAGE_EMULATOR_CONFIG": "env.toml"]
    ) {
      asked.append($0)
      return ""
    }
    #expect(asked.last == "flag.toml")
    #expect(throws: ConfigurationError("cannot read the config file 'missing.toml'")) {
      try EmulatorConfiguration.resolve(arguments: ["--config", "missing.toml"], environment: [:]) { _ in nil }
    }
  }

  @Test func theClientsStorageEmulatorHostVariableIsNotTheListenAddress() throws {
    let configuration = try Self.resolve(environment: ["STORAGE_EMULATOR_HOST": "http://127.0.0.1:9199"])
    #expect(configuration.server.host == "127.0.0.1")
  }

  /// Bad text for each kind of option, and the prefix the error must start with for each source.
  @Test(arguments: keys)
  func badValuesAreErrorsNamingTheSource(_ key: String) throws {
    let option = try Self.option(key)
    let bad: String
    switch option.kind {
    case .bool: bad = "maybe"
    case .integer: bad = "-1"
    case .string, .list:
      guard ["log_level", "log_format", "webhooks", "cors_origins", "allowed_hosts"].contains(key) else { return }
      bad = key == "allowed_hosts" ? "a/b" : "not valid"
    }
    let cases: [(() throws(ConfigurationError) -> EmulatorConfiguration, String)] = [
      ({ () throws(ConfigurationError) in try Self.resolve([option.flag + "=" + bad]) }, "\(option.flag): "),
      (
        { () throws(ConfigurationError) in try Self.resolve(environment: [option.variable: bad]) },
        "\(option.variable): "
      ),
      (
        { () throws(ConfigurationError) in
          try Self.resolve(file: option.kind == .bool ? "\(key) = \"\(bad)\"" : Self.fileLine(option, bad))
        }, "test.toml:1: \(key): "
      ),
    ]
    for (attempt, prefix) in cases {
      do {
        _ = try attempt()
        Issue.record("\(key): '\(bad)' was accepted (\(prefix))")
      } catch {
        #expect(error.message.hasPrefix(prefix), "\(error.message)")
      }
    }
  }

  @Test func integersAreOverflowCheckedAndRangeChecked() {
    for text in ["99999999999999999999", "12abc", "0x10", ""] {
      #expect(throws: ConfigurationError.self, "\(text)") { try Self.resolve(["--port", text]) }
    }
    #expect(throws: ConfigurationError("--port: must be an integer in 0...65535, got 65536")) {
      try Self.resolve(["--port", "65536"])
    }
    #expect(throws: ConfigurationError("test.toml:1: port: must be an integer in 0...65535, got \"80\"")) {
      try Self.resolve(file: "port = \"80\"")
    }
  }

  @Test func unknownFlagsKeysAndArgumentsAreErrors() {
    #expect(throws: ConfigurationError("unknown option '--prot' (see --help)")) { try Self.resolve(["--prot", "1"]) }
    #expect(throws: ConfigurationError("unknown option '--no-port' (see --help)")) { try Self.resolve(["--no-port"]) }
    #expect(throws: ConfigurationError("unexpected argument 'extra' (options start with --; see --help)")) {
      try Self.resolve(["extra"])
    }
    #expect(throws: ConfigurationError("--port needs a value")) { try Self.resolve(["--port"]) }
    #expect(throws: ConfigurationError("test.toml:2: prot: unknown key (config/storage-emulator.toml lists every key)"))
    {
      try Self.resolve(file: "port = 1\nprot = 2")
    }
  }
}
