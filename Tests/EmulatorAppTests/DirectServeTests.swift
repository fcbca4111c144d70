import Foundation
import Testing

@testable import EmulatorApp

/// `CommandLineTool.directServeConfiguration`: a plain `[serve] OPTIONS` start skips the argument
/// parser and gets the configuration `Serve` would have made; everything the parser answers
/// itself (subcommands, help, version, completions, errors) still goes to it. No process started.
@Suite struct DirectServeTests {
  static let noEnvironment: [String: String] = [:]

  @Test func plainOptionsGetTheConfigurationServeWouldMake() throws {
    for arguments in [
      ["--in-memory", "--port", "0"], ["serve", "--in-memory", "--port", "0"], ["--port=0", "--in-memory"],
      ["--bucket", "a", "--bucket=b", "--no-strict-buckets"], [], ["serve"],
    ] {
      let direct = try #require(
        CommandLineTool.directServeConfiguration(arguments, environment: Self.noEnvironment), "\(arguments)")
      let options = arguments.first == "serve" ? Array(arguments.dropFirst()) : arguments
      // What `Serve.run` parses: the options the argument parser hands it.
      let served = try #require(try StorageEmulatorCommand.parseAsRoot(arguments) as? Serve)
      #expect(served.options == options)
      #expect(direct == (try CommandLineTool.parse(served.options, environment: Self.noEnvironment)), "\(arguments)")
    }
    let memory = try #require(
      CommandLineTool.directServeConfiguration(["--in-memory", "--port", "7"], environment: Self.noEnvironment))
    #expect(memory.inMemory && memory.server.port == 7)
    let buckets = try #require(
      CommandLineTool.directServeConfiguration(
        ["serve", "--bucket", "a", "--bucket=b"], environment: Self.noEnvironment))
    #expect(buckets.buckets == ["a", "b"])
  }

  /// The variables the configuration reads, as the process has them, and no others.
  @Test func theEmulatorEnvironmentIsTheConfigurationsVariables() {
    let names = Set(EmulatorConfiguration.options.map(\.variable) + [EmulatorConfiguration.configFileVariable])
    #expect(names.contains("STORAGE_EMULATOR_LISTEN_HOST") && names.contains("STORAGE_EMULATOR_PORT"))
    let all = ProcessInfo.processInfo.environment
    #expect(CommandLineTool.emulatorEnvironment() == all.filter { names.contains($0.key) })
    #expect(all["PATH"] != nil && CommandLineTool.emulatorEnvironment()["PATH"] == nil)
  }

  @Test func theEnvironmentStillCounts() throws {
    let configuration = try #require(
      CommandLineTool.directServeConfiguration(["--in-memory"], environment: ["STORAGE_EMULATOR_PORT": "1234"]))
    #expect(configuration.server.port == 1234)
  }

  /// Help, version and completion requests anywhere, even as an option's value, are the parser's.
  @Test func requestsTheArgumentParserAnswersGoToIt() {
    for arguments in [
      ["--help"], ["-h"], ["-help"], ["--version"], ["serve", "--help"], ["--in-memory", "--help"],
      ["--host", "--help"], ["--host", "-h"], ["--host", "--version"], ["--host", "-vh"],
      ["--generate-completion-script", "bash"], ["--generate-completion-script=zsh"],
      ["--experimental-dump-help"], ["---completion", "--", "positional@0", "0", "0"], ["--help=x"],
    ] {
      #expect(
        CommandLineTool.directServeConfiguration(arguments, environment: Self.noEnvironment) == nil, "\(arguments)")
    }
  }

  /// Subcommands and anything the options parser refuses: the argument parser reports them as
  /// before (usage error, exit code 64), so the direct path must not take them.
  @Test func subcommandsAndBadOptionsGoToTheArgumentParser() {
    for arguments in [
      ["health"], ["health", "--port", "9199"], ["help"], ["help", "serve"], ["serve", "serve"],
      ["--port", "x"], ["--prot", "1"], ["--port"], ["extra"], ["--", "--in-memory"], ["--in-memory", "extra"],
    ] {
      #expect(
        CommandLineTool.directServeConfiguration(arguments, environment: Self.noEnvironment) == nil, "\(arguments)")
    }
    let badVariable = ["STORAGE_EMULATOR_MAX_CONNECTIONS": "0"]
    #expect(CommandLineTool.directServeConfiguration(["--in-memory"], environment: badVariable) == nil)
    #expect(
      CommandLineTool.directServeConfiguration(["--config", "/no/such/file.toml"], environment: Self.noEnvironment)
        == nil)
  }
}
