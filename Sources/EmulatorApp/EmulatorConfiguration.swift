import EmulatorAPI
import EmulatorHTTP
import EmulatorStorage
import Foundation
import Logging

/// Everything that can be configured, from the config file (see `config/storage-emulator.toml`)
/// and the command line; flags override the file.
public struct EmulatorConfiguration: Sendable, Equatable {
  public var server = HTTPServerConfiguration()
  public var api = APILimits()
  /// Where objects are kept; ignored with `inMemory`.
  public var dataDirectory = "./storage-emulator-data"
  public var inMemory = false
  /// Sync files and folders before acknowledging a write (survives power loss, slower).
  public var fsync = false
  /// Refuse uploads to buckets that were not created first.
  public var strictBuckets = false
  /// Buckets created at start-up if missing.
  public var buckets: [String] = []
  /// Files with RSA keys signed URLs are verified with (PEM public key, PEM certificate or a
  /// service-account JSON); with none and no `hmacKeys`, signatures are not checked.
  public var signingKeyFiles: [String] = []
  /// `ACCESS_ID:SECRET` HMAC keys for `GOOG4-HMAC-SHA256` signed URLs.
  public var hmacKeys: [String] = []
  /// Resumable sessions: expiry and cap (`fsync` is taken from above).
  public var uploadSessions = UploadSessions.Options()
  /// On SIGTERM/SIGINT, how long in-flight requests may take to finish.
  public var shutdownGraceSeconds: Double = 5
  /// Web origins allowed besides the loopback ones (`cors_origins`, `--cors-origin`).
  public var origins = OriginPolicy()
  /// `Host` names answered besides loopback names and IP literals (`allowed_hosts`, `--allowed-host`).
  public var allowedHosts: [String] = []
  /// Lowest level logged. `info` adds one line per request (off by default: it costs the GET
  /// path about 20%, see README).
  public var logLevel: Logger.Level = .notice
  public var logFormat: LogFormat = .text
  /// A folder tree loaded as objects at start-up (`--seed`; see `SeedLoader`).
  public var seedDirectory: String?
  /// A Firebase emulator export loaded at start-up (`--import`; see `FirebaseImport`).
  public var importDirectory: String?
  /// Where a Firebase emulator export is written when the emulator stops cleanly.
  public var exportOnExit: String?
  /// URLs that receive a CloudEvent for every change (`--webhook`; see `WebhookDispatcher`).
  public var webhooks: [String] = []
  /// Security rules for the Firebase surface (`--rules`); none: everything allowed.
  public var rulesFile: String?
  /// A `firebase.json` whose `storage` section names the rules (`--firebase-json`).
  public var firebaseJSON: String?

  public init() {}

  static let uploadSessionTTLRange = 1...(366 * 86_400)
  static let maxUploadSessionsRange = 1...1_000_000

