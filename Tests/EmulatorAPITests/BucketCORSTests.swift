import EmulatorHTTP
import Testing

@testable import EmulatorAPI

/// A bucket's `cors` configuration, applied to its downloads as GCS applies it; the server-wide
/// policy everywhere else.
@Suite struct BucketCORSTests {
  let h: BrowserHarness
  static let shop = "https://shop.example"
  static let local = "http://localhost:3000"
  static let cors =
    #"[{"origin":["https://shop.example"],"method":["GET","HEAD"],"responseHeader":["Content-Type","x-goog-meta-team"],"maxAgeSeconds":600},"#
    + #"{"origin":["*"],"method":["PUT"]}]"#

  init() throws {
    h = try BrowserHarness()
    #expect(h.call("POST", "/storage/v1/b?project=p", #"{"name":"shop","cors":\#(Self.cors)}"#).status == 200)
    #expect(h.call("POST", "/storage/v1/b?project=p", #"{"name":"plain"}"#).status == 200)
    for bucket in ["shop", "plain"] {
      let upload = h.call(
        "POST", "/upload/storage/v1/b/\(bucket)/o?uploadType=media&name=a.txt", "hello",
        headers: [("content-type", "text/plain")])
      #expect(upload.status == 200)
      #expect(h.call("PATCH", "/storage/v1/b/\(bucket)/o/a.txt", #"{"metadata":{"team":"web"}}"#).status == 200)
    }
  }

  @Test(arguments: [
    "/storage/v1/b/shop/o/a.txt?alt=media", "/b/shop/o/a.txt?alt=media", "/download/storage/v1/b/shop/o/a.txt",
    "/v0/b/shop/o/a.txt?alt=media",
  ])
  func downloadsFollowTheBucketsEntries(target: String) {
    let shop = h.call("GET", target, origin: Self.shop)
    #expect(shop.status == 200)
    #expect(shop.text == "hello")
    #expect(shop.header("access-control-allow-origin") == Self.shop)
    #expect(shop.header("access-control-expose-headers") == "Content-Type, x-goog-meta-team")
    #expect(shop.header("vary") == "Origin")
    // An origin no entry names gets no CORS headers, loopback or not (as on GCS).
    let local = h.call("GET", target, origin: Self.local)
    #expect(local.status == 200)
    #expect(local.header("access-control-allow-origin") == nil)
    #expect(local.header("access-control-expose-headers") == nil)
  }

  @Test func preflightsOfDownloadsFollowTheBucketsEntries() {
    let target = "/download/storage/v1/b/shop/o/a.txt"
    let shop = h.call(
      "OPTIONS", target, origin: Self.shop,
      headers: [("access-control-request-method", "GET"), ("access-control-request-headers", "range")])
    #expect(shop.status == 204)
    #expect(shop.header("access-control-allow-origin") == Self.shop)
    #expect(shop.header("access-control-allow-methods") == "GET")
    #expect(shop.header("access-control-allow-headers") == "Content-Type, x-goog-meta-team")
    #expect(shop.header("access-control-max-age") == "600")
    let wrongMethod = h.call(
      "OPTIONS", target, origin: Self.shop, headers: [("access-control-request-method", "DELETE")])
    #expect(wrongMethod.status == 403)
    #expect(wrongMethod.header("access-control-allow-origin") == nil)
    let local = h.call("OPTIONS", target, origin: Self.local, headers: [("access-control-request-method", "GET")])
    #expect(local.status == 403)
  }

  /// Metadata, lists and writes of that bucket, and downloads of a bucket without `cors`, follow
  /// the server-wide policy.
  @Test func everythingElseFollowsTheServerWidePolicy() {
    let metadata = h.call("GET", "/storage/v1/b/shop/o/a.txt", origin: Self.local)
    #expect(metadata.header("access-control-allow-origin") == Self.local)
    #expect(h.call("GET", "/storage/v1/b/shop/o/a.txt", origin: Self.shop).header("access-control-allow-origin") == nil)
    let write = h.call("POST", "/upload/storage/v1/b/shop/o?uploadType=media&name=b.txt", "x", origin: Self.shop)
    #expect(write.status == 403)
    #expect(h.call("GET", "/storage/v1/b/shop/o/b.txt").status == 404)
    let plain = h.call("GET", "/storage/v1/b/plain/o/a.txt?alt=media", origin: Self.local)
    #expect(plain.header("access-control-allow-origin") == Self.local)
    #expect(plain.header("access-control-expose-headers")?.contains("x-goog-meta-team") == true)
    #expect(
      h.call("GET", "/storage/v1/b/plain/o/a.txt?alt=media", origin: Self.shop).header("access-control-allow-origin")
        == nil)
  }

  @Test func aChangedConfigurationAppliesAtOnce() {
    let target = "/storage/v1/b/shop/o/a.txt?alt=media"
    #expect(
      h.call("PATCH", "/storage/v1/b/shop", #"{"cors":[{"origin":["http://localhost:3000"],"method":["GET"]}]}"#).status
        == 200)
    #expect(h.call("GET", target, origin: Self.local).header("access-control-allow-origin") == Self.local)
    #expect(h.call("GET", target, origin: Self.shop).header("access-control-allow-origin") == nil)
    #expect(h.call("PATCH", "/storage/v1/b/shop", #"{"cors":null}"#).status == 200)
    let global = h.call("GET", target, origin: Self.local)
    #expect(global.header("access-control-allow-origin") == Self.local)
    #expect(global.header("access-control-expose-headers")?.contains("X-Goog-Upload-URL") == true)
  }

  /// The XML API: as on GCS, a bucket's `cors` decides every XML request on it.
  @Test(arguments: ["/shop/a.txt", "/shop?list-type=2"])
  func xmlRequestsFollowTheBucketsEntries(target: String) {
    let shop = h.call("GET", target, origin: Self.shop)
    #expect(shop.status == 200)
    #expect(shop.header("access-control-allow-origin") == Self.shop)
    #expect(shop.header("access-control-expose-headers") == "Content-Type, x-goog-meta-team")
    #expect(h.call("GET", target, origin: Self.local).header("access-control-allow-origin") == nil)
  }

  @Test func xmlPreflightsGetTheXMLRoutesMethods() {
    let object = h.call(
      "OPTIONS", "/plain/a.txt", origin: Self.local, headers: [("access-control-request-method", "PUT")])
    #expect(object.status == 204)
    #expect(object.header("access-control-allow-origin") == Self.local)
    let multipart = h.call(
      "OPTIONS", "/plain/a.txt?uploads", origin: Self.local, headers: [("access-control-request-method", "POST")])
    #expect(multipart.status == 204)
    // A plain object takes no POST (only multipart uploads do).
    let post = h.call("OPTIONS", "/plain/a.txt", origin: Self.local, headers: [("access-control-request-method", "POST")])
    #expect(post.status == 405)
    #expect(h.call("OPTIONS", "/plain/a.txt").header("allow") == "GET, HEAD, PUT, DELETE")
  }
}
