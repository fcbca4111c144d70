import EmulatorHTTP
import EmulatorStorage
import Foundation
import Testing

@testable import EmulatorAPI

/// Work and memory per request stay bounded whatever the client sends: JSON bodies stop at
/// the metadata limit (decided from the head, before the body is read), multipart metadata
/// parts too, custom metadata at GCS's 8 KiB, gzip inflation in slices.
@Suite struct BoundedWorkTests {
  static func limits() -> APILimits {
    var limits = APILimits()
    limits.maxMetadataBytes = 100
    limits.maxUploadBytes = 10_000
    return limits
  }

  let h: APIHarness
  init() throws { h = try APIHarness(limits: Self.limits()) }

  private func limit(_ method: String, _ target: String, _ headers: HTTPHeaders = [:]) -> Int {
    h.api.bodyLimit(for: HTTPRequestHead(method: method, target: target, headers: headers))
  }

  @Test func resumableStartJSONGetsTheMetadataLimitNotTheUploadLimit() {
    #expect(limit("POST", "/upload/storage/v1/b/b/o?uploadType=resumable&name=x") == 100)
    #expect(limit("POST", "/storage/v1/b/b/o?uploadType=resumable") == 100)
    #expect(limit("POST", "/resumable/upload/storage/v1/b/b/o?uploadType=resumable&name=x") == 100)
    #expect(limit("PUT", "/resumable/upload/storage/v1/b/b/o?uploadType=resumable&upload_id=abc") == 10_000)
    #expect(
      limit("POST", "/v0/b/b/o?name=x&uploadType=resumable", ["x-goog-upload-command": "start"]) == 100)
    #expect(limit("POST", "/v0/b/b/o?name=x", ["x-goog-upload-command": "Start, upload"]) == 100)
    // The session's chunks carry data.
    #expect(limit("PUT", "/upload/storage/v1/b/b/o?uploadType=resumable&upload_id=abc") == 10_000)
    #expect(
      limit("POST", "/v0/b/b/o?name=x&upload_id=abc&upload_protocol=resumable", ["x-goog-upload-command": "upload"])
        == 10_000)
  }

  @Test func composeCopyRewriteAndTokenBodiesGetTheMetadataLimit() {
    #expect(limit("POST", "/storage/v1/b/b/o/x/compose") == 100)
    #expect(limit("POST", "/storage/v1/b/b/o/x/copyTo/b/c/o/y") == 100)
    #expect(limit("POST", "/storage/v1/b/b/o/x/rewriteTo/b/c/o/y") == 100)
    #expect(limit("POST", "/storage/v1/b?project=p") == 100)
    #expect(limit("POST", "/v0/b/b/o/x?create_token=true") == 100)
    // A compose or PATCH that smuggles "uploadType=" into its query gains nothing.
    #expect(limit("POST", "/storage/v1/b/b/o/x/compose?uploadType=resumable") == 100)
    #expect(limit("POST", "/v0/b/b/o/x", ["x-http-method-override": "PATCH"]) == 100)
    // Uploads keep the upload limit.
    #expect(limit("POST", "/upload/storage/v1/b/b/o?uploadType=multipart") == 10_000)
    #expect(limit("POST", "/upload/storage/v1/b/b/o?uploadType=media&name=x") == 10_000)
    #expect(limit("POST", "/v0/b/b/o?name=x") == 10_000)
  }

  @Test func multipartMetadataPartOverTheLimitIs413() {
    let metadata = #"{"name":"o","metadata":{"k":""# + String(repeating: "v", count: 200) + #""}}"#
    let body = "--b\r\nContent-Type: application/json\r\n\r\n\(metadata)\r\n--b\r\n\r\ndata\r\n--b--\r\n"
    let reply = h.call(
      "POST", "/upload/storage/v1/b/bkt/o?uploadType=multipart", body,
      headers: [("content-type", "multipart/related; boundary=b")])
    #expect(reply.status == 413)
    #expect(reply.text.contains("Metadata part is too large"))
    #expect(h.call("GET", "/storage/v1/b/bkt/o/o").status == 404)
  }

  /// Found by the multipart fuzz target: a first part closed by a bare LF was allowed one byte
  /// more than its limit.
  @Test func multipartMetadataPartOneByteOverTheLimitClosedByABareLFIs413() throws {
    var limits = MultipartRelated.Limits()
    limits.maxFirstPartBytes = 10
    for (length, separator) in [(10, "\n"), (10, "\r\n"), (11, "\n"), (11, "\r\n")] {
      let body = Array(("--b\n\n" + String(repeating: "m", count: length) + separator + "--b\n\nx\n--b--").utf8)
      if length <= 10 {
        let parts = try MultipartRelated.parse(body, boundary: "b", limits: limits)
        #expect(parts[0].range.count == length)
      } else {
        #expect(throws: APIError.self) { try MultipartRelated.parse(body, boundary: "b", limits: limits) }
        do {
          _ = try MultipartRelated.parse(body, boundary: "b", limits: limits)
        } catch {
          #expect(error.status == 413)
        }
      }
    }
  }

  @Test func multipartMetadataPartWithoutItsDelimiterIsNotSearchedToTheEnd() {
    // A first part that never ends, in a body far larger than the metadata limit.
    let body = "--b\r\n\r\n{" + String(repeating: " ", count: 5000)
    let reply = h.call(
      "POST", "/upload/storage/v1/b/bkt/o?uploadType=multipart&name=o", body,
      headers: [("content-type", "multipart/related; boundary=b")])
    #expect(reply.status == 413)
  }

  @Test func multipartWithTooManyPartsOrAHugeBoundaryIs400() {
    let many = (0..<20).map { _ in "--b\r\n\r\n{}\r\n" }.joined() + "--b--\r\n"
    #expect(
      h.call(
        "POST", "/upload/storage/v1/b/bkt/o?uploadType=multipart&name=o", many,
        headers: [("content-type", "multipart/related; boundary=b")]
      ).status == 400)
    let boundary = String(repeating: "q", count: 71)
    let long = "--\(boundary)\r\n\r\n{}\r\n--\(boundary)\r\n\r\nx\r\n--\(boundary)--"
    #expect(
      h.call(
        "POST", "/upload/storage/v1/b/bkt/o?uploadType=multipart&name=o", long,
        headers: [("content-type", "multipart/related; boundary=\(boundary)")]
      ).status == 400)
    let headerFlood = "--b\r\n" + String(repeating: "X-A: 1\r\n", count: 2000) + "\r\n{}\r\n--b\r\n\r\nx\r\n--b--"
    #expect(
      h.call(
        "POST", "/upload/storage/v1/b/bkt/o?uploadType=multipart&name=o", headerFlood,
        headers: [("content-type", "multipart/related; boundary=b")]
      ).status == 400)
  }
}

