import ArgumentParser
import Dispatch
import EmulatorStorage
import EmulatorSupport
import Logging

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// `storage-emulator [serve] [options]` and `storage-emulator health`, through swift-argument-parser
/// (help, `--version`, usage errors with exit code 64). The serve options are not declared one by
/// one here: `EmulatorConfiguration.options` lists them, reads them from flags, the environment and
/// the config file, and writes their `--help`.
public struct StorageEmulatorCommand: ParsableCommand {
  public static let configuration = CommandConfiguration(
    commandName: "storage-emulator",
    abstract: "A local emulator of Cloud Storage: Firebase Storage /v0, the GCS JSON API and the XML API.",
    discussion: "serve (the default) takes these options:\n\n" + EmulatorConfiguration.optionsHelp,
    version: "storage-emulator \(CommandLineTool.version)",
    subcommands: [Serve.self, Health.self],
    defaultSubcommand: Serve.self
  )

  public init() {}
}

/// `storage-emulator serve`: every option of `EmulatorConfiguration.options`.
struct Serve: ParsableCommand {
  static let configuration = CommandConfiguration(
    abstract: "Serve the emulator (the default subcommand).",
    discussion: EmulatorConfiguration.optionsHelp
  )

  @Argument(parsing: .allUnrecognized, help: "the options listed above")
  var options: [String] = []

  /// A bad option throws `ValidationError`: the message and the usage line, exit code 64.
  func run() throws {
    CommandLineTool.serve(try configuration())
  }

  private func configuration() throws -> EmulatorConfiguration {
    do {
      return try CommandLineTool.parse(options)
    } catch {
      throw ValidationError(error.message)
    }
  }
}

/// `storage-emulator health`: exit 0 when a running emulator answers `GET /internal/health` with 200.
struct Health: ParsableCommand {
  static let configuration = CommandConfiguration(
    abstract: "Exit 0 when the emulator at HOST:PORT answers GET /internal/health with 200, 1 otherwise."
  )

  @Option(help: "the emulator's address") var host = "127.0.0.1"
  @Option(help: "the emulator's port (1...65535)") var port = 9199

  func validate() throws {
    guard (1...65535).contains(port) else { throw ValidationError("--port must be 1...65535, got \(port)") }
  }

  func run() throws {
    throw ExitCode(HealthCheck.run(host: host, port: port))
  }
}

/// Start-up and shutdown of `serve`.
public enum CommandLineTool {
  public static let version = "0.1.0"

  /// The configuration of `serve` with these arguments (without the program name and `serve`).
  public static func parse(
    _ arguments: [String], environment: [String: String] = emulatorEnvironment()
  ) throws(ConfigurationError) -> EmulatorConfiguration {
    try EmulatorConfiguration.resolve(arguments: arguments, environment: environment)
  }

  /// The variables the configuration reads (`STORAGE_EMULATOR_*`), those that are set, each read
  /// with `getenv`: `ProcessInfo.environment` would decode the whole environment into a
  /// dictionary first, an eighth of an `--in-memory` start's instructions.
  public static func emulatorEnvironment() -> [String: String] {
    var variables: [String: String] = [:]
    for name in EmulatorConfiguration.options.map(\.variable) + [EmulatorConfiguration.configFileVariable] {
      if let value = getenv(name) { variables[name] = String(cString: value) }
    }
    return variables
  }

  /// Runs the command line; never returns.
  public static func main(_ arguments: [String] = Array(CommandLine.arguments.dropFirst())) -> Never {
    // First thing, before parsing starts any thread (see ShutdownSignals); not for `health`,
    // which Ctrl-C should stop.
    if arguments.first != "health" { ShutdownSignals.block() }
    if let configuration = directServeConfiguration(arguments) { serve(configuration) }
    StorageEmulatorCommand.main(arguments)
    exit(0)
  }

