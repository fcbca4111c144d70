import EmulatorHTTP
import EmulatorStorage
import Foundation
import Testing

@testable import EmulatorAPI

/// Resumable sessions through the routes: a failed finalize leaves the session resumable, and a
/// flood of sessions that never finish is refused with 429 and Retry-After.
@Suite struct UploadSessionLimitTests {
  func harness(maxOpen: Int = 1000) throws -> APIHarness {
    let store = try ObjectStore(backend: MemoryBackend())
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("se-api-\(UUID().uuidString)")
    let sessions = try UploadSessions(directory: folder, options: .init(maxOpen: maxOpen))
    var limits = APILimits()
    limits.lenientBuckets = true
    return APIHarness(api: StorageAPI(store: store, sessions: sessions, limits: limits))
  }

  func location(_ reply: Reply) throws -> String {
    let url = try #require(reply.header("location"))
    let range = try #require(url.range(of: "/upload/"))
    return String(url[range.lowerBound...])
  }

  @Test func aFinalizeThatFailsKeepsTheBytesAndTheSessionAnswersARetry() throws {
    let h = try harness()
    let url = try location(h.call("POST", "/upload/storage/v1/b/bkt/o?uploadType=resumable&name=kept", "{}"))
    #expect(h.call("PUT", url, "01234", headers: [("content-range", "bytes 0-4/*")]).status == 308)
    // The last chunk carries a wrong MD5: the commit fails after the bytes were handed over.
    let wrong = h.call(
      "PUT", url, "56789",
      headers: [("content-range", "bytes 5-9/10"), ("x-goog-hash", "md5=AAAAAAAAAAAAAAAAAAAAAA==")])
    #expect(wrong.status == 400)
    // The session still has every byte, says so, and finalizes when asked again.
    let query = h.call("PUT", url, "", headers: [("content-range", "bytes */*")])
    #expect(query.status == 308)
    #expect(query.header("range") == "bytes=0-9")
    let retry = h.call("PUT", url, "", headers: [("content-range", "bytes */10")])
    #expect(retry.status == 200, "\(retry.text)")
    #expect(h.call("GET", "/storage/v1/b/bkt/o/kept?alt=media").text == "0123456789")
  }

  @Test func sessionFloodPastTheCapIsRefusedWith429AndRetryAfter() throws {
    let h = try harness(maxOpen: 3)
    var urls: [String] = []
    for index in 0..<3 {
      let start = h.call("POST", "/upload/storage/v1/b/bkt/o?uploadType=resumable&name=s\(index)", "{}")
      #expect(start.status == 200)
      urls.append(try location(start))
    }
    let refused = h.call("POST", "/upload/storage/v1/b/bkt/o?uploadType=resumable&name=s3", "{}")
    #expect(refused.status == 429)
    #expect(refused.text.contains(#""reason":"rateLimitExceeded""#))
    #expect(refused.json["error"]?["code"] == .number("429"))
    let retryAfter = try #require(refused.header("retry-after").flatMap { Int($0) })
    #expect((1...60).contains(retryAfter))
    // The Firebase protocol is refused the same way.
    let firebase = h.call(
      "POST", "/v0/b/bkt/o?name=f", "{}",
      headers: [("x-goog-upload-protocol", "resumable"), ("x-goog-upload-command", "start")])
    #expect(firebase.status == 429)
    // Finishing or cancelling one frees a place.
    #expect(h.call("PUT", urls[0], "done").status == 200)
    #expect(h.call("DELETE", urls[1]).status == 204)
    #expect(h.call("POST", "/upload/storage/v1/b/bkt/o?uploadType=resumable&name=s4", "{}").status == 200)
    #expect(h.call("POST", "/upload/storage/v1/b/bkt/o?uploadType=resumable&name=s5", "{}").status == 200)
    #expect(h.call("POST", "/upload/storage/v1/b/bkt/o?uploadType=resumable&name=s6", "{}").status == 429)
  }
}

extension APIHarness {
  init(api: StorageAPI) { self.api = api }
}
