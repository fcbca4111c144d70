import Dispatch
import EmulatorAPI
import EmulatorStorage
import EmulatorSupport

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
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
  /// Where events go (`--webhook URL`).
  typealias Endpoint = PlainHTTPClient.Endpoint

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
    json.string(
      "id", "\(object.generation)-\(object.metageneration)-\(change.kind.rawValue)-\(UUID().uuidString.prefix(8))")
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
    let head =
      "POST \(endpoint.target) HTTP/1.1\r\nHost: \(endpoint.hostHeader)\r\n"
      + "User-Agent: storage-emulator/\(CommandLineTool.version)\r\n"
      + "Content-Type: application/cloudevents+json; charset=utf-8\r\nContent-Length: \(body.count)\r\nConnection: close\r\n\r\n"
    switch PlainHTTPClient.status(endpoint, request: Array(head.utf8) + body) {
    case .success(let status): return (200..<300).contains(status) ? (true, "") : (false, "status \(status)")
    case .failure(let error): return (false, error.description)
    }
  }
}