  /// The configuration of `[serve] OPTIONS` when the argument parser would only hand OPTIONS to
  /// `Serve`, which parses them with `parse` itself; nil for a subcommand, a request for help,
  /// version or completions, or options `parse` refuses (the argument parser then handles them
  /// as before: same messages, same exit codes). Skipping it saves two thirds of the instructions
  /// of an `--in-memory` start: its reflection of the command types and the `--help` text it
  /// builds (BENCHMARKS.md, "instances").
  static func directServeConfiguration(
    _ arguments: [String], environment: [String: String] = emulatorEnvironment()
  ) -> EmulatorConfiguration? {
    let options = arguments.first == "serve" ? Array(arguments.dropFirst()) : arguments
    // Values may be anything: one the argument parser could read as one of its own flags (`-h`,
    // `--help`, `-help`, `--version`, `---completion`, a cluster of short flags) is left to it.
    let parserOwned: Set = ["--help", "--version", "--generate-completion-script", "--experimental-dump-help"]
    for option in options {
      let name = option.split(separator: "=", maxSplits: 1).first.map(String.init) ?? option
      if parserOwned.contains(name) || option.hasPrefix("---") || (option.hasPrefix("-") && !option.hasPrefix("--")) {
        return nil
      }
    }
    return try? parse(options, environment: environment)
  }

  /// Runs the emulator until SIGINT/SIGTERM; never returns.
  static func serve(_ configuration: EmulatorConfiguration) -> Never {
    let sink = LogSink.standardError()
    let logger = Logger(label: "storage-emulator") { _ in
      EmulatorLogHandler(level: configuration.logLevel, format: configuration.logFormat, sink: sink)
    }
    let log: @Sendable (String) -> Void = { line in logger.notice("\(line)") }
    let emulator: Emulator
    let port: Int
    let rules: String
    do {
      emulator = try makeEmulator(configuration, log: log, logger: logger)
    } catch {
      logger.critical("cannot start: \(error)")
      sink.flush()
      exit(1)
    }
    do {
      rules = try emulator.loadRules(log: log)
    } catch {
      logger.critical("cannot start: \(error.message)")
      sink.flush()
      exit(2)
    }
    do {
      port = try emulator.start()
    } catch {
      logger.critical("cannot start: \(error)")
      sink.flush()
      exit(1)
    }
    sink.flush()
    let host = configuration.server.host.contains(":") ? "[\(configuration.server.host)]" : configuration.server.host
    let storage = configuration.inMemory ? "in memory" : "data in \(configuration.dataDirectory)"
    say("storage-emulator \(version) ready on http://\(host):\(port) (\(storage); \(rules))")
    say(clientEnvironment(host: host == "0.0.0.0" ? "127.0.0.1" : host, port: port))
    if configuration.logLevel > .info { say("  request log: off (--log-level info writes one line per request)") }
    _ = ShutdownSignals.wait()
    // SIGINT/SIGTERM: stop accepting, let in-flight requests finish (`shutdown_grace_seconds`), exit 0.
    emulator.stop(gracePeriod: emulator.configuration.shutdownGraceSeconds, log: { say($0) })
    sink.flush()
    say("storage-emulator stopped")
    exit(0)
  }

  /// What each client family needs to find the emulator, printed after the ready line.
  static func clientEnvironment(host: String, port: Int) -> String {
    """
      export STORAGE_EMULATOR_HOST=http://\(host):\(port)    # google-cloud-storage, gcsfs, gcloud-aio, Go, Java, C++
      export FIREBASE_STORAGE_EMULATOR_HOST=\(host):\(port)  # firebase-admin
      Firebase app SDKs: connectStorageEmulator(storage, "\(host)", \(port)) / useEmulator(host, port)
      web UI: http://\(host):\(port)/ui/   health: http://\(host):\(port)/internal/health
    """
  }

  /// One unbuffered line on standard output (scripts wait for the ready line).
  private static func say(_ line: String) {
    let bytes = Array((line + "\n").utf8)
    _ = bytes.withUnsafeBytes { SystemCall.writeAll(STDOUT_FILENO, $0) }
  }
}
