import Crypto
import EmulatorHTTP
import EmulatorStorage
import Foundation
import Testing

@testable import EmulatorAPI

/// Notification configurations, the project's service account and HMAC keys, and the batch
/// endpoint, through the routes without sockets.
@Suite struct ProjectBatchRouteTests {
  let h: APIHarness

  init() throws {
    h = try APIHarness(lenientBuckets: false)
    #expect(h.call("POST", "/storage/v1/b", #"{"name":"pb-bkt"}"#).status == 200)
  }

  @Test func notificationConfigsInsertListGetDelete() {
    let base = "/storage/v1/b/pb-bkt/notificationConfigs"
    let made = h.call(
      "POST", base,
      #"{"topic":"//pubsub.googleapis.com/projects/p/topics/t","payload_format":"JSON_API_V1","event_types":["OBJECT_FINALIZE"],"custom_attributes":{"k":"v"}}"#)
    #expect(made.status == 200)
    #expect(made.string("kind") == "storage#notification")
    #expect(made.string("topic") == "//pubsub.googleapis.com/projects/p/topics/t")
    let id = made.string("id") ?? ""
    #expect(!id.isEmpty)
    let second = h.call("POST", base, #"{"topic":"projects/p/topics/u","payload_format":"NONE"}"#)
    #expect(second.string("id") != id)
    guard case .array(let items)? = h.call("GET", base).json["items"] else { Issue.record("no items"); return }
    #expect(items.count == 2)
    #expect(h.call("GET", base + "/" + id).json["custom_attributes"]?["k"] == .string("v"))
    #expect(h.call("DELETE", base + "/" + id).status == 204)
    #expect(h.call("GET", base + "/" + id).status == 404)
    #expect(h.call("DELETE", base + "/" + id).status == 404)
    for bad in [
      #"{"payload_format":"NONE"}"#, #"{"topic":"t"}"#, #"{"topic":"projects/p/topics/t","payload_format":"XML"}"#,
      #"{"topic":"projects/p/topics/t","event_types":["OBJECT_EXPLODE"]}"#,
    ] {
      #expect(h.call("POST", base, bad).status == 400, "\(bad)")
    }
    #expect(h.call("POST", "/storage/v1/b/nobucket/notificationConfigs", #"{"topic":"projects/p/topics/t"}"#).status == 404)
  }

  @Test func notificationConfigsAreCappedPerBucket() {
    let base = "/storage/v1/b/pb-bkt/notificationConfigs"
    for _ in 0..<StorageAPI.maxNotificationConfigs {
      #expect(h.call("POST", base, #"{"topic":"projects/p/topics/t"}"#).status == 200)
    }
    let over = h.call("POST", base, #"{"topic":"projects/p/topics/t"}"#)
    #expect(over.status == 400)
    #expect(over.text.contains("at most"))
  }

  @Test func serviceAccount() {
    let reply = h.call("GET", "/storage/v1/projects/my-project/serviceAccount")
    #expect(reply.status == 200)
    #expect(reply.string("kind") == "storage#serviceAccount")
    #expect(reply.string("email_address")?.hasSuffix("@gs-project-accounts.iam.gserviceaccount.com") == true)
  }

  @Test func hmacKeyLifecycle() {
    let base = "/storage/v1/projects/p1/hmacKeys"
    #expect(h.call("POST", base).status == 400)
    let made = h.call("POST", base + "?serviceAccountEmail=sa%40p1.iam.gserviceaccount.com")
    #expect(made.status == 200)
    #expect(made.string("kind") == "storage#hmacKey")
    let secret = made.string("secret") ?? ""
    #expect(secret.count == 40)
    let id = made.json["metadata"]?["accessId"]?.stringValue ?? ""
    #expect(id.hasPrefix("GOOG1E"))
    #expect(made.json["metadata"]?["state"] == .string("ACTIVE"))
    // The secret is returned once: never by get or list.
    let got = h.call("GET", base + "/" + id)
    #expect(got.string("kind") == "storage#hmacKeyMetadata")
    #expect(!got.text.contains(secret))
    #expect(!h.call("GET", base).text.contains(secret))
    // An ACTIVE key cannot be deleted.
    #expect(h.call("DELETE", base + "/" + id).status == 400)
    let etag = got.string("etag") ?? ""
    #expect(h.call("PUT", base + "/" + id, #"{"state":"INACTIVE","etag":"wrong"}"#).status == 412)
    let inactive = h.call("PUT", base + "/" + id, #"{"state":"INACTIVE","etag":"\#(etag)"}"#)
    #expect(inactive.string("state") == "INACTIVE")
    #expect(h.call("PUT", base + "/" + id, #"{"state":"DELETED"}"#).status == 400)
    #expect(h.call("DELETE", base + "/" + id).status == 204)
    #expect(h.call("GET", base + "/" + id).string("state") == "DELETED")
    #expect(!h.call("GET", base).text.contains(id))
    #expect(h.call("GET", base + "?showDeletedKeys=true").text.contains(id))
    #expect(h.call("GET", base + "/GOOG1EMISSING").status == 404)
    #expect(h.call("GET", "/storage/v1/projects/other/hmacKeys/" + id).status == 404)
  }

  @Test func hmacKeysPerServiceAccountAreCapped() {
    let path = "/storage/v1/projects/p1/hmacKeys?serviceAccountEmail=sa%40x"
    for _ in 0..<HMACKeyRing.maxKeysPerAccount { #expect(h.call("POST", path).status == 200) }
    #expect(h.call("POST", path).status == 400)
  }

  /// Keys are saved with the data folder: a restarted emulator still lists them, with their
  /// state, and an ACTIVE one still verifies (its secret is kept, never listed).
  @Test func hmacKeysSurviveRestart() throws {
    let root = FileManager.default.temporaryDirectory.appendingPathComponent("se-hmac-\(UUID().uuidString)")
    defer { try? FileManager.default.removeItem(at: root) }
    func api() throws -> StorageAPI {
      let store = try ObjectStore(backend: FileBackend(root: root.appendingPathComponent("data")))
      return StorageAPI(store: store, sessions: try UploadSessions(directory: root.appendingPathComponent("uploads")))
    }
    func call(_ api: StorageAPI, _ method: String, _ target: String, _ body: String = "") -> Reply {
      Reply(api.answer(HTTPRequest(head: HTTPRequestHead(method: method, target: target, headers: ["host": "h"]), body: Array(body.utf8))))
    }
    let first = try api()
    let made = call(first, "POST", "/storage/v1/projects/p1/hmacKeys?serviceAccountEmail=sa%40x")
    let id = made.json["metadata"]?["accessId"]?.stringValue ?? ""
    let other = call(first, "POST", "/storage/v1/projects/p1/hmacKeys?serviceAccountEmail=sa%40x")
    let otherID = other.json["metadata"]?["accessId"]?.stringValue ?? ""
    #expect(call(first, "PUT", "/storage/v1/projects/p1/hmacKeys/" + otherID, #"{"state":"INACTIVE"}"#).status == 200)
    let second = try api()
    #expect(call(second, "GET", "/storage/v1/projects/p1/hmacKeys/" + id).string("state") == "ACTIVE")
    #expect(call(second, "GET", "/storage/v1/projects/p1/hmacKeys/" + otherID).string("state") == "INACTIVE")
    #expect(second.signing.madeKeys.activeSecret(id) == made.string("secret").map { Array($0.utf8) })
    #expect(second.signing.madeKeys.activeSecret(otherID) == nil)
  }

  /// A created ACTIVE key verifies GOOG4-HMAC-SHA256 URLs: right signature 200, wrong 403,
  /// after deactivation no longer accepted as that key.
  @Test func createdHMACKeyVerifiesSignedURLs() throws {
    #expect(h.call("POST", "/upload/storage/v1/b/pb-bkt/o?uploadType=media&name=s.txt", "signed").status == 200)
    let made = h.call("POST", "/storage/v1/projects/p1/hmacKeys?serviceAccountEmail=sa%40x")
    let id = made.json["metadata"]?["accessId"]?.stringValue ?? ""
    let secret = made.string("secret") ?? ""
    let path = "/download/storage/v1/b/pb-bkt/o/s.txt"
    func target(secret: String) throws -> String {
      let date = SignedURLRouteTests.stamp(Int64(Date().timeIntervalSince1970))
      let params = [
        ("X-Goog-Algorithm", "GOOG4-HMAC-SHA256"),
        ("X-Goog-Credential", "\(id)/\(date.prefix(8))/auto/storage/goog4_request"),
        ("X-Goog-Date", date), ("X-Goog-Expires", "600"), ("X-Goog-SignedHeaders", "host"),
      ]
      let rawQuery = params.map {
        SignedURLVerifier.encode($0.0, keepSlash: false) + "=" + SignedURLVerifier.encode($0.1, keepSlash: false)
      }.joined(separator: "&")
      let canonical = SignedURLVerifier.canonicalRequestV4(
        method: "GET", path: path, query: try QueryPairs(Substring(rawQuery)), signedHeaders: ["host"],
        headers: ["host": "localhost:9199"])
      let stringToSign = SignedURLVerifier.stringToSignV4(
        algorithm: "GOOG4-HMAC-SHA256", date: date, scope: "\(date.prefix(8))/auto/storage/goog4_request",
        canonicalRequest: canonical)
      let key = SignedURLVerifier.hmacSigningKey(secret: Array(secret.utf8), date: String(date.prefix(8)), location: "auto")
      let mac = HMAC<SHA256>.authenticationCode(for: Array(stringToSign.utf8), using: key)
      return "\(path)?\(rawQuery)&X-Goog-Signature=\(mac.map { SignedURLVerifier.hexDigit($0) }.joined())"
    }
    let good = h.call("GET", try target(secret: secret))
    #expect(good.status == 200)
    #expect(good.text == "signed")
    #expect(h.call("GET", try target(secret: "not-the-secret")).status == 403)
    _ = h.call("PUT", "/storage/v1/projects/p1/hmacKeys/" + id, #"{"state":"INACTIVE"}"#)
    // Inactive, it verifies nothing; with no configured key the URL is accepted unverified again.
    #expect(h.call("GET", try target(secret: "not-the-secret")).status == 200)
  }

  func batchBody(_ parts: [String], boundary: String = "===b===") -> String {
    parts.enumerated().map { index, request in
      "--\(boundary)\r\nContent-Type: application/http\r\nContent-Transfer-Encoding: binary\r\nContent-ID: <id+\(index)>\r\n\r\n\(request)\r\n"
    }.joined() + "--\(boundary)--\r\n"
  }

  /// Splits a multipart/mixed batch answer into each part's status and Content-ID.
  func batchParts(_ reply: Reply) -> [(status: Int, id: String?, text: String)] {
    guard let type = reply.header("content-type"), let range = type.range(of: "boundary=") else { return [] }
    let boundary = "--" + type[range.upperBound...]
    return reply.text.components(separatedBy: boundary).dropFirst().compactMap { chunk in
      guard let statusLine = chunk.range(of: "HTTP/1.1 ") else { return nil }
      let status = Int(chunk[statusLine.upperBound...].prefix(3)) ?? 0
      let id = chunk.components(separatedBy: "\r\n").first { $0.hasPrefix("content-id: ") }.map { String($0.dropFirst(12)) }
      return (status, id, chunk)
    }
  }

  @Test func batchRunsEachPartInOrderWithItsContentID() {
    for name in ["a", "b"] {
      #expect(h.call("POST", "/upload/storage/v1/b/pb-bkt/o?uploadType=media&name=\(name)", name).status == 200)
    }
    let body = batchBody([
      "DELETE /storage/v1/b/pb-bkt/o/a HTTP/1.1\r\n",
      "PATCH http://localhost:9199/storage/v1/b/pb-bkt/o/b HTTP/1.1\r\ncontent-type: application/json\r\ncontent-length: 27\r\n\r\n{\"metadata\":{\"k\":\"batch\"}}\r\n",
      "DELETE /storage/v1/b/pb-bkt/o/a HTTP/1.1\r\n",
      "this is not a request",
      "GET /storage/v1/b/pb-bkt/o/b?alt=media HTTP/1.1\r\n",
    ])
    let reply = h.call("POST", "/batch/storage/v1", body, headers: [("content-type", "multipart/mixed; boundary=\"===b===\"")])
    #expect(reply.status == 200)
    let parts = batchParts(reply)
    #expect(parts.map(\.status) == [204, 200, 404, 400, 400])
    #expect(parts.map(\.id) == (0..<5).map { "<response-id+\($0)>" })
    #expect(parts[1].text.contains("\"k\":\"batch\""))
    #expect(h.call("GET", "/storage/v1/b/pb-bkt/o/a").status == 404)
    #expect(h.call("GET", "/storage/v1/b/pb-bkt/o/b").json["metadata"]?["k"] == .string("batch"))
  }

  @Test func batchEnvelopeFaultsAndLimits() {
    let type = [("content-type", "multipart/mixed; boundary=x")]
    #expect(h.call("GET", "/batch/storage/v1").status == 405)
    #expect(h.call("POST", "/batch/storage/v1", "junk", headers: [("content-type", "application/json")]).status == 400)
    #expect(h.call("POST", "/batch/storage/v1", "no boundary here", headers: type).status == 400)
    let tooMany = batchBody(
      Array(repeating: "GET /storage/v1/b/pb-bkt HTTP/1.1\r\n", count: StorageAPI.maxBatchParts + 1), boundary: "x")
    let refused = h.call("POST", "/batch/storage/v1", tooMany, headers: type)
    #expect(refused.status == 400)
    #expect(refused.text.contains("more than \(StorageAPI.maxBatchParts) parts"))
    let full = batchBody(Array(repeating: "GET /storage/v1/b/pb-bkt HTTP/1.1\r\n", count: StorageAPI.maxBatchParts), boundary: "x")
    #expect(batchParts(h.call("POST", "/batch/storage/v1", full, headers: type)).count == StorageAPI.maxBatchParts)
    // A nested batch, a lying Content-Length and an oversized head are each their part's own 400.
    let nested = batchBody(
      [
        "POST /batch/storage/v1 HTTP/1.1\r\n", "PATCH /storage/v1/b/pb-bkt HTTP/1.1\r\ncontent-length: 99\r\n\r\n{}",
        "GET /storage/v1/b/pb-bkt HTTP/1.1\r\nx-long: " + String(repeating: "a", count: StorageAPI.maxBatchPartHeadBytes) + "\r\n",
        "GET /storage/v1/b/pb-bkt HTTP/1.1\r\n",
      ], boundary: "x")
    #expect(batchParts(h.call("POST", "/batch/storage/v1", nested, headers: type)).map(\.status) == [400, 400, 400, 200])
  }
}
