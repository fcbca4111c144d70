import Foundation
import Testing

/// `matchGlob` attacks over a socket: the pattern that backtracked exponentially before is
/// answered (no match) while other requests are served, and unbounded patterns get a 400.
@Suite struct GlobAttackEndToEndTests {
  @Test func manyStarsOverLongNamesAreAnsweredAndDoNotStopOtherRequests() throws {
    let server = try RunningEmulator(inMemory: true)
    defer { server.stop() }
    let name = String(repeating: "a", count: 200)
    for index in 0..<20 {
      let reply = try Curl.request(
        "POST", server.base + "/upload/storage/v1/b/bkt/o?uploadType=media&name=\(name)\(index)", body: "x")
      #expect(reply.status == 200)
    }
    // Backtracking tries every way of sharing 200 `a`s among 20 stars: more than 10^20.
    let pattern = String(repeating: "a*", count: 20) + "b"
    let attack = server.base + "/storage/v1/b/bkt/o?matchGlob=" + pattern.replacingOccurrences(of: "*", with: "%2A")
    let done = DispatchSemaphore(value: 0)
    let statuses = Locked<[Int]>([])
    for _ in 0..<4 {
      DispatchQueue.global().async {
        let status = (try? Curl.request("GET", attack))?.status ?? -1
        statuses.withLock { $0.append(status) }
        done.signal()
      }
    }
    // Meanwhile an ordinary request is served.
    #expect(try Curl.request("GET", server.base + "/storage/v1/b/bkt/o/\(name)0").status == 200)
    for _ in 0..<4 { done.wait() }
    #expect(statuses.withLock { $0 } == [200, 200, 200, 200])
    let reply = try Curl.request("GET", attack)
    #expect((reply.json["items"] as? [Any]) == nil, "nothing ends in b")
  }

  @Test(arguments: [
    String(repeating: "%7B", count: 11) + "a" + String(repeating: "%7D", count: 11),
    String(repeating: "a", count: 1025), "%5Babc", "a%7D",
  ])
  func unboundedOrMalformedPatternsGet400(_ pattern: String) throws {
    let server = try RunningEmulator(inMemory: true)
    defer { server.stop() }
    _ = try Curl.request("POST", server.base + "/upload/storage/v1/b/bkt/o?uploadType=media&name=x", body: "x")
    let reply = try Curl.request("GET", server.base + "/storage/v1/b/bkt/o?matchGlob=\(pattern)")
    #expect(reply.status == 400)
    #expect(reply.text.contains("matchGlob"))
  }
}

/// A value behind a lock, for results gathered from several threads.
private final class Locked<Value: Sendable>: @unchecked Sendable {
  private let lock = NSLock()
  private var value: Value
  init(_ value: Value) { self.value = value }
  func withLock<R>(_ body: (inout Value) -> R) -> R {
    lock.lock()
    defer { lock.unlock() }
    return body(&value)
  }
}
