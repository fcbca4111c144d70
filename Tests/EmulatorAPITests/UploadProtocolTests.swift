import EmulatorHTTP
import EmulatorStorage
import Foundation
import Testing

@testable import EmulatorAPI

extension APIHarness {
  @discardableResult
  func call(_ method: String, _ target: String, bytes: [UInt8], headers: [(String, String)] = []) -> Reply {
    var head = HTTPRequestHead(method: method, target: target, headers: ["host": "localhost:9199"])
    for (name, value) in headers { head.headers.add(name, value) }
    return Reply(api.answer(HTTPRequest(head: head, body: bytes)))
  }
}

/// Turns an absolute upload URL into the request target the harness takes.
private func target(_ url: String?) -> String {
  guard let url, let range = url.range(of: "localhost:9199") else { return "/missing" }
  return String(url[range.upperBound...])
}

@Suite struct MultipartUploadTests {
  let h: APIHarness
  init() throws { h = try APIHarness() }

  @Test func pythonStyleQuotedBoundaryCRLFWithChecksum() {
    let body =
      "--===============7735916957722773249==\r\ncontent-type: application/json; charset=UTF-8\r\n\r\n"
      + #"{"name": "dir/my file+x&y;z~.txt", "crc32c": "yZRlqg==", "metadata": {"k": "v"}}"#
      + "\r\n--===============7735916957722773249==\r\ncontent-type: text/plain\r\n\r\nhello world\r\n"
      + "--===============7735916957722773249==--\r\n"
    let reply = h.call(
      "POST", "/upload/storage/v1/b/bkt/o?uploadType=multipart", body,
      headers: [("content-type", "multipart/related; boundary=\"===============7735916957722773249==\"")])
    #expect(reply.status == 200)
    #expect(reply.string("name") == "dir/my file+x&y;z~.txt")
    #expect(reply.string("contentType") == "text/plain")
    #expect(reply.string("size") == "11")
    #expect(reply.json["metadata"]?["k"] == .string("v"))
  }

  @Test func gcsfsStyleBareLFWithoutTrailingNewline() {
    let body =
      "--==0==\nContent-Type: application/json; charset=UTF-8\n\n{\"name\": \"a b.txt\"}\n--==0==\nContent-Type: text/csv\n\nx,y\n--==0==--"
    let reply = h.call(
      "POST", "/upload/storage/v1/b/bkt/o?uploadType=multipart", body,
      headers: [("content-type", "multipart/related; boundary=\"==0==\"")])
    #expect(reply.status == 200)
    #expect(reply.string("name") == "a b.txt")
    #expect(reply.string("contentType") == "text/csv")
    #expect(h.call("GET", "/storage/v1/b/bkt/o/a%20b.txt?alt=media").text == "x,y")
  }

  @Test func wrongChecksumIs400AndStoresNothing() {
    let body =
      "--b\r\nContent-Type: application/json\r\n\r\n{\"name\":\"o\",\"md5Hash\":\"AAAAAAAAAAAAAAAAAAAAAA==\"}\r\n--b\r\n\r\ndata\r\n--b--\r\n"
    let reply = h.call(
      "POST", "/upload/storage/v1/b/bkt/o?uploadType=multipart", body,
      headers: [("content-type", "multipart/related; boundary=b")])
    #expect(reply.status == 400)
    #expect(reply.text.contains("MD5"))
    #expect(h.call("GET", "/storage/v1/b/bkt/o/o").status == 404)
  }

  @Test func malformedMultipartIsA400() {
    for (body, type) in [
      ("no boundary here", "multipart/related; boundary=zz"),
      ("--zz\r\nContent-Type: application/json\r\n\r\n{}\r\n--zz--", "multipart/related; boundary=zz"),
      ("--zz\r\n\r\n{}\r\n--zz\r\n\r\nx", "multipart/related; boundary=zz"),
      ("x", "text/plain"),
    ] {
      let reply = h.call(
        "POST", "/upload/storage/v1/b/bkt/o?uploadType=multipart&name=o", body, headers: [("content-type", type)])
      #expect(reply.status == 400, "\(body)")
    }
  }

