import EmulatorHTTP
import EmulatorStorage
import Foundation
import Testing

@testable import EmulatorAPI

/// Drives the API as the server would, without sockets.
struct APIHarness {
  let api: StorageAPI

  /// Lenient buckets by default: most tests write without creating the bucket first; the GCS
  /// default (404) is tested with `lenientBuckets: false`.
  init(limits: APILimits = APILimits(), strictBuckets: Bool = false, lenientBuckets: Bool = true) throws {
    var limits = limits
    limits.lenientBuckets = lenientBuckets
    let store = try ObjectStore(backend: MemoryBackend(), options: .init(strictBuckets: strictBuckets))
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("se-api-\(UUID().uuidString)")
    api = StorageAPI(store: store, sessions: try UploadSessions(directory: folder), limits: limits)
  }

  @discardableResult
  func call(
    _ method: String, _ target: String, _ body: String = "", headers: [(String, String)] = []
  ) -> Reply {
    var head = HTTPRequestHead(method: method, target: target, headers: ["host": "localhost:9199"])
    for (name, value) in headers { head.headers.add(name, value) }
    return Reply(api.answer(HTTPRequest(head: head, body: Array(body.utf8))))
  }
}

struct Reply {
  let response: HTTPResponse
  init(_ response: HTTPResponse) { self.response = response }
  var status: Int { response.status }
  var text: String { String(decoding: response.body, as: UTF8.self) }
  var json: JSONValue { (try? JSONValue.parse(response.body)) ?? .null }
  func header(_ name: String) -> String? { response.headers[name] }
  func string(_ key: String) -> String? { json[key]?.stringValue }
}

@Suite struct StorageAPITests {
  let h: APIHarness

  init() throws { h = try APIHarness() }