  /// Applies `key = value` lines: a TOML subset (strings, integers, booleans, string arrays,
  /// `#` comments). Unknown keys and malformed lines are errors naming the line.
  public mutating func apply(configFile text: String, name: String = "config") throws(ConfigurationError) {
    for (offset, rawLine) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
      let line = Self.stripComment(rawLine).trimmingCharacters(in: .whitespaces)
      if line.isEmpty || line.hasPrefix("[") { continue }
      guard let equals = line.firstIndex(of: "=") else {
        throw ConfigurationError("\(name):\(offset + 1): expected 'key = value'")
      }
      let key = line[..<equals].trimmingCharacters(in: .whitespaces)
      let value = line[line.index(after: equals)...].trimmingCharacters(in: .whitespaces)
      do {
        try set(key, ConfigValue(parsing: value))
      } catch {
        throw ConfigurationError("\(name):\(offset + 1): \(error.message)")
      }
    }
  }

  private static func stripComment(_ line: Substring) -> String {
    var inString = false
    var out = ""
    for character in line {
      if character == "\"" { inString.toggle() }
      if character == "#" && !inString { break }
      out.append(character)
    }
    return out
  }

  /// Sets one key; the names are those of the config file.
  public mutating func set(_ key: String, _ value: ConfigValue) throws(ConfigurationError) {
    switch key {
    case "host": server.host = try value.string(key)
    case "port": server.port = try value.integer(key, in: 0...65535)
    case "data_dir": dataDirectory = try value.string(key)
    case "in_memory": inMemory = try value.bool(key)
    case "fsync": fsync = try value.bool(key)
    case "strict_buckets": strictBuckets = try value.bool(key)
    case "lenient_buckets": api.lenientBuckets = try value.bool(key)
    case "discard_noncurrent_on_bucket_delete": api.discardNoncurrentOnBucketDelete = try value.bool(key)
    case "xml_virtual_host": api.xmlVirtualHost = try value.string(key)
    case "buckets": buckets = try value.strings(key)
    case "signing_keys": signingKeyFiles = try value.strings(key)
    case "hmac_keys": hmacKeys = try value.strings(key)
    case "max_upload_bytes": api.maxUploadBytes = try value.integer(key, in: 0...Int.max)
    case "max_metadata_bytes": api.maxMetadataBytes = try value.integer(key, in: 2...Int.max)
    case "max_request_line_bytes": server.limits.maxRequestLineBytes = try value.integer(key, in: 64...(1 << 20))
    case "max_header_bytes": server.limits.maxHeaderBytes = try value.integer(key, in: 256...(16 << 20))
    case "max_header_count": server.limits.maxHeaderCount = try value.integer(key, in: 1...100_000)
    case "max_connections": server.maxConnections = try value.integer(key, in: 1...1_000_000)
    case "idle_timeout_seconds": server.timeouts.idleSeconds = Double(try value.integer(key, in: 1...86_400))
    case "header_timeout_seconds": server.timeouts.headerSeconds = Double(try value.integer(key, in: 1...86_400))
    case "body_stall_timeout_seconds":
      server.timeouts.bodyStallSeconds = Double(try value.integer(key, in: 1...86_400))
    case "write_stall_timeout_seconds":
      server.timeouts.writeStallSeconds = Double(try value.integer(key, in: 1...86_400))
    case "upload_session_ttl_seconds":
      uploadSessions.ttlSeconds = try value.integer(key, in: Self.uploadSessionTTLRange)
    case "max_upload_sessions": uploadSessions.maxOpen = try value.integer(key, in: Self.maxUploadSessionsRange)
    case "shutdown_grace_seconds": shutdownGraceSeconds = Double(try value.integer(key, in: 0...3600))
    case "rules": rulesFile = try value.string(key)
    case "firebase_json": firebaseJSON = try value.string(key)
    case "blocking_lanes": server.blockingLanes = try value.integer(key, in: 1...256)
    case "event_loops": server.eventLoops = try value.integer(key, in: 1...64)
    case "cors_origins": try addOrigins(try value.strings(key))
    case "allowed_hosts": try addAllowedHosts(try value.strings(key))
    case "seed": seedDirectory = try value.string(key)
    case "import": importDirectory = try value.string(key)
    case "export_on_exit": exportOnExit = try value.string(key)
    case "webhooks":
      webhooks = try value.strings(key)
      for url in webhooks where WebhookDispatcher.Endpoint(url) == nil {
        throw ConfigurationError("'webhooks': '\(url)' is not an http://host[:port][/path] URL")
      }
    case "log_level": logLevel = try Logger.Level.parse(try value.string(key))
    case "log_format": logFormat = try LogFormat.parse(try value.string(key))
    default: throw ConfigurationError("unknown key '\(key)'")
    }
  }
}

public struct ConfigurationError: Error, Sendable, Equatable, CustomStringConvertible {
  public var message: String
  public init(_ message: String) { self.message = message }
  public var description: String { message }
}

/// A value of the config file or a flag.
public enum ConfigValue: Sendable, Equatable {
  case string(String)
  case integer(Int)
  case bool(Bool)
  case strings([String])

  init(parsing text: String) throws(ConfigurationError) {
    if text == "true" {
      self = .bool(true)
    } else if text == "false" {
      self = .bool(false)
    } else if let number = Int(text.replacingOccurrences(of: "_", with: "")) {
      self = .integer(number)
    } else if text.hasPrefix("\"") {
      self = .string(try Self.unquote(text))
    } else if text.hasPrefix("[") && text.hasSuffix("]") {
      let inner = text.dropFirst().dropLast().trimmingCharacters(in: .whitespaces)
      var items: [String] = []
      for part in inner.split(separator: ",") {
        let item = part.trimmingCharacters(in: .whitespaces)
        if !item.isEmpty { items.append(try Self.unquote(item)) }
      }
      self = .strings(items)
    } else {
      throw ConfigurationError("'\(text)' is not a string (in double quotes), integer, boolean or array of strings")
    }
  }

  private static func unquote(_ text: String) throws(ConfigurationError) -> String {
    guard text.count >= 2, text.hasPrefix("\""), text.hasSuffix("\"") else {
      throw ConfigurationError("unterminated string \(text)")
    }
    return String(text.dropFirst().dropLast()).replacingOccurrences(of: "\\\"", with: "\"")
      .replacingOccurrences(of: "\\\\", with: "\\")
  }

  func string(_ key: String) throws(ConfigurationError) -> String {
    guard case .string(let value) = self else { throw ConfigurationError("'\(key)' must be a string") }
    return value
  }

  func integer(_ key: String, in range: ClosedRange<Int>) throws(ConfigurationError) -> Int {
    guard case .integer(let value) = self, range.contains(value) else {
      throw ConfigurationError("'\(key)' must be an integer in \(range.lowerBound)...\(range.upperBound)")
    }
    return value
  }

  func bool(_ key: String) throws(ConfigurationError) -> Bool {
    guard case .bool(let value) = self else { throw ConfigurationError("'\(key)' must be true or false") }
    return value
  }

  func strings(_ key: String) throws(ConfigurationError) -> [String] {
    switch self {
    case .strings(let values): return values
    case .string(let value): return [value]
    default: throw ConfigurationError("'\(key)' must be an array of strings")
    }
  }
}