  @Test func firebaseMultipartGetsATokenAndTheFirebaseFlavour() {
    let body =
      "--fb\r\nContent-Type: application/json\r\n\r\n{\"name\":\"p/q.png\",\"contentType\":\"image/png\",\"metadata\":{\"a\":\"1\"}}\r\n--fb\r\nContent-Type: image/png\r\n\r\nPNG\r\n--fb--"
    let reply = h.call(
      "POST", "/v0/b/bkt/o?name=p%2Fq.png", body,
      headers: [("x-goog-upload-protocol", "multipart"), ("content-type", "multipart/related; boundary=fb")])
    #expect(reply.status == 200)
    #expect(reply.json["kind"] == nil)
    #expect(!(reply.string("downloadTokens") ?? "").isEmpty)
    #expect(reply.json["metadata"]?["a"] == .string("1"))
  }
}

@Suite struct GCSResumableTests {
  let h: APIHarness
  init() throws { h = try APIHarness() }

  @Test func chunksWith308RangeThenFinal200WithHashes() throws {
    let start = h.call(
      "POST", "/upload/storage/v1/b/bkt/o?uploadType=resumable", #"{"name":"big.bin","metadata":{"m":"1"}}"#,
      headers: [("x-upload-content-type", "application/x-test"), ("x-upload-content-length", "10")])
    #expect(start.status == 200)
    let location = try #require(start.header("location"))
    #expect(location.hasPrefix("http://localhost:9199/upload/storage/v1/b/bkt/o?"))
    let url = target(location)
    let first = h.call("PUT", url, "01234", headers: [("content-range", "bytes 0-4/*")])
    #expect(first.status == 308)
    #expect(first.header("range") == "bytes=0-4")
    #expect(first.header("location") == nil)
    // A retried chunk is idempotent.
    #expect(h.call("PUT", url, "01234", headers: [("content-range", "bytes 0-4/*")]).header("range") == "bytes=0-4")
    let query = h.call("PUT", url, "", headers: [("content-range", "bytes */*")])
    #expect(query.status == 308 && query.header("range") == "bytes=0-4")
    // gcsfs sends chunks with POST.
    let last = h.call("POST", url, "56789", headers: [("content-range", "bytes 5-9/10")])
    #expect(last.status == 200)
    let expected = Digester.digest(Array("0123456789".utf8))
    #expect(last.string("md5Hash") == Data(expected.md5).base64EncodedString())
    #expect(last.string("crc32c") != nil)
    #expect(last.string("contentType") == "application/x-test")
    #expect(last.json["metadata"]?["m"] == .string("1"))
    #expect(h.call("GET", "/storage/v1/b/bkt/o/big.bin?alt=media").text == "0123456789")
    // Finalizing again answers the object.
    #expect(h.call("PUT", url, "", headers: [("content-range", "bytes */10")]).status == 200)
  }

  @Test func aPutWithoutContentRangeIsTheWholeObject() throws {
    let start = h.call("POST", "/upload/storage/v1/b/bkt/o?uploadType=resumable&name=whole", "")
    let reply = h.call("PUT", target(start.header("location")), "everything")
    #expect(reply.status == 200)
    #expect(reply.string("size") == "10")
  }

  @Test func statusQueryBeforeAnyDataHasNoRange() throws {
    let start = h.call("POST", "/upload/storage/v1/b/bkt/o?uploadType=resumable&name=q", "{}")
    let reply = h.call("PUT", target(start.header("location")), "", headers: [("content-range", "bytes */*")])
    #expect(reply.status == 308)
    #expect(reply.header("range") == nil)
  }

