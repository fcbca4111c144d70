import Dispatch
import EmulatorStorage
import Foundation
import Logging

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// The `storage-emulator` command: serving is the default action.
public enum CommandLineTool {
  public static let version = "0.1.0"

  static let usage = """
    Usage: storage-emulator [serve] [options]
           storage-emulator health [--host HOST] [--port PORT]   (exit 0 when GET /internal/health is 200)

    A local emulator of Cloud Storage: the Firebase Storage /v0 API and the GCS JSON API.

    Options:
      --host HOST          address to listen on (default 127.0.0.1)
      --port PORT          port (default 9199; 0 picks a free port)
      --data-dir DIR       data folder (default ./storage-emulator-data)
      --in-memory          keep everything in memory; nothing is written to disk
      --fsync              sync to disk before acknowledging writes
      --strict-buckets     refuse uploads to buckets that were not created first, on
                           every surface (Firebase /v0 included)
      --lenient-buckets    a write on a GCS surface to a missing bucket creates it
                           (default: 404 as on GCS; Firebase /v0 always creates it)
      --discard-noncurrent-on-bucket-delete
                           deleting a bucket holding only noncurrent generations
                           discards them (default: 409 as on GCS)
      --xml-virtual-host H the XML API answers Host: <bucket>.H (default localhost)
      --bucket NAME        create this bucket at start-up (repeatable)
      --signing-key FILE   verify signed URLs with this RSA key: PEM public key, PEM
                           certificate or service-account JSON (repeatable)
      --hmac-key ID:SECRET verify GOOG4-HMAC-SHA256 signed URLs with this HMAC key (repeatable)
      --cors-origin ORIGIN allow this web origin (scheme://host[:port], or *) besides the
                           loopback ones (repeatable; also STORAGE_EMULATOR_CORS_ORIGINS)
      --allowed-host NAME  answer requests whose Host is NAME (repeatable; * for any); by
                           default, on a loopback address, only localhost and IP addresses
                           (also STORAGE_EMULATOR_ALLOWED_HOSTS)
      --seed DIR           load DIR at start-up: DIR/<bucket>/<object path>; NAME.meta.json
                           beside a file holds its metadata (idempotent)
      --import DIR         load a Firebase emulator export (firebase-export-metadata.json,
                           storage_export/) at start-up
      --export-on-exit DIR write a Firebase emulator export to DIR on a clean stop
      --webhook URL        POST a CloudEvent for every change to URL (http only; repeatable)
      --log-level LEVEL    trace, debug, info (one line per request), notice (default),
                           warning, error or critical (env STORAGE_EMULATOR_LOG_LEVEL)
      --log-format FORMAT  text (default) or json (env STORAGE_EMULATOR_LOG_FORMAT)
      --rules FILE         enforce these Firebase security rules on /v0 (reloaded when
                           the file changes); without rules everything is allowed
      --firebase-json FILE take the rules from this firebase.json's "storage" section
      --upload-session-ttl SECONDS
                           resumable sessions untouched this long expire (default 86400)
      --max-upload-sessions N
                           open resumable sessions at most (default 1000; 429 past it)
      --config FILE        read settings from FILE (see config/storage-emulator.toml);
                           the environment overrides it, flags override both
      --version            print the version
      -h, --help           print this help
    """