  /// The seed's flow: upload, get, update some properties, delete one with null, add and remove
  /// custom keys.
  @Test(arguments: ["/v0/b/demo.appspot.com/o/", "/b/demo.appspot.com/o/", "/storage/v1/b/demo.appspot.com/o/"])
  func seedFlow(prefix: String) throws {
    let upload = h.call(
      "POST", "/upload/storage/v1/b/demo.appspot.com/o?uploadType=media&name=images%2Fforest.jpg", "hello world",
      headers: [("content-type", "image/jpeg")])
    #expect(upload.status == 200)
    let path = prefix + "images%2Fforest.jpg"
    let got = h.call("GET", path)
    #expect(got.status == 200)
    #expect(got.string("name") == "images/forest.jpg")
    #expect(got.string("contentType") == "image/jpeg")
    #expect(got.string("size") == "11")
    #expect(got.string("md5Hash") == "XrY7u+Ae7tCTyyK7j1rNww==")
    let firebase = prefix.hasPrefix("/v0")
    #expect(got.string("crc32c") == (firebase ? "3381945770" : "yZRlqg=="))
    let metageneration = Int(got.string("metageneration") ?? "") ?? 0
    let generation = got.string("generation")

    let updated = h.call(
      "PATCH", path,
      #"{"cacheControl":"public,max-age=300","contentType":"image/png","metadata":{"location":"Yosemite, CA, USA","activity":"Hiking"}}"#
    )
    #expect(updated.status == 200)
    #expect(updated.string("cacheControl") == "public,max-age=300")
    #expect(updated.string("contentType") == "image/png")
    #expect(updated.json["metadata"]?["location"] == .string("Yosemite, CA, USA"))
    #expect(updated.string("metageneration") == String(metageneration + 1))
    #expect(updated.string("generation") == generation)
    #expect(updated.string("etag") != got.string("etag"))

    let deleted = h.call("PATCH", path, #"{"contentType":null,"metadata":{"activity":null}}"#)
    #expect(deleted.status == 200)
    #expect(deleted.json["contentType"] == nil)
    #expect(deleted.json["metadata"]?["activity"] == nil)
    #expect(deleted.json["metadata"]?["location"] == .string("Yosemite, CA, USA"))
    #expect(deleted.json["cacheControl"] == .string("public,max-age=300"))

    let cleared = h.call("PATCH", path, #"{"metadata":null}"#)
    #expect(cleared.json["metadata"]?["location"] == nil)

    let fetched = h.call("GET", path)
    #expect(fetched.text == cleared.text)
    #expect(h.call("DELETE", path).status == 204)
    #expect(h.call("GET", path).status == 404)
  }

  @Test func gcsFlavourHasEveryFieldAndLinks() throws {
    h.call("POST", "/upload/storage/v1/b/bkt/o?uploadType=media&name=dir%2Fa%20b.txt", "x")
    let reply = h.call("GET", "/storage/v1/b/bkt/o/dir%2Fa%20b.txt")
    let json = reply.json
    for key in [
      "kind", "id", "selfLink", "mediaLink", "name", "bucket", "generation", "metageneration", "contentType",
      "storageClass", "size", "md5Hash", "crc32c", "etag", "timeCreated", "updated", "timeStorageClassUpdated",
    ] {
      #expect(json[key] != nil, "missing \(key)")
    }
    #expect(json["kind"] == .string("storage#object"))
    let generation = reply.string("generation")!
    #expect(json["id"] == .string("bkt/dir/a b.txt/\(generation)"))
    #expect(json["selfLink"] == .string("http://localhost:9199/storage/v1/b/bkt/o/dir%2Fa%20b.txt"))
    #expect(
      json["mediaLink"]
        == .string(
          "http://localhost:9199/download/storage/v1/b/bkt/o/dir%2Fa%20b.txt?generation=\(generation)&alt=media"))
    #expect(json["contentType"] == .string("application/octet-stream"))
    let created = reply.string("timeCreated")!
    #expect(created.count == 24 && created.hasSuffix("Z") && Array(created)[19] == ".")
    #expect(json["metadata"] == nil)
    #expect(reply.header("etag") == reply.string("etag"))
  }

  /// The disposition's file name is what follows the last `/` byte, percent-encoded: a `/`
  /// followed by a combining mark separates too (by `Character` it did not), and a name ending
  /// in `/` gives an empty file name.
  @Test func firebaseDispositionNamesTheBytesAfterTheLastSlash() {
    #expect(StorageAPI.inlineDisposition(for: "photos/cat.png") == "inline; filename*=utf-8''cat.png")
    #expect(StorageAPI.inlineDisposition(for: "cat.png") == "inline; filename*=utf-8''cat.png")
    #expect(StorageAPI.inlineDisposition(for: "a/\u{301}b") == "inline; filename*=utf-8''%CC%81b")
    #expect(StorageAPI.inlineDisposition(for: "dir/") == "inline; filename*=utf-8''")
    #expect(StorageAPI.inlineDisposition(for: "x/caf\u{E9} 1") == "inline; filename*=utf-8''caf%C3%A9%201")
  }

  @Test func firebaseUploadAndGetCarryATokenAndOnlyFirebaseKeys() throws {
    let upload = h.call("POST", "/v0/b/bkt/o?name=photos%2Fcat.png", "png", headers: [("content-type", "image/png")])
    #expect(upload.status == 200)
    let token = try #require(upload.string("downloadTokens"))
    #expect(!token.isEmpty)
    #expect(upload.json["kind"] == nil && upload.json["selfLink"] == nil && upload.json["id"] == nil)
    #expect(upload.string("contentEncoding") == "identity")
    #expect(upload.json["metadata"] == .object([]))
    #expect(upload.string("contentDisposition") == "inline; filename*=utf-8''cat.png")
    let media = h.call("GET", "/v0/b/bkt/o/photos%2Fcat.png?alt=media&token=\(token)")
    #expect(media.status == 200 && media.text == "png")
    #expect(h.call("GET", "/v0/b/bkt/o/photos%2Fcat.png?alt=media&token=wrong").status == 403)
    // On the GCS surface the token is the custom key, as in production.
    let gcs = h.call("GET", "/storage/v1/b/bkt/o/photos%2Fcat.png")
    #expect(gcs.json["metadata"]?["firebaseStorageDownloadTokens"] == .string(token))
    // metadata:null on /v0 keeps the token.
    let cleared = h.call("PATCH", "/v0/b/bkt/o/photos%2Fcat.png", #"{"metadata":null}"#)
    #expect(cleared.string("downloadTokens") == token)
  }

  @Test func firstFirebaseGetCreatesAMissingToken() throws {
    h.call("POST", "/upload/storage/v1/b/bkt/o?uploadType=media&name=o", "x")
    let first = h.call("GET", "/v0/b/bkt/o/o")
    #expect(first.string("metageneration") == "2")
    #expect(!(first.string("downloadTokens") ?? "").isEmpty)
    #expect(h.call("GET", "/v0/b/bkt/o/o").string("metageneration") == "2")
  }

  @Test func appleSDKUpdateBodyFullOfNullsIsAccepted() throws {
    h.call("POST", "/v0/b/bkt/o/dir%2Fo.txt", "x", headers: [("content-type", "text/plain")])
    let body = #"""
      {"bucket":"","contentLanguage":null,"metadata":{"bar":null},"kind":null,"etag":null,"downloadTokens":null,"size":5,"timeCreated":null,"selfLink":null,"crc32c":null,"cacheControl":"max-age=60"}
      """#
    let reply = h.call(
      "PATCH", "/v0/b/bkt/o/dir%2Fo.txt", body, headers: [("content-type", "application/json; charset=UTF-8")])
    #expect(reply.status == 200)
    #expect(reply.string("cacheControl") == "max-age=60")
    #expect(reply.string("size") == "1")
    #expect(!(reply.string("downloadTokens") ?? "").isEmpty)
  }

  @Test func putReplacesWritableMetadata() throws {
    h.call("POST", "/upload/storage/v1/b/bkt/o?uploadType=media&name=o", "x", headers: [("content-type", "text/plain")])
    h.call("PATCH", "/storage/v1/b/bkt/o/o", #"{"cacheControl":"no-cache","metadata":{"a":"1"}}"#)
    let put = h.call("PUT", "/storage/v1/b/bkt/o/o", #"{"contentType":"text/csv","size":"99","kind":"storage#object"}"#)
    #expect(put.status == 200)
    #expect(put.string("contentType") == "text/csv")
    #expect(put.json["cacheControl"] == nil)
    #expect(put.json["metadata"] == nil)
    #expect(put.string("metageneration") == "3")
  }

  @Test func badBodiesAreClear400sAndChangeNothing() throws {
    h.call("POST", "/upload/storage/v1/b/bkt/o?uploadType=media&name=o", "x")
    for body in ["{not json", "[1,2]", #"{"contentType": 5}"#, #"{"metadata": {"k": {"x": 1}}}"#, "\"str\""] {
      let reply = h.call("PATCH", "/storage/v1/b/bkt/o/o", body)
      #expect(reply.status == 400, "\(body)")
      #expect(reply.json["error"]?["errors"] != nil)
      let message = reply.json["error"]?["message"]?.stringValue ?? ""
      #expect(message.count > 10)
    }
    #expect(h.call("GET", "/storage/v1/b/bkt/o/o").string("metageneration") == "1")
  }

  @Test func errorsInEachFlavour() throws {
    let gcs = h.call("GET", "/storage/v1/b/bkt/o/missing")
    #expect(gcs.status == 404)
    #expect(gcs.json["error"]?["code"] == .number("404"))
    #expect(
      gcs.json["error"]?["errors"]
        == .array([
          .object([
            ("domain", .string("global")), ("reason", .string("notFound")),
            ("message", .string("The specified bucket does not exist: bkt")),
          ])
        ]))
    h.call("POST", "/upload/storage/v1/b/bkt/o?uploadType=media&name=x", "x")
    let objectMissing = h.call("GET", "/storage/v1/b/bkt/o/missing")
    #expect(objectMissing.json["error"]?["message"] == .string("No such object: bkt/missing"))
    let firebase = h.call("GET", "/v0/b/bkt/o/missing")
    #expect(firebase.status == 404)
    #expect(firebase.json["error"]?["errors"] == nil)
    #expect(firebase.json["error"]?["message"] == .string("No such object: bkt/missing"))
  }

  @Test func unknownRoutesAre404AndWrongMethods405WithAllow() {
    let unknown = h.call("GET", "/storage/nothing/here")
    #expect(unknown.status == 404)
    #expect(unknown.json["error"] != nil)
    // Any other first segment is an XML API bucket.
    let xml = h.call("GET", "/nothing/here")
    #expect(xml.status == 404)
    #expect(xml.text.contains("<Code>NoSuchBucket</Code>"))
    let wrong = h.call("POST", "/storage/v1/b/bkt/o/x")
    #expect(wrong.status == 405)
    #expect(wrong.header("allow") == "GET, HEAD, PATCH, PUT, DELETE")
  }

  @Test func invalidNamesAre400NamingTheRule() {
    let reply = h.call("POST", "/upload/storage/v1/b/bkt/o?uploadType=media&name=..", "x")
    #expect(reply.status == 400)
    #expect(reply.text.contains("'.' or '..'"))
    #expect(h.call("POST", "/upload/storage/v1/b/bkt/o?uploadType=media&name=a%0Ab", "x").status == 400)
    #expect(h.call("POST", "/upload/storage/v1/b/bkt/o?uploadType=media", "x").status == 400)
    #expect(h.call("GET", "/storage/v1/b/bkt/o/" + String(repeating: "x", count: 1025)).status == 400)
  }

  @Test func preconditionsOverHTTP() throws {
    let up = h.call("POST", "/upload/storage/v1/b/bkt/o?uploadType=media&name=o&ifGenerationMatch=0", "x")
    #expect(up.status == 200)
    let generation = up.string("generation")!
    #expect(h.call("POST", "/upload/storage/v1/b/bkt/o?uploadType=media&name=o&ifGenerationMatch=0", "y").status == 412)
    let failed = h.call("PATCH", "/storage/v1/b/bkt/o/o?ifMetagenerationMatch=5", "{}")
    #expect(failed.status == 412)
    #expect(failed.text.contains(#""reason":"conditionNotMet""#))
    #expect(h.call("PATCH", "/storage/v1/b/bkt/o/o?ifMetagenerationMatch=1", "{}").status == 200)
    #expect(h.call("GET", "/storage/v1/b/bkt/o/o?ifMetagenerationNotMatch=2").status == 304)
    #expect(h.call("GET", "/storage/v1/b/bkt/o/o?ifGenerationMatch=1").status == 412)
    #expect(h.call("GET", "/storage/v1/b/bkt/o/o?generation=\(generation)").status == 200)
    #expect(h.call("GET", "/storage/v1/b/bkt/o/o?generation=1").status == 404)
    let etag = h.call("GET", "/storage/v1/b/bkt/o/o").string("etag")!
    #expect(h.call("GET", "/storage/v1/b/bkt/o/o", headers: [("if-none-match", "\"\(etag)\"")]).status == 304)
    #expect(h.call("GET", "/storage/v1/b/bkt/o/o?alt=media", headers: [("if-none-match", etag)]).status == 304)
    // Lists and repeated fields: every value counts, whichever field it came in.
    #expect(h.call("GET", "/storage/v1/b/bkt/o/o", headers: [("if-match", "\"x\", \"\(etag)\"")]).status == 200)
    #expect(h.call("GET", "/storage/v1/b/bkt/o/o", headers: [("if-match", "\"x\""), ("if-match", etag)]).status == 200)
    #expect(h.call("GET", "/storage/v1/b/bkt/o/o", headers: [("if-match", "\"x\""), ("If-Match", "\"y\"")]).status == 412)
    #expect(
      h.call("GET", "/storage/v1/b/bkt/o/o", headers: [("if-none-match", "\"x\""), ("if-none-match", etag)]).status == 304)
    #expect(h.call("GET", "/storage/v1/b/bkt/o/o?ifMetaGenerationNotMatch=2").status == 304)
    #expect(h.call("PATCH", "/storage/v1/b/bkt/o/o?ifGenerationMatch=abc", "{}").status == 400)
    #expect(h.call("DELETE", "/storage/v1/b/bkt/o/o?ifGenerationNotMatch=\(generation)").status == 412)
    #expect(h.call("DELETE", "/storage/v1/b/bkt/o/o?ifGenerationMatch=\(generation)").status == 204)
  }

  @Test func downloadsWithHeadersAndRanges() throws {
    h.call(
      "POST", "/upload/storage/v1/b/bkt/o?uploadType=media&name=r.txt", "hello world",
      headers: [("content-type", "text/plain")])
    h.call(
      "PATCH", "/b/bkt/o/r.txt", #"{"metadata":{"k":"v"},"contentLanguage":"en","contentDisposition":"attachment"}"#)
    let whole = h.call("GET", "/download/storage/v1/b/bkt/o/r.txt?alt=media")
    #expect(whole.status == 200 && whole.text == "hello world")
    #expect(whole.header("x-goog-hash") == "crc32c=yZRlqg==,md5=XrY7u+Ae7tCTyyK7j1rNww==")
    #expect(whole.header("content-type") == "text/plain")
    #expect(whole.header("x-goog-meta-k") == "v")
    #expect(whole.header("x-goog-stored-content-length") == "11")
    #expect(whole.header("x-goog-stored-content-encoding") == "identity")
    #expect(whole.header("x-goog-metageneration") == "2")
    #expect(whole.header("content-language") == "en")
    #expect(whole.header("content-disposition") == "attachment")
    #expect(whole.header("etag") != nil && whole.header("x-goog-generation") != nil)
    let range = h.call("GET", "/storage/v1/b/bkt/o/r.txt?alt=media", headers: [("range", "bytes=2-4")])
    #expect(range.status == 206 && range.text == "llo")
    #expect(range.header("content-range") == "bytes 2-4/11")
    let suffix = h.call("GET", "/v0/b/bkt/o/r.txt?alt=media", headers: [("range", "bytes=-5")])
    #expect(suffix.status == 206 && suffix.text == "world")
    let open = h.call("GET", "/b/bkt/o/r.txt?alt=media", headers: [("range", "bytes=6-")])
    #expect(open.text == "world")
    let beyond = h.call("GET", "/b/bkt/o/r.txt?alt=media", headers: [("range", "bytes=20-30")])
    #expect(beyond.status == 416)
    #expect(beyond.header("content-range") == "bytes */11")
    let ignored = h.call("GET", "/b/bkt/o/r.txt?alt=media", headers: [("range", "bytes=1-2,4-5")])
    #expect(ignored.status == 200)
  }

  @Test func listsInBothFlavours() throws {
    for name in ["a/1", "a/2", "a/b/3", "top", "x y+z"] {
      h.call("POST", "/upload/storage/v1/b/bkt/o?uploadType=media&name=\(URLCoding.encodeComponent(name))", "x")
    }
    let gcs = h.call("GET", "/storage/v1/b/bkt/o?prefix=a/&delimiter=/")
    #expect(gcs.json["kind"] == .string("storage#objects"))
    #expect(gcs.json["prefixes"] == .array([.string("a/b/")]))
    guard case .array(let items)? = gcs.json["items"] else {
      Issue.record("no items")
      return
    }
    #expect(items.map { $0["name"] } == [.string("a/1"), .string("a/2")])
    #expect(items.first?["kind"] == .string("storage#object"))

    let firebase = h.call("GET", "/v0/b/bkt/o?prefix=a%2F&delimiter=%2F")
    #expect(firebase.json["prefixes"] == .array([.string("a/b/")]))
    #expect(
      firebase.json["items"]
        == .array([
          .object([("name", .string("a/1")), ("bucket", .string("bkt"))]),
          .object([("name", .string("a/2")), ("bucket", .string("bkt"))]),
        ]))
    // `+` in a query is a space.
    let spaced = h.call("GET", "/storage/v1/b/bkt/o?prefix=x+y")
    guard case .array(let found)? = spaced.json["items"] else {
      Issue.record("no items for the spaced prefix")
      return
    }
    #expect(found.map { $0["name"] } == [.string("x y+z")])

    var names: [String] = []
    var token: String?
    var pages = 0
    repeat {
      let query = "maxResults=2" + (token.map { "&pageToken=\($0)" } ?? "")
      let page = h.call("GET", "/v0/b/bkt/o?\(query)")
      if case .array(let items)? = page.json["items"] { names += items.compactMap { $0["name"]?.stringValue } }
      token = page.string("nextPageToken")
      pages += 1
    } while token != nil && pages < 10
    #expect(names == ["a/1", "a/2", "a/b/3", "top", "x y+z"])
    #expect(pages == 3)
    #expect(h.call("GET", "/storage/v1/b/bkt/o?maxResults=0").status == 400)
    #expect(h.call("GET", "/storage/v1/b/bkt/o?pageToken=%%").status == 400)
    #expect(h.call("GET", "/storage/v1/b/nope/o").status == 404)
  }

  @Test func fieldsFilterTopLevelKeys() {
    h.call("POST", "/upload/storage/v1/b/bkt/o?uploadType=media&name=o", "x")
    let reply = h.call("GET", "/storage/v1/b/bkt/o/o?fields=name,metadata")
    #expect(reply.json == .object([("name", .string("o"))]))
    #expect(h.call("GET", "/storage/v1/b/bkt?fields=name").json == .object([("name", .string("bkt"))]))
  }

  @Test func methodOverrideMeansPatch() {
    h.call("POST", "/upload/storage/v1/b/bkt/o?uploadType=media&name=o", "x")
    let reply = h.call(
      "POST", "/storage/v1/b/bkt/o/o", #"{"cacheControl":"x"}"#, headers: [("x-http-method-override", "PATCH")])
    #expect(reply.status == 200 && reply.string("cacheControl") == "x")
  }

  @Test func bucketsLifecycle() {
    #expect(h.call("POST", "/storage/v1/b?project=%3Cnone%3E", #"{"name":"made"}"#).status == 200)
    #expect(h.call("POST", "/storage/v1/b?project=p", #"{"name":"made"}"#).status == 409)
    #expect(h.call("POST", "/storage/v1/b", #"{"name":"BAD"}"#).status == 400)
    #expect(h.call("POST", "/storage/v1/b", "{}").status == 400)
    #expect(h.call("GET", "/storage/v1/b/made").string("kind") == "storage#bucket")
    #expect(h.call("GET", "/storage/v1/b").string("kind") == "storage#buckets")
    h.call("POST", "/upload/storage/v1/b/made/o?uploadType=media&name=o", "x")
    #expect(h.call("DELETE", "/b/made").status == 409)
    h.call("DELETE", "/b/made/o/o")
    #expect(h.call("DELETE", "/b/made").status == 204)
    #expect(h.call("GET", "/b/made").status == 404)
  }

  @Test func strictBucketsAnswer404OnUpload() throws {
    let strict = try APIHarness(strictBuckets: true)
    #expect(strict.call("POST", "/upload/storage/v1/b/bkt/o?uploadType=media&name=o", "x").status == 404)
  }

  @Test func bodyLimitsDependOnTheRoute() {
    var limits = APILimits()
    limits.maxMetadataBytes = 100
    limits.maxUploadBytes = 1000
    let api = try! APIHarness(limits: limits).api
    #expect(api.bodyLimit(for: HTTPRequestHead(method: "PATCH", target: "/storage/v1/b/b/o/o")) == 100)
    #expect(api.bodyLimit(for: HTTPRequestHead(method: "POST", target: "/upload/storage/v1/b/b/o")) == 1000)
    #expect(api.bodyLimit(for: HTTPRequestHead(method: "POST", target: "/v0/b/b/o?name=x")) == 1000)
    // No route's limit is below the floor (bodies that small are not looked up).
    #expect(api.bodyLimitFloor == 100)
    limits.maxUploadBytes = 50
    #expect(try! APIHarness(limits: limits).api.bodyLimitFloor == 50)
    let error = api.errorResponse(for: HTTPParseError(413, "too big"))
    #expect(error.status == 413)
    #expect(String(decoding: error.body, as: UTF8.self).contains("uploadTooLarge"))
  }
}

extension JSONValue: CustomStringConvertible {
  public var description: String {
    switch self {
    case .null: "null"
    case .bool(let value): String(value)
    case .number(let text): text
    case .string(let text): "\"\(text)\""
    case .array(let values): "[" + values.map(\.description).joined(separator: ",") + "]"
    case .object(let members): "{" + members.map { "\"\($0.0)\":\($0.1.description)" }.joined(separator: ",") + "}"
    }
  }
}
