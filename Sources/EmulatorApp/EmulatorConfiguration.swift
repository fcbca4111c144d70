import EmulatorAPI
import EmulatorHTTP
import EmulatorStorage
import EmulatorSupport
import Logging

/// Everything that can be configured. `EmulatorConfiguration.options` lists how each setting is
/// named in the config file, the environment and the flags, and how it is applied.
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
}
