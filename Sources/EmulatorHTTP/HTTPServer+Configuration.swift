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
  /// A connection that has not sent a complete head this long after its last request (or after
  /// connecting) is closed; covers both idle keep-alive and slowly dripped headers.
  public var idleTimeoutSeconds: Double = 60
  /// Request bodies larger than this are written to a file in `spoolDirectory` as they arrive
  /// (handlers get `HTTPRequest.bodyFile`), so memory stays flat whatever the upload size.
  public var spoolThresholdBytes: Int = 1 << 20
  /// Where large request bodies are spooled; put it on the data folder's file system so a store
  /// can move a spooled upload into place without copying it.
  public var spoolDirectory: String = "/tmp"

  public init() {}
}
