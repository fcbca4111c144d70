import EmulatorHTTP
import Logging

extension EmulatorConfiguration {
  /// Every option, in `--help` order. Each one is settable by config key, environment variable and
  /// flag; adding an option is adding one entry here (and a line in README and
  /// `config/storage-emulator.toml`, which tests check).
  public static let options: [ConfigOption] =
    [
      // The listen address's variable is not STORAGE_EMULATOR_HOST: that one is the clients'
      // (`http://host:port`), which the ready line tells users to export.
      .string(
        "host", variable: "STORAGE_EMULATOR_LISTEN_HOST", value: "HOST", default: "127.0.0.1",
        "address to listen on (0.0.0.0 in a container)"
      ) { $0.server.host = $1 },
      .integer(
        "port", value: "PORT", in: 0...65535, default: "9199", "port; 0 picks a free one (the ready line says which)"
      ) {
        $0.server.port = $1
      },
      .string("data_dir", value: "DIR", default: "./storage-emulator-data", "data folder, created if missing") {
        $0.dataDirectory = $1
      },
      .bool("in_memory", "keep everything in memory; nothing is written to disk") { $0.inMemory = $1 },
      .bool("fsync", "sync files and folders before acknowledging a write (survives power loss)") { $0.fsync = $1 },
      .bool("strict_buckets", "uploads to buckets not created first get 404 on every surface, Firebase /v0 included") {
        $0.strictBuckets = $1
      },
      .bool("lenient_buckets", "a write on a GCS surface to a missing bucket creates it (default: 404 as on GCS)") {
        $0.api.lenientBuckets = $1
      },
      .bool(
        "discard_noncurrent",
        "deleting a bucket holding only noncurrent generations discards them (default: 409 as on GCS)"
      ) { $0.api.discardNoncurrentOnBucketDelete = $1 },
      .string("xml_virtual_host", value: "NAME", default: "localhost", "the XML API answers Host: <bucket>.NAME") {
        $0.api.xmlVirtualHost = $1
      },
      .list("buckets", flag: "--bucket", value: "NAME", "buckets created at start-up") { $0.buckets += $1 },
      .list(
        "signing_keys", flag: "--signing-key", value: "FILE",
        "RSA keys that verify signed URLs: PEM public key, PEM certificate or service-account JSON"
      ) {
        $0.signingKeyFiles += $1
      },
      .list("hmac_keys", flag: "--hmac-key", value: "ID:SECRET", "HMAC keys that verify GOOG4-HMAC-SHA256 signed URLs")
      {
        $0.hmacKeys += $1
      },
      .list(
        "cors_origins", flag: "--cors-origin", value: "ORIGIN",
        "web origins allowed besides the loopback ones (scheme://host[:port], null or *)"
      ) {
        configuration, values throws(ConfigurationError) in try configuration.addOrigins(values)
      },
      .list(
        "allowed_hosts", flag: "--allowed-host", value: "NAME",
        "Host names answered besides localhost and IP addresses (* for any)"
      ) {
        configuration, values throws(ConfigurationError) in try configuration.addAllowedHosts(values)
      },
      .integer(
        "max_upload_bytes", value: "BYTES", in: 0...Int.max, default: "1073741824",
        "largest request body of an upload (413 over it)"
      ) { $0.api.maxUploadBytes = $1 },
      .integer(
        "max_metadata_bytes", value: "BYTES", in: 2...Int.max, default: "1048576",
        "largest JSON body or multipart metadata part (413 over it)"
      ) { $0.api.maxMetadataBytes = $1 },
      .integer(
        "max_request_line_bytes", value: "BYTES", in: 64...(1 << 20), default: "8192",
        "longest request line (414 over it)"
      ) { $0.server.limits.maxRequestLineBytes = $1 },
      .integer(
        "max_header_bytes", value: "BYTES", in: 256...(16 << 20), default: "65536",
        "largest header block (431 over it)"
      ) { $0.server.limits.maxHeaderBytes = $1 },
      .integer("max_header_count", in: 1...100_000, default: "128", "header fields at most (431 over it)") {
        $0.server.limits.maxHeaderCount = $1
      },
      .integer(
        "max_connections", in: 1...1_000_000, default: "10000", "open connections at most; past it 503 and close"
      ) {
        $0.server.maxConnections = $1
      },
    ] + timeoutOptions + [
      .integer(
        "upload_session_ttl_seconds", flag: "--upload-session-ttl", value: "SECONDS",
        in: EmulatorConfiguration.uploadSessionTTLRange, default: "86400",
        "a resumable session untouched this long expires; its bytes are removed"
      ) { $0.uploadSessions.ttlSeconds = $1 },
      .integer(
        "max_upload_sessions", in: EmulatorConfiguration.maxUploadSessionsRange, default: "1000",
        "open resumable sessions at most; past it a start gets 429"
      ) { $0.uploadSessions.maxOpen = $1 },
      .integer(
        "shutdown_grace_seconds", value: "SECONDS", in: 0...3600, default: "5",
        "on SIGTERM/SIGINT, the time in-flight requests get to finish"
      ) { $0.shutdownGraceSeconds = Double($1) },
      .integer("blocking_lanes", in: 1...256, default: "16", "threads that run request handlers (file I/O)") {
        $0.server.blockingLanes = $1
      },
      .integer("event_loops", in: 1...64, default: "one per core", "threads serving connections, one epoll set each") {
        $0.server.eventLoops = $1
      },
      .string(
        "event_loop", value: "KIND", default: "epoll on Linux",
        "epoll (Linux) or portable (poll(2), what other systems use)"
      ) { configuration, text throws(ConfigurationError) in
        let kind = EventLoopKind(name: text)
        if case .unrecognized = kind { throw ConfigurationError("must be epoll or portable, got '\(text)'") }
        configuration.server.eventLoop = kind
      },
      .string(
        "rules", value: "FILE", default: "none",
        "Firebase security rules enforced on /v0 (reloaded when the file changes); none: all allowed"
      ) {
        $0.rulesFile = $1
      },
      .string(
        "firebase_json", value: "FILE", default: "none", "take the rules from this firebase.json's storage section"
      ) {
        $0.firebaseJSON = $1
      },
      .string("seed", value: "DIR", default: "none", "load DIR/<bucket>/<object path> at start-up (idempotent)") {
        $0.seedDirectory = $1
      },
      .string("import", value: "DIR", default: "none", "load a Firebase emulator export at start-up") {
        $0.importDirectory = $1
      },
      .string(
        "export_on_exit", value: "DIR", default: "none", "write a Firebase emulator export to DIR on a clean stop"
      ) {
        $0.exportOnExit = $1
      },
      .list(
        "webhooks", accumulates: false, flag: "--webhook", value: "URL",
        "POST a CloudEvent for every change to URL (http only)"
      ) { configuration, urls throws(ConfigurationError) in
        for url in urls where WebhookDispatcher.Endpoint(url) == nil {
          throw ConfigurationError("'\(url)' is not an http://host[:port][/path] URL")
        }
        configuration.webhooks = urls
      },
      .string(
        "log_level", value: "LEVEL", default: "notice",
        "trace, debug, info (one line per request), notice, warning, error or critical"
      ) {
        configuration, text throws(ConfigurationError) in configuration.logLevel = try Logger.Level.parse(text)
      },
      .string("log_format", value: "FORMAT", default: "text", "text or json log lines") {
        configuration, text throws(ConfigurationError) in configuration.logFormat = try LogFormat.parse(text)
      },
    ]

  /// The HTTP server's timeouts: whole seconds, 1 s to a day.
  static let timeoutOptions: [ConfigOption] = {
    let rows: [(String, String, String, WritableKeyPath<HTTPTimeouts, Double> & Sendable)] = [
      ("idle_timeout_seconds", "60", "an idle keep-alive connection is closed after this", \.idleSeconds),
      (
        "header_timeout_seconds", "30", "a request head must arrive within this of its first byte (408)",
        \.headerSeconds
      ),
      ("body_stall_timeout_seconds", "60", "longest pause inside a request body", \.bodyStallSeconds),
      ("write_stall_timeout_seconds", "60", "longest pause while the client reads a response", \.writeStallSeconds),
    ]
    return rows.map { key, defaultText, help, field in
      .integer(key, value: "SECONDS", in: 1...86_400, default: defaultText, help) {
        $0.server.timeouts[keyPath: field] = Double($1)
      }
    }
  }()

  /// The option a config key names.
  static let optionsByKey: [String: ConfigOption] = Dictionary(uniqueKeysWithValues: options.map { ($0.key, $0) })
}
