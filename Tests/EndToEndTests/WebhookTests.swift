import EmulatorHTTP
import EmulatorStorage
import Foundation
import Testing

@testable import EmulatorApp

/// What a local webhook receiver got; answers the first `failures` requests with 503.
final class ReceiverLog: HTTPHandler {
  let received = Locked<[(target: String, headers: HTTPHeaders, body: [UInt8])]>([])
  let remainingFailures: Locked<Int>
  let attempts = Locked(0)

  init(failures: Int) { remainingFailures = Locked(failures) }

  func handle(_ request: HTTPRequest) -> HTTPResponse {
    attempts.withLock { $0 += 1 }
    let fail = remainingFailures.withLock { remaining -> Bool in
      guard remaining > 0 else { return false }
      remaining -= 1
      return true
    }
    if fail { return HTTPResponse(status: 503) }
    received.withLock { $0.append((request.head.target, request.headers, request.body)) }
    return HTTPResponse(status: 204)
  }
}

/// A local webhook receiver on a free port (the project's own HTTP server).
final class Receiver {
  let log: ReceiverLog
  let server: HTTPServer
  let port: Int

  init(failures: Int = 0) throws {
    log = ReceiverLog(failures: failures)
    var configuration = HTTPServerConfiguration()
    configuration.port = 0
    configuration.eventLoops = 1
    configuration.blockingLanes = 1
    server = HTTPServer(configuration: configuration, handler: log)
    port = try server.start()
  }

  var attemptCount: Int { log.attempts.withLock { $0 } }

  /// The events received, parsed, once `count` have arrived (or after 10 s).
  func events(count: Int) -> [[String: Any]] {
    let deadline = Date().addingTimeInterval(10)
    while log.received.withLock({ $0.count }) < count && Date() < deadline { usleep(10_000) }
    return log.received.withLock { $0 }.compactMap {
      (try? JSONSerialization.jsonObject(with: Data($0.body))) as? [String: Any]
    }
  }

  func requests() -> [(target: String, headers: HTTPHeaders, body: [UInt8])] { log.received.withLock { $0 } }

  func stop() { server.shutdown(gracePeriod: 1) }
}

/// `--webhook URL`: CloudEvents for finalize, metadata update and delete, in order, with retries,
/// from a bounded queue that never holds up a request.
@Suite struct WebhookTests {
  @Test func changesArriveAsCloudEventsInOrderWithTheObjectAsData() throws {
    let receiver = try Receiver()
    defer { receiver.stop() }
    let server = try RunningEmulator(inMemory: true) { $0.webhooks = ["http://127.0.0.1:\(receiver.port)/hook?x=1"] }
    defer {
      server.stop()
      server.removeFolder()
    }
    let base = server.base
    #expect(try Curl.request("POST", base + "/v0/b/bkt/o?name=a%2Fb.txt", body: "hello world").status == 200)
    for value in ["one", "two"] {
      #expect(try Curl.request("PATCH", base + "/storage/v1/b/bkt/o/a%2Fb.txt", body: #"{"metadata":{"k":"\#(value)"}}"#).status == 200)
    }
    #expect(try Curl.request("DELETE", base + "/storage/v1/b/bkt/o/a%2Fb.txt").status == 204)
    let events = receiver.events(count: 4)
    #expect(events.count == 4)
    #expect(events.compactMap { $0["type"] as? String } == [
      "google.cloud.storage.object.v1.finalized", "google.cloud.storage.object.v1.metadataUpdated",
      "google.cloud.storage.object.v1.metadataUpdated", "google.cloud.storage.object.v1.deleted",
    ])
    let data = events.compactMap { $0["data"] as? [String: Any] }
    #expect(data.compactMap { $0["metageneration"] as? String } == ["1", "2", "3", "3"])
    #expect((data[2]["metadata"] as? [String: String])?["k"] == "two")
    #expect(data[0]["kind"] as? String == "storage#object")
    #expect(data[0]["md5Hash"] as? String == "XrY7u+Ae7tCTyyK7j1rNww==")
    #expect((data[0]["selfLink"] as? String)?.hasPrefix(base + "/storage/v1/b/bkt/o/") == true)
    let first = events[0]
    #expect(first["specversion"] as? String == "1.0")
    #expect(first["source"] as? String == "//storage.googleapis.com/projects/_/buckets/bkt")
    #expect(first["subject"] as? String == "objects/a/b.txt")
    #expect(first["datacontenttype"] as? String == "application/json")
    #expect(first["time"] as? String == data[0]["timeCreated"] as? String)
    #expect(Set(events.compactMap { $0["id"] as? String }).count == 4)
    let request = try #require(receiver.requests().first)
    #expect(request.target == "/hook?x=1")
    #expect(request.headers["content-type"] == "application/cloudevents+json; charset=utf-8")
  }

  @Test func aFailedDeliveryIsRetriedAndTheOrderKept() throws {
    let receiver = try Receiver(failures: 2)
    defer { receiver.stop() }
    let server = try RunningEmulator(inMemory: true) { $0.webhooks = ["http://127.0.0.1:\(receiver.port)/"] }
    defer {
      server.stop()
      server.removeFolder()
    }
    #expect(try Curl.request("POST", server.base + "/v0/b/bkt/o?name=first", body: "1").status == 200)
    #expect(try Curl.request("POST", server.base + "/v0/b/bkt/o?name=second", body: "2").status == 200)
    let events = receiver.events(count: 2)
    #expect(events.compactMap { ($0["data"] as? [String: Any])?["name"] as? String } == ["first", "second"])
    #expect(receiver.attemptCount == 4)  // 2 refused, then both delivered once
  }

  @Test func aReceiverThatIsDownNeverSlowsRequestsAndTheQueueIsBounded() throws {
    // A port nothing listens on: every delivery fails.
    let dead = try Receiver()
    let port = dead.port
    dead.stop()
    let endpoint = try #require(WebhookDispatcher.Endpoint("http://127.0.0.1:\(port)/"))
    let lines = CollectedLines()
    let dispatcher = WebhookDispatcher(
      endpoint: endpoint, capacity: 10, retries: 1, retryDelay: 0.05, log: { lines.sink.append(Array($0.utf8)) })
    let object = ObjectMetadata(bucket: "bkt", name: "x", generation: 1, size: 0, md5: nil, crc32c: 0, now: 0)
    let began = Date()
    for _ in 0..<1000 { dispatcher.enqueue(StoreChange(kind: .finalized, object: object)) }
    #expect(Date().timeIntervalSince(began) < 0.5)
    dispatcher.stop(timeout: 2)
    let counts = dispatcher.counts
    #expect(counts.dropped >= 989)
    #expect(counts.delivered == 0)
    #expect(counts.failed >= 1)
    #expect(lines.all().contains { $0.contains("queue full") })
    #expect(lines.all().contains { $0.contains("after 2 attempts") })

    // And an emulator with such a webhook answers uploads as fast as ever.
    let server = try RunningEmulator(inMemory: true) { $0.webhooks = ["http://127.0.0.1:\(port)/"] }
    defer {
      server.stop()
      server.removeFolder()
    }
    let curl = Curl()
    let start = Date()
    for index in 0..<50 {
      #expect(try curl.perform("POST", server.base + "/v0/b/bkt/o?name=n\(index)", body: Array("x".utf8)).status == 200)
    }
    #expect(Date().timeIntervalSince(start) < 5)
  }
}
