import Dispatch
import EmulatorAPI
import EmulatorHTTP
import EmulatorRules
import EmulatorStorage
import EmulatorSupport
import Logging

/// A wired emulator: store, API and HTTP server. Made by `makeEmulator`, used by `main` and by
/// the tests alike.
public final class Emulator: Sendable {
  public let configuration: EmulatorConfiguration
  public let store: ObjectStore
  public let api: StorageAPI
  public let server: HTTPServer
  /// Reset, info, export, import and seeding.
  public let maintenance: Maintenance
  /// Recent changes for the web UI's live updates.
  let feed: ChangeFeed
  /// One per `--webhook` URL.
  let webhooks: [WebhookDispatcher]
  /// Reloads the configured rules files when they change (set by `loadRules`).
  private let watcher = Locked<RulesWatcher?>(nil)

  init(
    configuration: EmulatorConfiguration, store: ObjectStore, api: StorageAPI, server: HTTPServer,
    maintenance: Maintenance, feed: ChangeFeed, webhooks: [WebhookDispatcher]
  ) {
    self.feed = feed
    self.webhooks = webhooks
    self.configuration = configuration
    self.store = store
    self.api = api
    self.server = server
    self.maintenance = maintenance
  }

  /// Loads the configured security rules and watches their files; returns what the ready line
  /// says about them. A file that cannot be read or parsed is an error (the emulator must not
  /// start with rules other than those asked for).
  @discardableResult
  public func loadRules(log: @escaping @Sendable (String) -> Void = { _ in }, pollInterval: Double = 1)
    throws(ConfigurationError) -> String
  {
    guard let files = try RulesLoader.files(for: configuration) else {
      return "no security rules: every request is allowed"
    }
    do {
      try api.rules.replace(with: files)
    } catch {
      throw ConfigurationError(error.description)
    }
    let watcher = RulesWatcher(configuration: configuration, registry: api.rules, files: files, log: log)
    watcher.start(interval: pollInterval)
    self.watcher.withLock { $0 = watcher }
    return "security rules from \(files.map(\.name).joined(separator: ", "))"
  }

  /// Starts listening; returns the bound port (useful with port 0).
  public func start() throws(SocketError) -> Int {
    let port = try server.start()
    let host = configuration.server.host
    let shownHost = host.contains(":") ? "[\(host)]" : (host == "0.0.0.0" ? "127.0.0.1" : host)
    api.setFallbackHost("\(shownHost):\(port)")
    for webhook in webhooks { webhook.setBaseURL("http://\(shownHost):\(port)") }
    return port
  }

  /// Stops accepting, lets in-flight requests finish (up to `gracePeriod` seconds), writes the
  /// `exportOnExit` export if configured, then closes the store, which saves the index snapshot that makes the next start-up fast.
  public func stop(gracePeriod: Double = 5, log: @Sendable (String) -> Void = { _ in }) {
    watcher.withLock { $0?.stop() }
    feed.close()  // answers the web UI's long polls, so they do not hold up the shutdown
    server.shutdown(gracePeriod: gracePeriod)
    api.sessions.stopSweeping()
    api.multipart?.stopSweeping()
    // Events of the last requests still go out (for at most a second).
    for webhook in webhooks { webhook.stop(timeout: 1) }
    if let directory = configuration.exportOnExit {
      do {
        let summary = try maintenance.export(to: directory)
        log("export: \(summary.objects) objects, \(summary.buckets) buckets written to \(directory)")
      } catch {
        log("export: FAILED to write \(directory): \(error)")
      }
    }
    do {
      if try !store.close(timeout: max(gracePeriod, 1)) {
        log("index: writes were still running; the next start-up replays the log")
      }
    } catch {
      log("index: the snapshot was not saved (\(error)); the next start-up replays the log")
    }
  }
}

