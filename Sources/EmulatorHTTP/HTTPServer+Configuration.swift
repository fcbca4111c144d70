import EmulatorSupport

/// How the server listens and how many resources it may take.
public struct HTTPServerConfiguration: Sendable, Equatable {
  /// Address to bind: an IPv4 or IPv6 literal, or a name such as `localhost`.
  public var host: String = "127.0.0.1"
  /// Port to bind; 0 picks a free one (read it back from `HTTPServer.start()`).
  public var port: Int = 9199
  public var limits = HTTPLimits()
  /// Open connections at most; accepting pauses at the cap (also kept below `RLIMIT_NOFILE`).
  public var maxConnections: Int = 10_000
  /// Serial queues on which handlers run, so file I/O never blocks the connection threads.
  public var blockingLanes: Int = 16
  /// Threads serving connections (one epoll set each); by default one per core.
  public var eventLoops: Int = ProcessInfo.processInfo.activeProcessorCount
  /// Which event loop implementation serves them; by default `STORAGE_EMULATOR_EVENT_LOOP`
  /// (`epoll` or `portable`) when set, else epoll on Linux and poll(2) elsewhere.
  public var eventLoop: EventLoopKind = .fromEnvironment()
  public var timeouts = HTTPTimeouts()
  /// Request bodies larger than this are written to a file in `spoolDirectory` as they arrive
  /// (handlers get `HTTPRequest.bodyFile`), so memory stays flat whatever the upload size.
  public var spoolThresholdBytes: Int = 1 << 20
  /// Where large request bodies are spooled; put it on the data folder's file system so a store
  /// can move a spooled upload into place without copying it.
  public var spoolDirectory: String = "/tmp"

  public init() {}
}

/// How long a connection may wait or stall before it is closed.
public struct HTTPTimeouts: Sendable, Equatable {
  /// A keep-alive connection with no request in progress.
  public var idleSeconds: Double = 60
  /// From the first byte of a request head to its end (slowloris); answered with 408.
  public var headerSeconds: Double = 30
  /// Between two pieces of a request body.
  public var bodyStallSeconds: Double = 60
  /// Between two successful writes of a response (a client that does not read).
  public var writeStallSeconds: Double = 60

  public init() {}

  var shortest: Double { min(idleSeconds, headerSeconds, bodyStallSeconds, writeStallSeconds) }
}