  @Test func badChunksAre400s() throws {
    let start = h.call("POST", "/upload/storage/v1/b/bkt/o?uploadType=resumable&name=bad", "{}")
    let url = target(start.header("location"))
    #expect(h.call("PUT", url, "abc", headers: [("content-range", "bytes 0-9/*")]).status == 400)
    #expect(h.call("PUT", url, "abc", headers: [("content-range", "bytes 5-7/*")]).status == 400)
    #expect(h.call("PUT", url, "abc", headers: [("content-range", "octets 0-2/3")]).status == 400)
    #expect(
      h.call("PUT", url, "abc", headers: [("content-range", "bytes 0-2/3"), ("x-goog-hash", "crc32c=AAAAAA==")]).status
        == 400)
    #expect(h.call("PUT", "/upload/storage/v1/b/bkt/o?uploadType=resumable&upload_id=nope", "x").status == 404)
  }

  @Test func preconditionsAreCheckedAtStartAndAtCommit() throws {
    h.call("POST", "/upload/storage/v1/b/bkt/o?uploadType=media&name=exists", "x")
    #expect(
      h.call("POST", "/upload/storage/v1/b/bkt/o?uploadType=resumable&name=exists&ifGenerationMatch=0", "{}").status
        == 412)
    let start = h.call("POST", "/upload/storage/v1/b/bkt/o?uploadType=resumable&name=race&ifGenerationMatch=0", "{}")
    #expect(start.status == 200)
    h.call("POST", "/upload/storage/v1/b/bkt/o?uploadType=media&name=race", "winner")
    #expect(h.call("PUT", target(start.header("location")), "loser").status == 412)
    #expect(h.call("GET", "/storage/v1/b/bkt/o/race?alt=media").text == "winner")
  }

  @Test func deleteCancels() throws {
    let start = h.call("POST", "/upload/storage/v1/b/bkt/o?uploadType=resumable&name=c", "{}")
    let url = target(start.header("location"))
    #expect(h.call("DELETE", url).status == 204)
    #expect(h.call("PUT", url, "x").status == 404)
  }
}

@Suite struct FirebaseResumableTests {
  let h: APIHarness
  init() throws { h = try APIHarness() }

  func start(_ name: String = "dir%2Fo.txt", length: Int = 10) throws -> String {
    let reply = h.call(
      "POST", "/v0/b/bkt/o/\(name)?uploadType=resumable&name=\(name)",
      #"{"bucket":"","contentType":"text/plain","metadata":null,"name":"dir/o.txt"}"#,
      headers: [
        ("x-goog-upload-protocol", "resumable"), ("x-goog-upload-command", "start"),
        ("x-goog-upload-content-type", "text/plain"), ("x-goog-upload-content-length", String(length)),
        ("content-type", "application/json; charset=UTF-8"),
      ])
    #expect(reply.status == 200)
    #expect(reply.response.body.isEmpty)
    #expect(reply.header("x-goog-upload-status") == "active")
    let url = try #require(reply.header("x-goog-upload-url"))
    #expect(url.hasPrefix("http://localhost:9199/v0/b/bkt/o?"))
    return target(url)
  }

  func command(_ url: String, _ command: String, offset: Int? = nil, body: String = "") -> Reply {
    var headers = [("x-goog-upload-protocol", "resumable"), ("x-goog-upload-command", command)]
    if let offset { headers.append(("x-goog-upload-offset", String(offset))) }
    return h.call("PUT", url, body, headers: headers)
  }

  @Test func appleSDKSequence() throws {
    let url = try start()
    let first = command(url, "upload", offset: 0, body: "01234")
    #expect(first.status == 200)
    #expect(first.header("x-goog-upload-status") == "active")
    #expect(first.header("x-goog-upload-size-received") == "5")
    let query = command(url, "query")
    #expect(query.header("x-goog-upload-size-received") == "5")
    #expect(query.header("x-goog-upload-status") == "active")
    let last = command(url, "upload, finalize", offset: 5, body: "56789")
    #expect(last.status == 200)
    #expect(last.header("x-goog-upload-status") == "final")
    #expect(last.string("name") == "dir/o.txt")
    #expect(last.string("contentType") == "text/plain")
    #expect(!(last.string("downloadTokens") ?? "").isEmpty)
    #expect(h.call("GET", "/v0/b/bkt/o/dir%2Fo.txt?alt=media").text == "0123456789")
    #expect(command(url, "query").header("x-goog-upload-status") == "final")
  }