  /// Parses arguments (without the program name) into a configuration.
  public static func parse(
    _ arguments: [String], environment: [String: String] = ProcessInfo.processInfo.environment
  ) throws(ConfigurationError) -> EmulatorConfiguration? {
    var args = arguments[...]
    if args.first == "serve" { args = args.dropFirst() }
    // The config file first, so that flags override it whatever their order.
    var configuration = EmulatorConfiguration()
    if let index = args.firstIndex(of: "--config") {
      guard index + 1 < args.endIndex else { throw ConfigurationError("--config needs a file") }
      let path = args[index + 1]
      guard let text = try? String(contentsOfFile: path, encoding: .utf8) else {
        throw ConfigurationError("cannot read the config file '\(path)'")
      }
      try configuration.apply(configFile: text, name: path)
    }
    if let level = environment["STORAGE_EMULATOR_LOG_LEVEL"], !level.isEmpty {
      configuration.logLevel = try Logger.Level.parse(level)
    }
    if let format = environment["STORAGE_EMULATOR_LOG_FORMAT"], !format.isEmpty {
      configuration.logFormat = try LogFormat.parse(format)
    }
    try configuration.apply(environment: environment)
    var flagBuckets: [String] = []
    var flagWebhooks: [String] = []
    var flagHosts: [String] = []
    while let argument = args.first {
      args = args.dropFirst()
      func value() throws(ConfigurationError) -> String {
        guard let next = args.first else { throw ConfigurationError("\(argument) needs a value") }
        args = args.dropFirst()
        return next
      }
      switch argument {
      case "-h", "--help": return nil
      case "--version":
        say("storage-emulator \(version)")
        exit(0)
      case "--config": _ = try value()
      case "--host": configuration.server.host = try value()
      case "--port":
        let text = try value()
        guard let port = Int(text), (0...65535).contains(port) else {
          throw ConfigurationError("--port must be 0...65535, got '\(text)'")
        }
        configuration.server.port = port
      case "--data-dir": configuration.dataDirectory = try value()
      case "--in-memory": configuration.inMemory = true
      case "--fsync": configuration.fsync = true
      case "--strict-buckets": configuration.strictBuckets = true
      case "--lenient-buckets": configuration.api.lenientBuckets = true
      case "--discard-noncurrent-on-bucket-delete": configuration.api.discardNoncurrentOnBucketDelete = true
      case "--xml-virtual-host": configuration.api.xmlVirtualHost = try value()
      case "--bucket": flagBuckets.append(try value())
      case "--signing-key": configuration.signingKeyFiles.append(try value())
      case "--hmac-key": configuration.hmacKeys.append(try value())
      case "--cors-origin": try configuration.addOrigins([try value()])
      case "--allowed-host": flagHosts.append(try value())
      case "--seed": configuration.seedDirectory = try value()
      case "--import": configuration.importDirectory = try value()
      case "--export-on-exit": configuration.exportOnExit = try value()
      case "--webhook":
        let url = try value()
        guard WebhookDispatcher.Endpoint(url) != nil else {
          throw ConfigurationError("--webhook needs an http://host[:port][/path] URL, got '\(url)'")
        }
        flagWebhooks.append(url)
      case "--log-level": configuration.logLevel = try Logger.Level.parse(try value())
      case "--log-format": configuration.logFormat = try LogFormat.parse(try value())
      case "--rules": configuration.rulesFile = try value()
      case "--firebase-json": configuration.firebaseJSON = try value()
      case "--upload-session-ttl":
        try configuration.set("upload_session_ttl_seconds", integer(argument, try value()))
      case "--max-upload-sessions": try configuration.set("max_upload_sessions", integer(argument, try value()))
      default: throw ConfigurationError("unknown argument '\(argument)' (see --help)")
      }
    }
    configuration.buckets += flagBuckets
    try configuration.addAllowedHosts(flagHosts)
    if !flagWebhooks.isEmpty { configuration.webhooks = flagWebhooks }
    return configuration
  }

  private static func integer(_ flag: String, _ text: String) throws(ConfigurationError) -> ConfigValue {
    guard let number = Int(text) else { throw ConfigurationError("\(flag) needs an integer, got '\(text)'") }
    return .integer(number)
  }

  /// Runs the command; never returns.
  public static func main(_ arguments: [String] = Array(CommandLine.arguments.dropFirst())) -> Never {
    if arguments.first == "health" { exit(HealthCheck.run(Array(arguments.dropFirst()))) }
    ShutdownSignals.block()
    let configuration: EmulatorConfiguration
    do {
      guard let parsed = try parse(arguments) else {
        say(usage)
        exit(0)
      }
      configuration = parsed
    } catch {
      FileHandle.standardError.write(Data("storage-emulator: \(error.message)\n".utf8))
      exit(2)
    }
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
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
  }
}
