#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// One HTTP/1.1 exchange over a fresh TCP connection, no TLS: what `storage-emulator health` and
/// the webhook sender need. Every step (connect, send, the status line) has 5 s at most.
enum PlainHTTPClient {
  /// Sends `request` (head and body) to the endpoint's host and port and reads the status code of
  /// the answer's status line; the error says which step failed.
  static func status(_ endpoint: Endpoint, request: [UInt8]) -> Result<Int, ExchangeError> {
    let host = endpoint.host
    var hints = addrinfo()
    hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
    var list: UnsafeMutablePointer<addrinfo>?
    guard getaddrinfo(host, String(endpoint.port), &hints, &list) == 0, let info = list else {
      return .failure(ExchangeError("cannot resolve \(host)"))
    }
    defer { freeaddrinfo(list) }
    let fd = socket(info.pointee.ai_family, info.pointee.ai_socktype, info.pointee.ai_protocol)
    guard fd >= 0 else { return .failure(ExchangeError("no socket")) }
    defer { close(fd) }
    var timeout = timeval(tv_sec: 5, tv_usec: 0)
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    guard connect(fd, info.pointee.ai_addr, info.pointee.ai_addrlen) == 0 else {
      return .failure(ExchangeError("connection refused or timed out"))
    }
    var offset = 0
    while offset < request.count {
      let sent = request.withUnsafeBytes { send(fd, $0.baseAddress! + offset, $0.count - offset, Int32(MSG_NOSIGNAL)) }
      if sent < 0 && errno == EINTR { continue }
      guard sent > 0 else { return .failure(ExchangeError("the receiver stopped reading")) }
      offset += sent
    }
    var reply: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 256)
    while !reply.contains(10) && reply.count < 4096 {
      let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
      if count < 0 && errno == EINTR { continue }
      guard count > 0 else { break }
      reply += buffer[0..<count]
    }
    // "HTTP/1.1 200 OK"
    let line = String(decoding: reply.prefix { $0 != 13 && $0 != 10 }, as: UTF8.self)
    let parts = line.split(separator: " ")
    guard parts.count >= 2, parts[0].hasPrefix("HTTP/"), let status = Int(parts[1]) else {
      return .failure(ExchangeError("no HTTP answer"))
    }
    return .success(status)
  }

  /// Where a request goes.
  struct Endpoint: Sendable, Equatable {
    var host: String
    var port: Int
    /// Path and query.
    var target: String
    /// As given (for messages).
    var url: String

    init(host: String, port: Int, target: String) {
      self.host = host
      self.port = port
      self.target = target
      url = "http://\(Self.hostHeader(host, port))\(target)"
    }

    /// The `Host` header's value (an IPv6 address in brackets).
    var hostHeader: String { Self.hostHeader(host, port) }

    private static func hostHeader(_ host: String, _ port: Int) -> String {
      host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
    }

    /// `http://host[:port][/path]`; nil for anything else (https is not supported).
    init?(_ url: String) {
      guard url.hasPrefix("http://") else { return nil }
      let rest = url.dropFirst(7)
      let authority = rest.prefix { $0 != "/" && $0 != "?" }
      var target = String(rest.dropFirst(authority.count))
      if target.isEmpty || target.hasPrefix("?") { target = "/" + target }
      guard !authority.isEmpty, !authority.contains("@"),
        target.utf8.allSatisfy({ $0 > 32 && $0 < 127 })
      else { return nil }
      if authority.hasPrefix("[") {
        guard let close = authority.firstIndex(of: "]") else { return nil }
        host = String(authority[authority.index(after: authority.startIndex)..<close])
        let after = authority[authority.index(after: close)...]
        if after.isEmpty {
          port = 80
        } else {
          guard after.hasPrefix(":"), let value = Int(after.dropFirst()), (1...65535).contains(value) else {
            return nil
          }
          port = value
        }
      } else if let colon = authority.lastIndex(of: ":") {
        host = String(authority[..<colon])
        guard let value = Int(authority[authority.index(after: colon)...]), (1...65535).contains(value) else {
          return nil
        }
        port = value
      } else {
        host = String(authority)
        port = 80
      }
      // A name, an IPv4 address or (in brackets) an IPv6 one: nothing that could break the request.
      guard !host.isEmpty,
        host.utf8.allSatisfy({
          $0 == 45 || $0 == 46 || $0 == 58 || (48...57).contains($0) || (65...90).contains($0)
            || (97...122).contains($0)
        })
      else { return nil }
      self.target = target
      self.url = url
    }
  }

  struct ExchangeError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
  }
}