  @Test func aWrongOffsetIsRefusedWithTheTrueCount() throws {
    let url = try start()
    #expect(command(url, "upload", offset: 0, body: "01234").status == 200)
    let wrong = command(url, "upload", offset: 3, body: "34567")
    #expect(wrong.status == 400)
    #expect(wrong.header("x-goog-upload-status") == "active")
    #expect(wrong.header("x-goog-upload-size-received") == "5")
    #expect(command(url, "query").header("x-goog-upload-size-received") == "5")
  }

  @Test func finalizeAloneForEmptyData() throws {
    let url = try start("empty", length: 0)
    let reply = command(url, "finalize")
    #expect(reply.status == 200)
    #expect(reply.string("size") == "0")
  }

  @Test func cancelStopsTheUpload() throws {
    let url = try start()
    #expect(command(url, "cancel").header("x-goog-upload-status") == "cancelled")
    let after = command(url, "upload", offset: 0, body: "x")
    #expect(after.status == 400)
    #expect(after.header("x-goog-upload-status") == "cancelled")
    #expect(h.call("GET", "/v0/b/bkt/o/dir%2Fo.txt").status == 404)
  }

  @Test func finalizeWithMissingBytesIsRefused() throws {
    let url = try start()
    #expect(command(url, "upload, finalize", offset: 0, body: "0123").status == 400)
  }
}

@Suite struct CopyComposeTokenTests {
  let h: APIHarness
  init() throws { h = try APIHarness() }

  @Test func copyRewriteAndCompose() throws {
    h.call(
      "POST", "/upload/storage/v1/b/bkt/o?uploadType=media&name=dir%2Fa", "AAA",
      headers: [("content-type", "text/plain")])
    h.call("PATCH", "/storage/v1/b/bkt/o/dir%2Fa", #"{"metadata":{"k":"v"}}"#)
    let copy = h.call("POST", "/storage/v1/b/bkt/o/dir%2Fa/copyTo/b/other/o/copy%2Fa", "")
    #expect(copy.status == 200)
    #expect(copy.string("name") == "copy/a" && copy.string("bucket") == "other")
    #expect(copy.string("contentType") == "text/plain")
    #expect(copy.json["metadata"]?["k"] == .string("v"))
    #expect(h.call("GET", "/storage/v1/b/other/o/copy%2Fa?alt=media").text == "AAA")

    let rewrite = h.call("POST", "/storage/v1/b/bkt/o/dir%2Fa/rewriteTo/b/bkt/o/b", #"{"contentType":"text/csv"}"#)
    #expect(rewrite.status == 200)
    #expect(rewrite.json["done"] == .bool(true))
    #expect(rewrite.string("kind") == "storage#rewriteResponse")
    #expect(rewrite.string("totalBytesRewritten") == "3")
    #expect(rewrite.json["resource"]?["contentType"] == .string("text/csv"))

    h.call("POST", "/upload/storage/v1/b/bkt/o?uploadType=media&name=c", "CC")
    let compose = h.call(
      "POST", "/storage/v1/b/bkt/o/joined/compose",
      #"{"kind":"storage#composeRequest","sourceObjects":[{"name":"dir/a"},{"name":"c"},{"name":"b"}],"destination":{"contentType":"text/plain"}}"#
    )
    #expect(compose.status == 200)
    #expect(compose.json["componentCount"] == .number("3"))
    #expect(compose.json["md5Hash"] == nil)
    #expect(compose.string("crc32c") != nil)
    #expect(h.call("GET", "/storage/v1/b/bkt/o/joined?alt=media").text == "AAACCAAA")
  }

  @Test func sourcePreconditionsAndMissingSources() {
    h.call("POST", "/upload/storage/v1/b/bkt/o?uploadType=media&name=s", "x")
    #expect(h.call("POST", "/storage/v1/b/bkt/o/s/copyTo/b/bkt/o/d?ifSourceGenerationMatch=1", "").status == 412)
    #expect(h.call("POST", "/storage/v1/b/bkt/o/missing/copyTo/b/bkt/o/d", "").status == 404)
    #expect(h.call("POST", "/storage/v1/b/bkt/o/d/compose", #"{"sourceObjects":[]}"#).status == 400)
    #expect(
      h.call(
        "POST", "/storage/v1/b/bkt/o/d/compose",
        #"{"sourceObjects":[{"name":"s","objectPreconditions":{"ifGenerationMatch":"1"}}]}"#
      ).status == 412)
    // The destination's own preconditions apply too.
    #expect(h.call("POST", "/storage/v1/b/bkt/o/s/copyTo/b/bkt/o/s?ifGenerationMatch=0", "").status == 412)
  }

  @Test func downloadTokensNeedAdminCredentials() throws {
    let upload = h.call("POST", "/v0/b/bkt/o?name=t", "x")
    let token = try #require(upload.string("downloadTokens"))
    #expect(h.call("POST", "/v0/b/bkt/o/t?create_token=true", "").status == 403)
    let created = h.call("POST", "/v0/b/bkt/o/t?create_token=true", "", headers: [("authorization", "Bearer owner")])
    #expect(created.status == 200)
    let tokens = (created.string("downloadTokens") ?? "").split(separator: ",").map(String.init)
    #expect(tokens.count == 2 && tokens.first == token)
    #expect(
      h.call("POST", "/v0/b/bkt/o/t?create_token=yes", "", headers: [("authorization", "Bearer owner")]).status == 400)
    let deleted = h.call(
      "POST", "/v0/b/bkt/o/t?delete_token=\(token)", "", headers: [("authorization", "Firebase owner")])
    #expect(deleted.string("downloadTokens") == tokens[1])
    // Deleting the last token makes a new one.
    let renewed = h.call(
      "POST", "/v0/b/bkt/o/t?delete_token=\(tokens[1])", "", headers: [("authorization", "Bearer owner")])
    #expect(!(renewed.string("downloadTokens") ?? "").isEmpty && renewed.string("downloadTokens") != tokens[1])
  }
}

