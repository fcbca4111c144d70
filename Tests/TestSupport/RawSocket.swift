import Foundation

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// A blocking TCP client for byte-exact HTTP tests (pipelining, malformed input, stalls), shared
/// by the HTTP module's tests and the end-to-end tests.
public final class RawSocket {
  public let fd: Int32

  /// Connects to 127.0.0.1:`port`; reads give up after `receiveTimeout` seconds.
  public init(port: Int, receiveTimeout: Double = 10) throws {
    #if canImport(Glibc)
      fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    #elseif canImport(Darwin)
      fd = socket(AF_INET, SOCK_STREAM, 0)
    #endif
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = in_port_t(UInt16(port).bigEndian)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    let connected = withUnsafePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
      }
    }
    guard connected == 0 else {
      close(fd)
      throw POSIXError(.ECONNREFUSED)
    }
    var timeout = timeval()
    timeout.tv_sec = .init(receiveTimeout)
    timeout.tv_usec = .init((receiveTimeout - Double(Int(receiveTimeout))) * 1e6)
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
  }

  deinit { close(fd) }

  public func send(_ text: String) { send(Array(text.utf8)) }

  /// Sends all of `bytes`, or stops quietly when the peer has gone (what a test then reads shows it).
  public func send(_ bytes: [UInt8]) {
    var offset = 0
    while offset < bytes.count {
      let sent = bytes.withUnsafeBytes { buffer in
        #if canImport(Glibc)
          Glibc.send(fd, buffer.baseAddress! + offset, buffer.count - offset, Int32(MSG_NOSIGNAL))
        #elseif canImport(Darwin)
          Darwin.send(fd, buffer.baseAddress! + offset, buffer.count - offset, 0)
        #endif
      }
      if sent <= 0 { return }
      offset += sent
    }
  }

  /// Reads until the peer closes, the timeout passes, or `until` is satisfied.
  public func receive(until done: (([UInt8]) -> Bool)? = nil) -> (bytes: [UInt8], closed: Bool) {
    var received: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 65536)
    while true {
      let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
      if count == 0 { return (received, true) }
      if count < 0 { return (received, false) }
      received.append(contentsOf: buffer[0..<count])
      if let done, done(received) { return (received, false) }
    }
  }

  /// Reads `count` complete responses that carry Content-Length (or none).
  public func receiveResponses(_ count: Int) -> [String] {
    let (bytes, _) = receive { Self.split($0).count >= count }
    return Self.split(bytes)
  }

  /// Splits a byte stream into complete responses (head + Content-Length body).
  public static func split(_ bytes: [UInt8]) -> [String] {
    var responses: [String] = []
    var index = 0
    let separator: [UInt8] = [13, 10, 13, 10]
    while index < bytes.count {
      guard let end = find(separator, in: bytes, from: index) else { break }
      let head = String(decoding: bytes[index..<end], as: UTF8.self)
      var length = 0
      for line in head.split(separator: "\r\n") where line.lowercased().hasPrefix("content-length:") {
        length = Int(line.split(separator: ":")[1].trimmingCharacters(in: .whitespaces)) ?? 0
      }
      if head.hasPrefix("HTTP/1.1 100") { length = 0 }
      let bodyEnd = end + 4 + length
      guard bodyEnd <= bytes.count else { break }
      responses.append(String(decoding: bytes[index..<bodyEnd], as: UTF8.self))
      index = bodyEnd
    }
    return responses
  }

  private static func find(_ needle: [UInt8], in haystack: [UInt8], from start: Int) -> Int? {
    guard haystack.count >= needle.count else { return nil }
    var index = start
    while index <= haystack.count - needle.count {
      if haystack[index..<(index + needle.count)].elementsEqual(needle) { return index }
      index += 1
    }
    return nil
  }
}
