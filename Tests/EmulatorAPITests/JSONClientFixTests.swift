import EmulatorHTTP
import EmulatorStorage
import Foundation
import Testing

@testable import EmulatorAPI

/// The JSON API as real clients call it: the C++ client's empty name, GCS's 404 for a missing
/// bucket, rclone's `null` copy body, and the Go clients' `X-GUploader-No-308`.
@Suite struct JSONClientFixTests {
  @Test(arguments: ["/storage/v1/b/bkt/o/", "/b/bkt/o/", "/v0/b/bkt/o/", "/download/storage/v1/b/bkt/o/"])
  func emptyObjectNameIsA404NeverAListing(path: String) throws {
    let h = try APIHarness()
    #expect(h.call("POST", "/upload/storage/v1/b/bkt/o?uploadType=media&name=a", "x").status == 200)
    for method in ["GET", "HEAD", "DELETE", "PATCH"] {
      let reply = h.call(method, path, method == "PATCH" ? "{}" : "")
      #expect(reply.status == 404, "\(method) \(path)")
      #expect(!reply.text.contains("\"items\""))
    }
    // The listing itself is still at .../o.
    #expect(h.call("GET", String(path.dropLast())).status == (path.hasPrefix("/download") ? 404 : 200))
  }

  @Test func writeToMissingBucketIsA404OnGCSSurfaces() throws {
    let h = try APIHarness(lenientBuckets: false)
    let writes: [(String, String, String)] = [
      ("POST", "/upload/storage/v1/b/nobucket/o?uploadType=media&name=a", "x"),
      ("POST", "/storage/v1/b/nobucket/o?uploadType=media&name=a", "x"),
      ("POST", "/upload/storage/v1/b/nobucket/o?uploadType=resumable&name=a", ""),
    ]
    for (method, path, body) in writes {
      let reply = h.call(method, path, body)
      #expect(reply.status == 404, "\(path): \(reply.text)")
    }
    #expect(h.call("GET", "/storage/v1/b/nobucket").status == 404)
    // A copy into a missing bucket too.
    #expect(h.call("POST", "/storage/v1/b", #"{"name":"src"}"#).status == 200)
    #expect(h.call("POST", "/upload/storage/v1/b/src/o?uploadType=media&name=a", "x").status == 200)
    #expect(h.call("POST", "/storage/v1/b/src/o/a/copyTo/b/nobucket/o/a").status == 404)
    // Firebase keeps creating its default bucket.
    #expect(h.call("POST", "/v0/b/demo.appspot.com/o?name=a", "x").status == 200)
    #expect(h.call("GET", "/storage/v1/b/demo.appspot.com").status == 200)
  }

  @Test func lenientBucketsKeepsCreatingThem() throws {
    let h = try APIHarness(lenientBuckets: true)
    #expect(h.call("POST", "/upload/storage/v1/b/newbucket/o?uploadType=media&name=a", "x").status == 200)
    #expect(h.call("GET", "/storage/v1/b/newbucket").status == 200)
  }

  @Test(arguments: ["", "null", " null\n", "{}"])
  func copyAndRewriteAcceptNullAndEmptyBodies(body: String) throws {
    let h = try APIHarness()
    #expect(h.call("POST", "/upload/storage/v1/b/bkt/o?uploadType=media&name=src", "data").status == 200)
    let copy = h.call("POST", "/storage/v1/b/bkt/o/src/copyTo/b/bkt/o/copied", body)
    #expect(copy.status == 200, "copyTo with body '\(body)': \(copy.text)")
    let rewrite = h.call("POST", "/storage/v1/b/bkt/o/src/rewriteTo/b/bkt/o/rewritten", body)
    #expect(rewrite.status == 200, "rewriteTo with body '\(body)': \(rewrite.text)")
    #expect(h.call("GET", "/storage/v1/b/bkt/o/rewritten?alt=media").text == "data")
  }

  @Test(arguments: ["nullx", "[]", "null null"])
  func copyRejectsOtherBodies(body: String) throws {
    let h = try APIHarness()
    #expect(h.call("POST", "/upload/storage/v1/b/bkt/o?uploadType=media&name=src", "data").status == 200)
    #expect(h.call("POST", "/storage/v1/b/bkt/o/src/copyTo/b/bkt/o/copied", body).status == 400)
  }

  @Test func noThreeOhEightAnswersTwoHundredWithOverride() throws {
    let h = try APIHarness()
    let start = h.call("POST", "/upload/storage/v1/b/bkt/o?uploadType=resumable&name=big")
    let location = try #require(start.header("location"))
    let path = String(location.dropFirst("http://localhost:9199".count))
    let no308 = ("X-GUploader-No-308", "yes")
    let first = h.call("PUT", path, "abcd", headers: [("content-range", "bytes 0-3/*"), no308])
    #expect(first.status == 200)
    #expect(first.header("x-http-status-code-override") == "308")
    #expect(first.header("range") == "bytes=0-3")
    let query = h.call("PUT", path, headers: [("content-range", "bytes */*"), no308])
    #expect(query.status == 200)
    #expect(query.header("x-http-status-code-override") == "308")
    // Without the header, the bare 308.
    let plain = h.call("PUT", path, headers: [("content-range", "bytes */*")])
    #expect(plain.status == 308)
    #expect(plain.header("x-http-status-code-override") == nil)
    let last = h.call("PUT", path, "ef", headers: [("content-range", "bytes 4-5/6"), no308])
    #expect(last.status == 200)
    #expect(last.header("x-http-status-code-override") == nil)
    #expect(last.json["size"]?.stringValue == "6")
  }
}