/// GCS's 8 KiB limit on custom metadata (keys and values together), on every path that sets it.
@Suite struct CustomMetadataLimitTests {
  let h: APIHarness
  init() throws { h = try APIHarness() }

  private func metadata(_ valueBytes: Int, key: String = "k") -> String {
    #"{"metadata":{"\#(key)":""# + String(repeating: "v", count: valueBytes) + #""}}"#
  }

  @Test func patchPastEightKiBIsA400AndChangesNothing() {
    h.call("POST", "/upload/storage/v1/b/bkt/o?uploadType=media&name=m", "x")
    let exact = h.call("PATCH", "/storage/v1/b/bkt/o/m", metadata(8192 - 1))
    #expect(exact.status == 200)
    #expect(exact.string("metageneration") == "2")
    let over = h.call("PATCH", "/storage/v1/b/bkt/o/m", metadata(8192, key: "kk"))
    #expect(over.status == 400)
    #expect(over.text.contains("Custom metadata is too large"))
    #expect(h.call("GET", "/storage/v1/b/bkt/o/m").string("metageneration") == "2")
  }

  @Test func patchesThatMergePastEightKiBAreRefused() {
    h.call("POST", "/upload/storage/v1/b/bkt/o?uploadType=media&name=m", "x")
    #expect(h.call("PATCH", "/storage/v1/b/bkt/o/m", metadata(5000, key: "a")).status == 200)
    #expect(h.call("PATCH", "/storage/v1/b/bkt/o/m", metadata(5000, key: "b")).status == 400)
    // Replacing the big key instead fits.
    #expect(h.call("PATCH", "/storage/v1/b/bkt/o/m", #"{"metadata":{"a":null,"b":"v"}}"#).status == 200)
    // UTF-8 bytes count, not characters: 3000 "é" are 6000 bytes.
    let accents = #"{"metadata":{"c":""# + String(repeating: "é", count: 3000) + #""}}"#
    #expect(h.call("PATCH", "/storage/v1/b/bkt/o/m", accents).status == 200)
    #expect(
      h.call("PATCH", "/storage/v1/b/bkt/o/m", #"{"metadata":{"d":""# + String(repeating: "é", count: 1200) + #""}}"#)
        .status == 400)
  }