/// Builds the emulator a configuration describes: opens (and recovers) the data folder or the
/// in-memory store, creates the configured buckets, and wires the API into an HTTP server. With
/// a `logger` whose level lets `info` through, every request is logged on one line.
///
/// `calls`: the file backend's write steps (a test records them; `--in-memory` makes none).
public func makeEmulator(
  _ configuration: EmulatorConfiguration, log: @escaping @Sendable (String) -> Void = { _ in },
  logger: Logger? = nil, calls: FileCalls = .direct
) throws(StorageError) -> Emulator {
  // Keys first: a bad one stops start-up before anything is opened.
  let signing = SignedURLVerifier(keys: try configuration.signingKeys())
  // The backend owns the data folder's layout: where large request bodies are spooled, and
  // where resumable sessions and XML multipart uploads keep their bytes. In memory there is no
  // folder at all: nothing is spooled and nothing is written to disk.
  let backend: any StorageBackend
  if configuration.inMemory {
    backend = MemoryBackend()
  } else {
    backend = try FileBackend(
      root: URL(fileURLWithPath: configuration.dataDirectory), fsync: configuration.fsync, calls: calls)
  }
  var sessionOptions = configuration.uploadSessions
  sessionOptions.fsync = configuration.fsync && !configuration.inMemory
  let sessions = UploadSessions(space: try backend.uploadSpace(.sessions), options: sessionOptions, log: log)
  sessions.startSweeping()
  let multipart = MultipartUploads(
    space: try backend.uploadSpace(.multipart), maxBytes: Int64(configuration.api.maxUploadBytes),
    ttlSeconds: sessionOptions.ttlSeconds, log: log)
  multipart.startSweeping()
  let store = try ObjectStore(
    backend: backend, options: ObjectStore.Options(strictBuckets: configuration.strictBuckets), log: log)
  for bucket in configuration.buckets {
    do {
      _ = try store.createBucket(bucket)
    } catch .bucketExists {
      continue
    }
  }
  // Seeds and imports copy files over 1 MiB before the store takes them; in memory, into the
  // system's temporary folder (only then does `--in-memory` write a file, and only briefly).
  let spool = backend.spoolDirectory ?? FileManager.default.temporaryDirectory.path
  if let directory = configuration.importDirectory {
    let started = DispatchTime.now().uptimeNanoseconds
    let summary = try FirebaseImport(store: store, spoolDirectory: spool, log: log).load(from: directory)
    log(
      "import: \(summary.objects) objects (\(SeedLoader.describe(bytes: summary.bytes))), \(summary.buckets) buckets, "
        + "\(summary.skipped) skipped, from \(directory) in "
        + DecimalText.fixed(Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9, digits: 2) + " s")
  }
  if let seed = configuration.seedDirectory {
    _ = try SeedLoader(store: store, spoolDirectory: spool, log: log).load(from: seed)
  }
  let api = StorageAPI(
    store: store, sessions: sessions, limits: configuration.api, rules: RulesRegistry(log: log),
    signing: signing, multipart: multipart)
  var serverConfiguration = configuration.server
  if let directory = backend.spoolDirectory {
    serverConfiguration.spoolDirectory = directory
  } else {
    // Bodies stay in memory, each bounded by `maxBodyBytes` below.
    serverConfiguration.spoolThresholdBytes = Int.max
  }
  serverConfiguration.limits.maxBodyBytes = max(configuration.api.maxUploadBytes, configuration.api.maxMetadataBytes)
  let maintenance = Maintenance(
    store: store, sessions: sessions, multipart: multipart, configuration: configuration, log: log)
  let feed = ChangeFeed(subscribe: { [store] feed in store.changes.add { [weak feed] in feed?.record($0) } })
  let webhooks = configuration.webhooks.compactMap { url in
    WebhookDispatcher.Endpoint(url).map { WebhookDispatcher(endpoint: $0, log: log) }
  }
  for webhook in webhooks { store.changes.add { webhook.enqueue($0) } }
  let webUI = WebUI(store: store, api: api, feed: feed)
  var handler: any HTTPHandler = FrontDoor(api: api, routes: maintenance.routes() + webUI.routes())
  if let logger, logger.logLevel <= .info { handler = RequestLog(handler, logger: logger) }
  // The browser policies (Host check, origin check, CORS) wrap everything at the HTTP edge, so
  // the web UI and the /internal routes are covered too.
  handler = CrossOriginHandler(handler, configuration: configuration.crossOrigin)
  let server = HTTPServer(configuration: serverConfiguration, handler: handler)
  return Emulator(
    configuration: configuration, store: store, api: api, server: server, maintenance: maintenance, feed: feed,
    webhooks: webhooks)
}
