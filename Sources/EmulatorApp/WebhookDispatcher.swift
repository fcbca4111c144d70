import Dispatch
import EmulatorAPI
import EmulatorStorage
import Foundation

#if canImport(Glibc)
  import Glibc
#endif

/// `--webhook URL`: every change of the store is POSTed to the URL as a CloudEvent in structured
/// JSON mode (`Content-Type: application/cloudevents+json`), with the GCS object resource as
/// `data`, as Cloud Storage's Eventarc events are:
/// `google.cloud.storage.object.v1.finalized`, `.deleted` and `.metadataUpdated`.
///
/// Each URL has its own queue and one sender, so events reach it in the order they happened
/// (per object, and overall). A change is only queued on the request path (the JSON is rendered
/// by the sender); when the queue is full (`capacity` events, a receiver that is down or slow)
/// new events are dropped and counted, never waited for. A delivery that fails (no connection,
/// no answer within 5 s, a status other than 2xx) is retried `retries` times with a growing
/// pause, then dropped with a log line.
final class WebhookDispatcher: Sendable {
  struct Endpoint: Sendable, Equatable {
    var host: String
    var port: Int
    /// Path and query.
    var target: String
    var url: String

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
          guard after.hasPrefix(":"), let value = Int(after.dropFirst()), (1...65535).contains(value) else { return nil }
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
        host.utf8.allSatisfy({ $0 == 45 || $0 == 46 || $0 == 58 || (48...57).contains($0) || (65...90).contains($0)
          || (97...122).contains($0) })
      else { return nil }
      self.target = target
      self.url = url
    }
  }

  private struct State {
    var queue: [StoreChange] = []
    var running = false
    var stopped = false
    var dropped = 0
    var delivered = 0
    var failed = 0
  }

  let endpoint: Endpoint
  let capacity: Int
  let retries: Int
  /// Pause before the first retry; doubled for each next one.
  let retryDelay: Double
  private let baseURL: Locked<String>
  private let state = Locked(State())
  private let sender: DispatchQueue
  private let log: @Sendable (String) -> Void

  init(
    endpoint: Endpoint, capacity: Int = 10_000, retries: Int = 3, retryDelay: Double = 0.2,
    baseURL: String = "http://127.0.0.1:9199", log: @escaping @Sendable (String) -> Void
  ) {
    self.endpoint = endpoint
    self.capacity = capacity
    self.retries = retries
    self.retryDelay = retryDelay
    self.baseURL = Locked(baseURL)
    self.log = log
    self.sender = DispatchQueue(label: "storage-emulator.webhook")
  }

  /// `http://host:port` for the links in the object resources sent.
  func setBaseURL(_ url: String) { baseURL.withLock { $0 = url } }

  /// Delivered, dropped (queue full) and failed (retries exhausted) so far.
  var counts: (delivered: Int, dropped: Int, failed: Int) {
    state.withLock { ($0.delivered, $0.dropped, $0.failed) }
  }

  /// Queues a change; never blocks.
  func enqueue(_ change: StoreChange) {
    let start = state.withLock { state -> Bool in
      guard !state.stopped else { return false }
      guard state.queue.count < capacity else {
        state.dropped += 1
        if state.dropped == 1 || state.dropped % 1000 == 0 {
          let dropped = state.dropped
          DispatchQueue.global().async { [log, endpoint] in
            log("webhook \(endpoint.url): queue full (\(dropped) events dropped so far)")
          }
        }
        return false
      }
      state.queue.append(change)
      if state.running { return false }
      state.running = true
      return true
    }
    if start { sender.async { [self] in drain() } }
  }

  /// Stops taking events; waits up to `timeout` seconds for the queue to be delivered.
  func stop(timeout: Double) {
    let deadline = DispatchTime.now().uptimeNanoseconds + UInt64(max(timeout, 0) * 1e9)
    while state.withLock({ !$0.queue.isEmpty || $0.running }), DispatchTime.now().uptimeNanoseconds < deadline {
      usleep(10_000)
    }
    state.withLock {
      $0.stopped = true
      $0.queue = []
    }
  }

  private func drain() {
    while true {
      let next = state.withLock { state -> StoreChange? in
        guard !state.queue.isEmpty, !state.stopped else {
          state.running = false
          return nil
        }
        return state.queue.removeFirst()
      }
      guard let change = next else { return }
      let body = Self.cloudEvent(change, baseURL: baseURL.withLock { $0 })
      var attempt = 0
      var outcome = post(body)
      while !outcome.ok && attempt < retries && !state.withLock({ $0.stopped }) {
        usleep(UInt32(min(retryDelay * pow(2, Double(attempt)), 10) * 1e6))
        attempt += 1
        outcome = post(body)
      }
      state.withLock { outcome.ok ? ($0.delivered += 1) : ($0.failed += 1) }
      if !outcome.ok {
        log(
          "webhook \(endpoint.url): dropped \(change.kind.rawValue) of \(change.object.bucket)/\(change.object.name) after \(attempt + 1) attempts (\(outcome.reason))"
        )
      }
    }
  }

  /// A CloudEvent, structured mode, as Cloud Storage's Eventarc events.
  static func cloudEvent(_ change: StoreChange, baseURL: String) -> [UInt8] {
    let object = change.object
    let time: Int64 =
      switch change.kind {
      case .finalized: object.timeCreated
      case .metadataUpdated: object.updated
      case .deleted: Timestamp.nowMilliseconds()
      }
    var json = JSONWriter(capacity: 1024)
    json.beginObject()
    json.string("specversion", "1.0")
    json.string("id", "\(object.generation)-\(object.metageneration)-\(change.kind.rawValue)-\(UUID().uuidString.prefix(8))")
    json.string("source", "//storage.googleapis.com/projects/_/buckets/\(object.bucket)")
    json.string("type", "google.cloud.storage.object.v1.\(change.kind.rawValue)")
    json.string("subject", "objects/\(object.name)")
    json.timestamp("time", milliseconds: time)
    json.string("datacontenttype", "application/json")
    json.key("data")
    var bytes = json.bytes
    bytes += ObjectJSON.gcs(object, baseURL: baseURL)
    bytes.append(UInt8(ascii: "}"))
    return bytes
  }

  /// One POST over a fresh connection: ok on a 2xx status line within 5 seconds.
  private func post(_ body: [UInt8]) -> (ok: Bool, reason: String) {
    var hints = addrinfo()
    hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
    var list: UnsafeMutablePointer<addrinfo>?
    guard getaddrinfo(endpoint.host, String(endpoint.port), &hints, &list) == 0, let info = list else {
      return (false, "cannot resolve \(endpoint.host)")
    }
    defer { freeaddrinfo(list) }
    let fd = socket(info.pointee.ai_family, info.pointee.ai_socktype, info.pointee.ai_protocol)
    guard fd >= 0 else { return (false, "no socket") }
    defer { close(fd) }
    var timeout = timeval(tv_sec: 5, tv_usec: 0)
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    guard connect(fd, info.pointee.ai_addr, info.pointee.ai_addrlen) == 0 else {
      return (false, "connection refused or timed out")
    }
    let hostHeader = endpoint.host.contains(":") ? "[\(endpoint.host)]:\(endpoint.port)" : "\(endpoint.host):\(endpoint.port)"
    let head =
      "POST \(endpoint.target) HTTP/1.1\r\nHost: \(hostHeader)\r\nUser-Agent: storage-emulator/\(CommandLineTool.version)\r\n"
      + "Content-Type: application/cloudevents+json; charset=utf-8\r\nContent-Length: \(body.count)\r\nConnection: close\r\n\r\n"
    let request = Array(head.utf8) + body
    var offset = 0
    while offset < request.count {
      let sent = request.withUnsafeBytes { send(fd, $0.baseAddress! + offset, $0.count - offset, Int32(MSG_NOSIGNAL)) }
      if sent < 0 && errno == EINTR { continue }
      guard sent > 0 else { return (false, "the receiver stopped reading") }
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
    let line = String(decoding: reply.prefix { $0 != 13 && $0 != 10 }, as: UTF8.self)
    let parts = line.split(separator: " ")
    guard parts.count >= 2, parts[0].hasPrefix("HTTP/"), let status = Int(parts[1]) else {
      return (false, "no HTTP answer")
    }
    return (200..<300).contains(status) ? (true, "") : (false, "status \(status)")
  }
}