  @Test func uploadsWithTooMuchCustomMetadataStoreNothing() {
    let body = "--b\r\n\r\n\(metadata(9000))\r\n--b\r\n\r\ndata\r\n--b--"
    let multipart = h.call(
      "POST", "/upload/storage/v1/b/bkt/o?uploadType=multipart&name=u", body,
      headers: [("content-type", "multipart/related; boundary=b")])
    #expect(multipart.status == 400)
    #expect(h.call("GET", "/storage/v1/b/bkt/o/u").status == 404)
    // A resumable upload is refused at its start, before any data is sent.
    #expect(h.call("POST", "/upload/storage/v1/b/bkt/o?uploadType=resumable&name=u", metadata(9000)).status == 400)
    #expect(
      h.call(
        "POST", "/v0/b/bkt/o?name=u", metadata(9000),
        headers: [("x-goog-upload-protocol", "resumable"), ("x-goog-upload-command", "start")]
      ).status == 400)
  }

  @Test func copyAndComposeCannotAddPastEightKiB() {
    h.call("POST", "/upload/storage/v1/b/bkt/o?uploadType=media&name=s", "x")
    #expect(h.call("PATCH", "/storage/v1/b/bkt/o/s", metadata(6000, key: "a")).status == 200)
    #expect(h.call("POST", "/storage/v1/b/bkt/o/s/copyTo/b/bkt/o/t", metadata(3000, key: "b")).status == 400)
    #expect(h.call("GET", "/storage/v1/b/bkt/o/t").status == 404)
    let compose = #"{"sourceObjects":[{"name":"s"}],"destination":\#(metadata(9000))}"#
    #expect(h.call("POST", "/storage/v1/b/bkt/o/t/compose", compose).status == 400)
  }
}

/// A gzip body of many empty members (or of empty deflate blocks) costs CPU in slices: each
/// `next()` returns after a bounded amount of input, so the connection's loop is never stalled.
@Suite struct GzipBoundedWorkTests {
  /// gzip of nothing: header, an empty final fixed block, CRC32 0 and length 0.
  static let emptyMember: [UInt8] = [
    0x1f, 0x8b, 0x08, 0x00, 0, 0, 0, 0, 0x00, 0x03, 0x03, 0x00, 0, 0, 0, 0, 0, 0, 0, 0,
  ]
  /// gzip of "hello hello hello\n".
  static let hello: [UInt8] = [
    0x1f, 0x8b, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0x03, 0xcb, 0x48, 0xcd, 0xc9, 0xc9, 0x57, 0xc8, 0x40, 0x90,
    0x5c, 0x00, 0x3b, 0x7c, 0x8a, 0xdf, 0x12, 0x00, 0x00, 0x00,
  ]

  @Test func manyEmptyGzipMembersAreInflatedInBoundedSlices() throws {
    let members = 200_000
    var body: [UInt8] = []
    body.reserveCapacity(members * Self.emptyMember.count + Self.hello.count)
    for _ in 0..<members { body += Self.emptyMember }
    body += Self.hello
    let stream = GzipInflateStream(.bytes(body))
    var output: [UInt8] = []
    var calls = 0
    var emptyPieces = 0
    while let piece = try stream.next() {
      calls += 1
      if piece.isEmpty { emptyPieces += 1 }
      output += piece
    }
    #expect(String(decoding: output, as: UTF8.self) == "hello hello hello\n")
    // One slice ends at most `maxMembersPerCall` members: the work was cut into many calls.
    #expect(emptyPieces >= members / GzipInflater.maxMembersPerCall - 1)
    #expect(calls == emptyPieces + 1)
  }

  @Test func aLongRunOfEmptyStoredBlocksIsAlsoSliced() throws {
    // One member whose deflate stream is 400,000 empty stored blocks (5 bytes each), then "x".
    var body: [UInt8] = [0x1f, 0x8b, 0x08, 0x00, 0, 0, 0, 0, 0x00, 0x03]
    for _ in 0..<400_000 { body += [0x00, 0x00, 0x00, 0xff, 0xff] }
    body += [0x01, 0x01, 0x00, 0xfe, 0xff, UInt8(ascii: "x")]
    body += [0x83, 0x16, 0xdc, 0x8c, 0x01, 0, 0, 0]  // CRC32("x") little-endian, length 1
    let stream = GzipInflateStream(.bytes(body))
    var output: [UInt8] = []
    var emptyPieces = 0
    while let piece = try stream.next() {
      if piece.isEmpty { emptyPieces += 1 }
      output += piece
    }
    #expect(output == [UInt8(ascii: "x")])
    #expect(emptyPieces >= body.count / GzipInflater.maxInputPerCall - 1)
    #expect(emptyPieces >= 1)
  }
}

/// Download tokens are custom metadata in production, so they share the 8 KiB: `create_token`
/// cannot grow an object's record without bound.
@Suite struct DownloadTokenFloodTests {
  @Test func createTokenFloodStopsAtTheCustomMetadataLimit() throws {
    let h = try APIHarness()
    h.call("POST", "/v0/b/bkt/o?name=t", "x")
    var created = 1
    var last = 200
    while last == 200 && created < 1000 {
      last = h.call("POST", "/v0/b/bkt/o/t?create_token=true", headers: [("authorization", "Bearer owner")]).status
      if last == 200 { created += 1 }
    }
    #expect(last == 400)
    // 36-byte tokens, comma-separated, under the 29-byte key: 221 fit in 8 KiB.
    #expect(created == (8192 - 29 + 1) / 37)
    let tokens = h.call("GET", "/v0/b/bkt/o/t").string("downloadTokens") ?? ""
    #expect(tokens.split(separator: ",").count == created)
  }
}
