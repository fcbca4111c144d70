import Foundation

#if canImport(Glibc)
  import Glibc
#endif

/// `storage-emulator health [--host H] [--port P]` (see `Health`): asks a running emulator for
/// `GET /internal/health` and exits 0 when it answers 200, 1 otherwise. For Docker's
/// HEALTHCHECK (the slim image has no curl) and scripts.
enum HealthCheck {
  static func run(host: String, port: Int) -> Int32 {
    var host = host
    if host == "localhost" || host == "0.0.0.0" { host = "127.0.0.1" }
    guard let status = status(host: host, port: port) else {
      FileHandle.standardError.write(Data("storage-emulator health: no answer from \(host):\(port)\n".utf8))
      return 1
    }
    print("storage-emulator health: \(status == 200 ? "ok" : "status \(status)")")
    return status == 200 ? 0 : 1
  }

  /// The status line's code of `GET /internal/health`, or nil when nothing answered within 5 s.
  static func status(host: String, port: Int) -> Int? {
    var hints = addrinfo()
    hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
    var list: UnsafeMutablePointer<addrinfo>?
    guard getaddrinfo(host, String(port), &hints, &list) == 0, let info = list else { return nil }
    defer { freeaddrinfo(list) }
    let fd = socket(info.pointee.ai_family, info.pointee.ai_socktype, info.pointee.ai_protocol)
    guard fd >= 0 else { return nil }
    defer { close(fd) }
    var timeout = timeval(tv_sec: 5, tv_usec: 0)
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    guard connect(fd, info.pointee.ai_addr, info.pointee.ai_addrlen) == 0 else { return nil }
    let request = Array("GET /internal/health HTTP/1.1\r\nHost: \(host):\(port)\r\nConnection: close\r\n\r\n".utf8)
    guard request.withUnsafeBytes({ send(fd, $0.baseAddress, $0.count, 0) }) == request.count else { return nil }
    var reply: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 512)
    while reply.count < 64 {
      let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
      if count <= 0 { break }
      reply += buffer[0..<count]
    }
    // "HTTP/1.1 200 OK"
    let line = String(decoding: reply.prefix { $0 != 13 }, as: UTF8.self)
    let parts = line.split(separator: " ")
    guard parts.count >= 2, parts[0].hasPrefix("HTTP/") else { return nil }
    return Int(parts[1])
  }
}
