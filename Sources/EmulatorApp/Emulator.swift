import EmulatorAPI
import EmulatorHTTP
import EmulatorRules
import EmulatorStorage
import Foundation

/// A wired emulator: store, API and HTTP server. Made by `makeEmulator`, used by `main` and by
/// the tests alike.
public final class Emulator: Sendable {
  public let configuration: EmulatorConfiguration
  public let store: ObjectStore
  public let api: StorageAPI
  public let server: HTTPServer
  /// Reloads the configured rules files when they change (set by `loadRules`).
  private let watcher = Locked<RulesWatcher?>(nil)

  init(configuration: EmulatorConfiguration, store: ObjectStore, api: StorageAPI, server: HTTPServer) {
    self.configuration = configuration
    self.store = store
    self.api = api
    self.server = server
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
    return port
  }

  /// Stops accepting, lets in-flight requests finish (up to `gracePeriod` seconds), then closes
  /// the store, which saves the index snapshot that makes the next start-up fast.
  public func stop(gracePeriod: Double = 5, log: @Sendable (String) -> Void = { _ in }) {
    watcher.withLock { $0?.stop() }
    server.shutdown(gracePeriod: gracePeriod)
    api.sessions.stopSweeping()
    do {
      if try !store.close(timeout: max(gracePeriod, 1)) {
        log("index: writes were still running; the next start-up replays the journal")
      }
    } catch {
      log("index: the snapshot was not saved (\(error)); the next start-up replays the journal")
    }
  }
}

/// Builds the emulator a configuration describes: opens (and recovers) the data folder or the
/// in-memory store, creates the configured buckets, and wires the API into an HTTP server.
public func makeEmulator(
  _ configuration: EmulatorConfiguration, log: @escaping @Sendable (String) -> Void = { _ in }
) throws(StorageError) -> Emulator {
  let backend: any StorageBackend
  let scratch: URL
  if configuration.inMemory {
    backend = MemoryBackend()
    scratch = FileManager.default.temporaryDirectory.appendingPathComponent(
      "storage-emulator-\(ProcessInfo.processInfo.processIdentifier)-\(UUID().uuidString.prefix(8))")
  } else {
    let file = try FileBackend(root: URL(fileURLWithPath: configuration.dataDirectory), fsync: configuration.fsync)
    backend = file
    scratch = file.root
  }
  // Large request bodies are spooled next to the data (so they are moved, not copied, into
  // place) and resumable sessions live beside them (so they survive a restart).
  let spool = scratch.appendingPathComponent("tmp")
  try? FileManager.default.createDirectory(at: spool, withIntermediateDirectories: true)
  var sessionOptions = configuration.uploadSessions
  sessionOptions.fsync = configuration.fsync && !configuration.inMemory
  let sessions = try UploadSessions(
    directory: scratch.appendingPathComponent("uploads"), options: sessionOptions, log: log)
  sessions.startSweeping()
  let store = try ObjectStore(
    backend: backend, options: ObjectStore.Options(strictBuckets: configuration.strictBuckets), log: log)
  for bucket in configuration.buckets {
    do {
      _ = try store.createBucket(bucket)
    } catch .bucketExists {
      continue
    }
  }
  let api = StorageAPI(
    store: store, sessions: sessions, limits: configuration.api, rules: RulesRegistry(log: log))
  var serverConfiguration = configuration.server
  serverConfiguration.spoolDirectory = spool.path
  serverConfiguration.limits.maxBodyBytes = max(configuration.api.maxUploadBytes, configuration.api.maxMetadataBytes)
  // The browser policies (Host check, origin check, CORS) wrap the API at the HTTP edge.
  let server = HTTPServer(
    configuration: serverConfiguration, handler: CrossOriginHandler(api, configuration: configuration.crossOrigin))
  return Emulator(configuration: configuration, store: store, api: api, server: server)
}