@Suite struct GzipTranscodingTests {
  @Test func gzipObjectsAreServedAsStoredOnlyToClientsThatAcceptGzip() throws {
    let h = try APIHarness()
    // gzip of "hello hello hello\n", made with Python's gzip module.
    let gzip: [UInt8] = [
      0x1f, 0x8b, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0x03, 0xcb, 0x48, 0xcd, 0xc9, 0xc9, 0x57, 0xc8, 0x40, 0x90,
      0x5c, 0x00, 0x3b, 0x7c, 0x8a, 0xdf, 0x12, 0x00, 0x00, 0x00,
    ]
    let stored = h.call(
      "POST", "/upload/storage/v1/b/bkt/o?uploadType=media&name=z.txt&contentEncoding=gzip", bytes: gzip,
      headers: [("content-type", "text/plain")])
    #expect(stored.string("contentEncoding") == "gzip")
    let raw = h.call("GET", "/storage/v1/b/bkt/o/z.txt?alt=media", bytes: [], headers: [("accept-encoding", "gzip")])
    #expect(raw.response.body == gzip)
    #expect(raw.header("content-encoding") == "gzip")
    for acceptEncoding in [nil, "identity", "gzip;q=0", "*"] {
      let headers = acceptEncoding.map { [("accept-encoding", $0)] } ?? []
      let reply = h.call(
        "GET", "/storage/v1/b/bkt/o/z.txt?alt=media", bytes: [], headers: headers + [("range", "bytes=0-1")])
      #expect(reply.status == 200)
      #expect(reply.header("content-encoding") == nil)
      #expect(reply.header("x-goog-stored-content-encoding") == "gzip")
      var text: [UInt8] = []
      while let piece = try reply.response.bodyStream?.next() { text += piece }
      #expect(String(decoding: text, as: UTF8.self) == "hello hello hello\n")
    }
  }

  @Test func corruptGzipEndsTheStreamWithAnError() throws {
    let h = try APIHarness()
    h.call(
      "POST", "/upload/storage/v1/b/bkt/o?uploadType=media&name=bad&contentEncoding=gzip", bytes: [0x1f, 0x8b, 1, 2, 3])
    let reply = h.call("GET", "/storage/v1/b/bkt/o/bad?alt=media", bytes: [])
    let stream = try #require(reply.response.bodyStream)
    #expect(throws: (any Error).self) {
      while try stream.next() != nil {}
    }
  }
}
