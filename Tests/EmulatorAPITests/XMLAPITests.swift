import EmulatorHTTP
import EmulatorStorage
import Foundation
import Testing

@testable import EmulatorAPI

/// The XML API through the router, without sockets: what obstore and other S3-like clients send.
@Suite struct XMLAPITests {
  let h: APIHarness

  init() throws {
    h = try APIHarness(lenientBuckets: false)
    #expect(h.call("POST", "/storage/v1/b", #"{"name":"bkt"}"#).status == 200)
  }

  func vhost(_ method: String, _ target: String, host: String, _ body: String = "") -> Reply {
    let head = HTTPRequestHead(method: method, target: target, headers: ["host": host])
    return Reply(h.api.answer(HTTPRequest(head: head, body: Array(body.utf8))))
  }

  @Test func routesPathAndVirtualHostStyles() throws {
    let head = { (target: String, host: String) in
      HTTPRequestHead(method: "GET", target: target, headers: ["host": host])
    }
    #expect(
      try XMLRoute.match(head("/bkt/a/b", "localhost:9199"), virtualHost: "localhost")
        == XMLRoute(bucket: "bkt", name: "a/b"))
    #expect(try XMLRoute.match(head("/bkt", "x"), virtualHost: "localhost") == XMLRoute(bucket: "bkt", name: nil))
    #expect(try XMLRoute.match(head("/bkt/", "x"), virtualHost: "localhost") == XMLRoute(bucket: "bkt", name: nil))
    #expect(try XMLRoute.match(head("/", "x"), virtualHost: "localhost") == XMLRoute(bucket: nil, name: nil))
    #expect(
      try XMLRoute.match(head("/a%2Db", "bkt.localhost:1"), virtualHost: "localhost")
        == XMLRoute(bucket: "bkt", name: "a-b", virtualHost: true))
    #expect(XMLRoute.bucket(fromHost: "BKT.LocalHost:9199", suffix: "localhost") == "bkt")
    #expect(XMLRoute.bucket(fromHost: "localhost:9199", suffix: "localhost") == nil)
    #expect(XMLRoute.bucket(fromHost: ".localhost", suffix: "localhost") == nil)
    #expect(XMLRoute.bucket(fromHost: "[::1]:9199", suffix: "localhost") == nil)
    #expect(XMLRoute.bucket(fromHost: "127.0.0.1:9199", suffix: "localhost") == nil)
    #expect(XMLRoute.bucket(fromHost: "a.b.example.test", suffix: "example.test") == "a.b")
    // The emulator's own first segments are never buckets on the path style.
    for reserved in ["b", "v0", "storage", "upload", "download", "resumable", "internal", "ui"] {
      #expect(try XMLRoute.match(head("/\(reserved)/x", "x"), virtualHost: "localhost") == nil)
    }
    // JSON routes win: the API answers them in JSON.
    #expect(h.call("GET", "/storage/v1/b/bkt/o").header("content-type")?.hasPrefix("application/json") == true)
    #expect(h.call("GET", "/b/bkt/o").header("content-type")?.hasPrefix("application/json") == true)
  }

  @Test func putGetHeadDeleteWithGCSHeaders() throws {
    let put = h.call(
      "PUT", "/bkt/dir/file.txt", "hello world",
      headers: [
        ("content-type", "text/plain"), ("cache-control", "no-cache"), ("content-disposition", "inline"),
        ("x-goog-meta-color", "blue"), ("content-md5", "XrY7u+Ae7tCTyyK7j1rNww=="),
      ])
    #expect(put.status == 200, "\(put.text)")
    #expect(put.header("etag") == "\"5eb63bbbe01eeed093cb22bb8f5acdc3\"")
    let generation = try #require(put.header("x-goog-generation"))
    let get = h.call("GET", "/bkt/dir/file.txt")
    #expect(get.status == 200)
    #expect(get.text == "hello world")
    #expect(get.header("etag") == "\"5eb63bbbe01eeed093cb22bb8f5acdc3\"")
    #expect(get.header("x-goog-generation") == generation)
    #expect(get.header("x-goog-metageneration") == "1")
    #expect(get.header("x-goog-hash") == "crc32c=yZRlqg==,md5=XrY7u+Ae7tCTyyK7j1rNww==")
    #expect(get.header("x-goog-stored-content-length") == "11")
    #expect(get.header("x-goog-stored-content-encoding") == "identity")
    #expect(get.header("x-goog-storage-class") == "STANDARD")
    #expect(get.header("content-type") == "text/plain")
    #expect(get.header("cache-control") == "no-cache")
    #expect(get.header("content-disposition") == "inline")
    #expect(get.header("x-goog-meta-color") == "blue")
    #expect(get.header("last-modified")?.hasSuffix(" GMT") == true)
    // The same object on the JSON surface.
    let json = h.call("GET", "/storage/v1/b/bkt/o/dir%2Ffile.txt")
    #expect(json.json["metadata"]?["color"]?.stringValue == "blue")
    #expect(h.call("HEAD", "/bkt/dir/file.txt").status == 200)
    #expect(h.call("DELETE", "/bkt/dir/file.txt").status == 204)
    let missing = h.call("GET", "/bkt/dir/file.txt")
    #expect(missing.status == 404)
    #expect(missing.text.contains("<Code>NoSuchKey</Code>"))
    #expect(h.call("GET", "/nobucket/x").text.contains("<Code>NoSuchBucket</Code>"))
    #expect(h.call("DELETE", "/bkt/dir/file.txt").status == 404)
  }

  @Test func percentEncodedBytesNameTheSameObjectEverywhere() throws {
    // obstore encodes '-' and '.'.
    #expect(h.call("PUT", "/bkt/data%2Dv1%2Eparquet", "p").status == 200)
    #expect(h.call("GET", "/bkt/data-v1.parquet").text == "p")
    #expect(h.call("GET", "/storage/v1/b/bkt/o/data%2Dv1%2Eparquet?alt=media").text == "p")
    #expect(vhost("GET", "/data%2dv1.parquet", host: "bkt.localhost:9199").text == "p")
    #expect(h.call("PUT", "/bkt/a%20b%2Bc%25d%C3%A9", "q").status == 200)
    #expect(h.call("GET", "/storage/v1/b/bkt/o/a%20b%2Bc%25d%C3%A9").json["name"]?.stringValue == "a b+c%dé")
    #expect(h.call("GET", "/bkt/a%ZZ").status == 400)
  }

  @Test func conditionalReadsAnswer304And412() throws {
    let put = h.call("PUT", "/bkt/c", "data")
    let etag = try #require(put.header("etag"))
    let generation = try #require(put.header("x-goog-generation"))
    let lastModified = try #require(put.header("last-modified"))
    #expect(h.call("GET", "/bkt/c", headers: [("if-none-match", etag)]).status == 304)
    #expect(h.call("GET", "/bkt/c", headers: [("if-none-match", "\"other\"")]).status == 200)
    #expect(h.call("GET", "/bkt/c", headers: [("if-match", etag)]).status == 200)
    let failed = h.call("GET", "/bkt/c", headers: [("if-match", "\"other\"")])
    #expect(failed.status == 412)
    #expect(failed.text.contains("<Code>PreconditionFailed</Code>"))
    #expect(h.call("GET", "/bkt/c", headers: [("if-modified-since", lastModified)]).status == 304)
    #expect(h.call("GET", "/bkt/c", headers: [("if-modified-since", "Sun, 06 Nov 1994 08:49:37 GMT")]).status == 200)
    #expect(h.call("GET", "/bkt/c", headers: [("x-goog-if-generation-match", generation)]).status == 200)
    #expect(h.call("GET", "/bkt/c", headers: [("x-goog-if-generation-match", "1")]).status == 412)
    #expect(h.call("GET", "/bkt/c", headers: [("x-goog-if-metageneration-match", "2")]).status == 412)
    #expect(h.call("GET", "/bkt/c", headers: [("x-goog-if-generation-match", "x")]).status == 400)
    let range = h.call("GET", "/bkt/c", headers: [("range", "bytes=1-2")])
    #expect(range.status == 206)
    #expect(range.text == "at")
    #expect(h.call("GET", "/bkt/c", headers: [("range", "bytes=9-")]).status == 416)
    // Conditional writes.
    #expect(h.call("PUT", "/bkt/c", "new", headers: [("x-goog-if-generation-match", "0")]).status == 412)
    #expect(h.call("PUT", "/bkt/n", "new", headers: [("x-goog-if-generation-match", "0")]).status == 200)
  }

  @Test func unmodifiedSinceAndNoncurrentGenerations() throws {
    #expect(h.call("POST", "/storage/v1/b", #"{"name":"vbkt","versioning":{"enabled":true}}"#).status == 200)
    let first = h.call("PUT", "/vbkt/v", "one")
    let generation = try #require(first.header("x-goog-generation"))
    #expect(h.call("PUT", "/vbkt/v", "two").status == 200)
    #expect(h.call("GET", "/vbkt/v").text == "two")
    let old = h.call("GET", "/vbkt/v?generation=\(generation)")
    #expect(old.status == 200)
    #expect(old.text == "one")
    #expect(
      h.call("GET", "/vbkt/v", headers: [("if-unmodified-since", "Sun, 06 Nov 1994 08:49:37 GMT")]).status == 412)
    #expect(
      h.call("GET", "/vbkt/v", headers: [("if-unmodified-since", "Fri, 01 Jan 2100 00:00:00 GMT")]).status == 200)
    #expect(h.call("DELETE", "/vbkt/v?generation=\(generation)").status == 204)
    #expect(h.call("GET", "/vbkt/v?generation=\(generation)").status == 404)
  }

  @Test func putChecksHashes() throws {
    let bad = h.call("PUT", "/bkt/h", "hello world", headers: [("content-md5", "AAAAAAAAAAAAAAAAAAAAAA==")])
    #expect(bad.status == 400)
    #expect(bad.text.contains("BadDigest"))
    #expect(h.call("PUT", "/bkt/h", "hello world", headers: [("content-md5", "nope")]).status == 400)
    #expect(h.call("PUT", "/bkt/h", "hello world", headers: [("x-goog-hash", "crc32c=AAAAAA==")]).status == 400)
    #expect(h.call("PUT", "/bkt/h", "hello world", headers: [("x-goog-hash", "crc32c=yZRlqg==")]).status == 200)
    #expect(h.call("GET", "/bkt/h").status == 200)
    // A write to a missing bucket is 404 as on GCS, and creates nothing.
    #expect(h.call("PUT", "/nobucket/h", "x").status == 404)
    #expect(h.call("GET", "/storage/v1/b/nobucket").status == 404)
  }

  @Test func copyWithConditionsAndDirective() throws {
    let put = h.call("PUT", "/bkt/src", "source", headers: [("content-type", "text/x"), ("x-goog-meta-k", "v")])
    let generation = try #require(put.header("x-goog-generation"))
    let copy = h.call("PUT", "/bkt/dst", headers: [("x-goog-copy-source", "/bkt/src")])
    #expect(copy.status == 200, "\(copy.text)")
    #expect(copy.text.contains("<CopyObjectResult>"))
    let got = h.call("GET", "/bkt/dst")
    #expect(got.text == "source")
    #expect(got.header("content-type") == "text/x")
    #expect(got.header("x-goog-meta-k") == "v")
    let replaced = h.call(
      "PUT", "/bkt/dst2",
      headers: [("x-goog-copy-source", "bkt/src"), ("x-goog-metadata-directive", "REPLACE"), ("content-type", "a/b")])
    #expect(replaced.status == 200)
    #expect(h.call("GET", "/bkt/dst2").header("x-goog-meta-k") == nil)
    #expect(h.call("GET", "/bkt/dst2").header("content-type") == "a/b")
    let conditioned = h.call(
      "PUT", "/bkt/dst3",
      headers: [("x-goog-copy-source", "/bkt/src"), ("x-goog-copy-source-if-generation-match", generation)])
    #expect(conditioned.status == 200)
    let failed = h.call(
      "PUT", "/bkt/dst3", headers: [("x-goog-copy-source", "/bkt/src"), ("x-goog-copy-source-if-match", "\"zz\"")])
    #expect(failed.status == 412)
    #expect(h.call("PUT", "/bkt/dst4", headers: [("x-goog-copy-source", "/bkt/missing")]).status == 404)
    #expect(h.call("PUT", "/bkt/dst4", headers: [("x-goog-copy-source", "nonsense")]).status == 400)
  }

  @Test func listObjectsV2AndV1() throws {
    for name in ["a/1", "a/2", "b", "c/x/y", "d e"] {
      #expect(h.call("PUT", "/bkt/\(name.replacingOccurrences(of: " ", with: "%20"))", "x").status == 200)
    }
    let all = h.call("GET", "/bkt?list-type=2")
    #expect(all.status == 200)
    #expect(all.text.contains("<KeyCount>5</KeyCount>"))
    #expect(all.text.contains("<Key>d e</Key>"))
    let delimited = h.call("GET", "/bkt?list-type=2&delimiter=/")
    #expect(delimited.text.contains("<CommonPrefixes><Prefix>a/</Prefix></CommonPrefixes>"))
    #expect(delimited.text.contains("<CommonPrefixes><Prefix>c/</Prefix></CommonPrefixes>"))
    #expect(!delimited.text.contains("<Key>a/1</Key>"))
    let prefixed = h.call("GET", "/bkt/?list-type=2&prefix=a/")
    #expect(prefixed.text.contains("<Key>a/1</Key>") && prefixed.text.contains("<Key>a/2</Key>"))
    #expect(!prefixed.text.contains("<Key>b</Key>"))
    // Pages of two, followed by continuation tokens, list each name once.
    var seen: [String] = []
    var token: String?
    for _ in 0..<10 {
      let tokenPart = token.map { "&continuation-token=" + URLCoding.encodeComponent($0) } ?? ""
      let page = h.call("GET", "/bkt?list-type=2&max-keys=2" + tokenPart).text
      seen += Self.values("Key", in: page)
      token = Self.values("NextContinuationToken", in: page).first
      if token == nil { break }
    }
    #expect(seen == ["a/1", "a/2", "b", "c/x/y", "d e"])
    let after = h.call("GET", "/bkt?list-type=2&start-after=b").text
    #expect(Self.values("Key", in: after) == ["c/x/y", "d e"])
    let afterPrefix = h.call("GET", "/bkt?list-type=2&start-after=a/&delimiter=/").text
    #expect(!afterPrefix.contains("<Prefix>a/</Prefix>"))
    let encoded = h.call("GET", "/bkt?list-type=2&encoding-type=url&prefix=d").text
    #expect(encoded.contains("<Key>d%20e</Key>"))
    // V1: marker and NextMarker.
    let v1 = h.call("GET", "/bkt?max-keys=3").text
    #expect(Self.values("Key", in: v1) == ["a/1", "a/2", "b"])
    #expect(Self.values("NextMarker", in: v1) == ["b"])
    #expect(Self.values("Key", in: h.call("GET", "/bkt?marker=b").text) == ["c/x/y", "d e"])
    #expect(h.call("GET", "/bkt?list-type=2&max-keys=-1").status == 400)
    #expect(h.call("GET", "/nobucket?list-type=2").text.contains("NoSuchBucket"))
  }

  @Test func listBucketsAndBucketLifecycle() throws {
    #expect(h.call("PUT", "/newbkt").status == 200)
    let list = h.call("GET", "/")
    #expect(list.text.contains("<Name>bkt</Name>") && list.text.contains("<Name>newbkt</Name>"))
    #expect(h.call("PUT", "/newbkt").text.contains("BucketAlreadyOwnedByYou"))
    #expect(h.call("DELETE", "/newbkt").status == 204)
    #expect(h.call("DELETE", "/newbkt").status == 404)
    #expect(h.call("POST", "/bkt/x").status == 405)
  }

  @Test func subresourceRequestsAreRefusedNotTakenForObjects() throws {
    #expect(h.call("PUT", "/bkt/o", "data").status == 200)
    let acl = h.call("PUT", "/bkt/o?acl", "<AccessControlList/>")
    #expect(acl.status == 501)
    #expect(acl.text.contains("NotImplemented"))
    #expect(h.call("GET", "/bkt/o").text == "data")
    #expect(h.call("GET", "/bkt?cors").status == 501)
  }

  @Test func xmlSpecialCharactersAreEscapedInListings() throws {
    #expect(h.call("PUT", "/bkt/%3Ca%26b%3E", "x").status == 200)
    let text = h.call("GET", "/bkt?list-type=2").text
    #expect(text.contains("<Key>&lt;a&amp;b&gt;</Key>"))
  }

  @Test func gateSeesEveryXMLRequestFirst() throws {
    let store = try ObjectStore(backend: MemoryBackend())
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("se-xml-\(UUID().uuidString)")
    let api = StorageAPI(store: store, sessions: try UploadSessions(directory: folder)) {
      (request: HTTPRequest, route: XMLRoute) throws(APIError) in
      if request.headers["x-deny"] != nil {
        throw APIError(403, .forbidden, "denied by the gate for \(route.bucket ?? "")")
      }
    }
    let denied = HTTPRequestHead(method: "GET", target: "/bkt/x", headers: ["host": "localhost", "x-deny": "1"])
    let reply = Reply(api.answer(HTTPRequest(head: denied)))
    #expect(reply.status == 403)
    #expect(reply.text.contains("<Code>AccessDenied</Code>"))
  }

  static func values(_ tag: String, in text: String) -> [String] {
    text.components(separatedBy: "<\(tag)>").dropFirst().compactMap { $0.components(separatedBy: "</\(tag)>").first }
  }
}
