import EmulatorStorage
import Foundation
import Testing

@testable import EmulatorApp

/// The web UI's routes over sockets (the page itself is tested in Chromium by
/// scripts/suites/webui), and the change feed its live updates read.
@Suite struct WebUIRoutesTests {
  @Test func aBrowserAskingForTheRootIsRedirectedAndAnAPIClientGetsJSON() throws {
    let server = try RunningEmulator(inMemory: true)
    defer {
      server.stop()
      server.removeFolder()
    }
    let curl = Curl()
    let browser = try curl.perform(
      "GET", server.base + "/", headers: ["Accept: text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"])
    #expect(browser.status == 302)
    #expect(browser.header("location") == "/ui/")
    // An API client gets the XML API's ListBuckets there.
    let client = try Curl.request("GET", server.base + "/", headers: ["Accept: application/json"])
    #expect(client.status == 200)
    #expect(client.text.contains("<ListAllMyBucketsResult"))
    #expect(try Curl.request("GET", server.base + "/").status == 200)  // no Accept at all
    #expect(try Curl.request("POST", server.base + "/", body: "").status == 405)
    #expect(try Curl.request("GET", server.base + "/ui").header("location") == "/ui/")
  }

  @Test func thePageScriptAndStyleAreServedWithAContentSecurityPolicy() throws {
    let server = try RunningEmulator(inMemory: true)
    defer {
      server.stop()
      server.removeFolder()
    }
    for (path, type, marker) in [
      ("/ui/", "text/html", "<script src=\"/ui/app.js\">"), ("/ui/app.js", "text/javascript", "function listen()"),
      ("/ui/app.css", "text/css", "#drop-zone"),
    ] {
      let reply = try Curl.request("GET", server.base + path)
      #expect(reply.status == 200)
      #expect(reply.header("content-type")?.hasPrefix(type) == true)
      #expect(reply.header("content-security-policy")?.contains("script-src 'self'") == true)
      #expect(reply.text.contains(marker), "\(path)")
    }
    // The script never builds HTML from data.
    let script = try Curl.request("GET", server.base + "/ui/app.js").text
    #expect(!script.contains("innerHTML"))
  }

  @Test func objectHelperShowsBothFlavoursWithoutCreatingADownloadToken() throws {
    let server = try RunningEmulator(inMemory: true)
    defer {
      server.stop()
      server.removeFolder()
    }
    #expect(
      try Curl.request(
        "POST", server.base + "/upload/storage/v1/b/bkt/o?uploadType=media&name=a%2Fb.txt", body: "hello world"
      ).status == 200)
    let both = try Curl.request("GET", server.base + "/ui/api/object?bucket=bkt&name=a%2Fb.txt")
    #expect(both.status == 200)
    let gcs = try #require(both.json["gcs"] as? [String: Any])
    let firebase = try #require(both.json["firebase"] as? [String: Any])
    #expect(gcs["crc32c"] as? String == "yZRlqg==")
    #expect(firebase["crc32c"] as? String == "3381945770")
    #expect(gcs["kind"] as? String == "storage#object")
    let after = try Curl.request("GET", server.base + "/storage/v1/b/bkt/o/a%2Fb.txt")
    #expect(after.json["metageneration"] as? String == "1")
    #expect(try Curl.request("GET", server.base + "/ui/api/object?bucket=bkt&name=nope").status == 404)
    #expect(try Curl.request("GET", server.base + "/ui/api/object?bucket=bkt").status == 400)
  }

  @Test func aLongPollIsAnsweredByTheNextChangeOrItsTimeout() throws {
    let server = try RunningEmulator(inMemory: true)
    defer {
      server.stop()
      server.removeFolder()
    }
    let start = try Curl.request("GET", server.base + "/ui/api/changes")
    #expect(start.json["seq"] as? Int == 0)
    let empty = try Curl.request("GET", server.base + "/ui/api/changes?since=0&timeout=0.2")
    #expect((empty.json["changes"] as? [Any])?.isEmpty == true)
    let base = server.base
    let waiter = Thread.detachNewThreadWithResult {
      try? Curl.request("GET", base + "/ui/api/changes?since=0&timeout=20")
    }
    let deadline = Date().addingTimeInterval(10)
    while server.emulator.feed.waitingCount == 0 && Date() < deadline { usleep(10_000) }
    let began = Date()
    #expect(try Curl.request("POST", server.base + "/v0/b/bkt/o?name=x", body: "1").status == 200)
    let answer = try #require(waiter.wait() ?? nil)
    #expect(Date().timeIntervalSince(began) < 5)
    let changes = try #require(answer.json["changes"] as? [[String: Any]])
    #expect(changes.first?["kind"] as? String == "finalized")
    #expect(changes.first?["name"] as? String == "x")
    #expect(answer.json["seq"] as? Int == 1)
  }

  @Test func stoppingTheEmulatorAnswersWaitingPollsAtOnce() throws {
    let server = try RunningEmulator(inMemory: true)
    defer { server.removeFolder() }
    let base = server.base
    let waiter = Thread.detachNewThreadWithResult {
      try? Curl.request("GET", base + "/ui/api/changes?since=0&timeout=25")
    }
    let deadline = Date().addingTimeInterval(10)
    while server.emulator.feed.waitingCount == 0 && Date() < deadline { usleep(10_000) }
    #expect(server.emulator.feed.waitingCount == 1)
    let began = Date()
    server.stop()
    #expect((waiter.wait() ?? nil)?.status == 200)
    #expect(Date().timeIntervalSince(began) < 2)
  }

  @Test func theFeedKeepsItsLastChangesAndTellsAnOldPollToReload() {
    let feed = ChangeFeed(capacity: 3, maxWaiters: 1)
    let object = ObjectMetadata(bucket: "b", name: "n", generation: 1, size: 0, md5: nil, crc32c: 0, now: 0)
    // 6 changes: trimmed to the last 3 when 6 (twice the capacity) are kept.
    for _ in 0..<6 { feed.record(StoreChange(kind: .finalized, object: object)) }
    #expect(feed.latest == 6)
    func decode(_ bytes: [UInt8]) -> [String: Any] {
      (try? JSONSerialization.jsonObject(with: Data(bytes))) as? [String: Any] ?? [:]
    }
    let recent = decode(feed.answer(since: 3))
    #expect((recent["changes"] as? [[String: Any]])?.compactMap { $0["seq"] as? Int } == [4, 5, 6])
    #expect(recent["reload"] as? Bool == false)
    let old = decode(feed.answer(since: 2))
    #expect(old["reload"] as? Bool == true)
    #expect(decode(feed.answer(since: 6))["reload"] as? Bool == false)
  }
}

extension Thread {
  /// Runs `body` on a new thread; `wait()` returns its result.
  static func detachNewThreadWithResult<T: Sendable>(_ body: @escaping @Sendable () -> T) -> ThreadResult<T> {
    let result = ThreadResult<T>()
    Thread.detachNewThread { result.set(body()) }
    return result
  }
}

final class ThreadResult<T: Sendable>: @unchecked Sendable {
  private let condition = NSCondition()
  private var value: T?
  private var done = false

  func set(_ value: T) {
    condition.lock()
    self.value = value
    done = true
    condition.broadcast()
    condition.unlock()
  }

  func wait() -> T? {
    condition.lock()
    defer { condition.unlock() }
    while !done { condition.wait() }
    return value
  }
}
