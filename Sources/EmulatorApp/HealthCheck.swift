import EmulatorSupport

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// `storage-emulator health [--host H] [--port P]` (see `Health`): asks a running emulator for
/// `GET /internal/health` and exits 0 when it answers 200, 1 otherwise. For Docker's
/// HEALTHCHECK (the slim image has no curl) and scripts.
enum HealthCheck {
  static func run(host: String, port: Int) -> Int32 {
    var host = host
    if host == "localhost" || host == "0.0.0.0" { host = "127.0.0.1" }
    guard let status = status(host: host, port: port) else {
      let message = Array("storage-emulator health: no answer from \(host):\(port)\n".utf8)
      _ = message.withUnsafeBytes { SystemCall.writeAll(STDERR_FILENO, $0) }
      return 1
    }
    print("storage-emulator health: \(status == 200 ? "ok" : "status \(status)")")
    return status == 200 ? 0 : 1
  }

  /// The status line's code of `GET /internal/health`, or nil when nothing answered within 5 s.
  static func status(host: String, port: Int) -> Int? {
    let endpoint = PlainHTTPClient.Endpoint(host: host, port: port, target: "/internal/health")
    let request = "GET \(endpoint.target) HTTP/1.1\r\nHost: \(endpoint.hostHeader)\r\nConnection: close\r\n\r\n"
    return try? PlainHTTPClient.status(endpoint, request: Array(request.utf8)).get()
  }
}
