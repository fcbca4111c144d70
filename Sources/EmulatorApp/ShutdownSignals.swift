#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// SIGINT and SIGTERM, blocked in the main thread before any other thread exists (threads inherit
/// the mask), then taken with `sigwait` once the server runs. A signal sent at any moment, even
/// between start-up and the ready line, stays pending until it is taken: never lost to a thread
/// that ignores it (a Dispatch signal source on Linux could lose one sent just after the ready line).
enum ShutdownSignals {
  private static func set() -> sigset_t {
    var signals = sigset_t()
    sigemptyset(&signals)
    sigaddset(&signals, SIGINT)
    sigaddset(&signals, SIGTERM)
    return signals
  }

  /// Call first thing in `main`.
  static func block() {
    var signals = set()
    pthread_sigmask(SIG_BLOCK, &signals, nil)
  }

  /// Blocks the calling thread until SIGINT or SIGTERM arrives; returns which.
  static func wait() -> Int32 {
    var signals = set()
    var received: Int32 = 0
    while sigwait(&signals, &received) != 0 {}
    return received
  }
}
