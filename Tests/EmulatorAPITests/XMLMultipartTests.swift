import EmulatorHTTP
import EmulatorStorage
import Foundation
import Testing

@testable import EmulatorAPI

/// XML multipart uploads through the router, and the CompleteMultipartUpload reader on hostile
/// documents.
@Suite struct XMLMultipartTests {
  let h: APIHarness

  init() throws {
    h = try APIHarness(lenientBuckets: false)
    #expect(h.call("POST", "/storage/v1/b", #"{"name":"bkt"}"#).status == 200)
  }

  func initiate(_ name: String, headers: [(String, String)] = []) throws -> String {
    let reply = h.call("POST", "/bkt/\(name)?uploads", headers: headers)
    #expect(reply.status == 200, "\(reply.text)")
    return try #require(XMLAPITests.values("UploadId", in: reply.text).first)
  }

  @Test func initiateUploadListCompleteInAnyOrder() throws {
    let id = try initiate("multi%2Efile", headers: [("content-type", "text/x"), ("x-goog-meta-k", "v")])
    let part2 = h.call("PUT", "/bkt/multi.file?partNumber=2&uploadId=\(id)", "second")
    let part1 = h.call("PUT", "/bkt/multi.file?partNumber=1&uploadId=\(id)", "first-")
    #expect(part1.status == 200 && part2.status == 200)
    let tag1 = try #require(part1.header("etag"))
    let tag2 = try #require(part2.header("etag"))
    let listed = h.call("GET", "/bkt/multi.file?uploadId=\(id)").text
    #expect(XMLAPITests.values("PartNumber", in: listed) == ["1", "2"])
    #expect(XMLAPITests.values("Size", in: listed) == ["6", "6"])
    let document =
      "<CompleteMultipartUpload><Part><PartNumber>1</PartNumber><ETag>\(tag1)</ETag></Part>"
      + "<Part><PartNumber>2</PartNumber><ETag>\(tag2.replacingOccurrences(of: "\"", with: "&quot;"))</ETag></Part>"
      + "</CompleteMultipartUpload>"
    let done = h.call("POST", "/bkt/multi.file?uploadId=\(id)", document)
    #expect(done.status == 200, "\(done.text)")
    #expect(done.text.contains("<CompleteMultipartUploadResult"))
    let got = h.call("GET", "/bkt/multi.file")
    #expect(got.text == "first-second")
    #expect(got.header("content-type") == "text/x")
    #expect(got.header("x-goog-meta-k") == "v")
    // The upload is gone once completed.
    #expect(h.call("GET", "/bkt/multi.file?uploadId=\(id)").text.contains("NoSuchUpload"))
  }

  @Test func completeRefusesWrongOrderMissingPartsAndForeignTags() throws {
    let id = try initiate("o")
    #expect(h.call("PUT", "/bkt/o?partNumber=1&uploadId=\(id)", "a").status == 200)
    #expect(h.call("PUT", "/bkt/o?partNumber=2&uploadId=\(id)", "b").status == 200)
    func complete(_ body: String) -> Reply { h.call("POST", "/bkt/o?uploadId=\(id)", body) }
    let wrongOrder = complete(
      "<CompleteMultipartUpload><Part><PartNumber>2</PartNumber></Part><Part><PartNumber>1</PartNumber></Part></CompleteMultipartUpload>"
    )
    #expect(wrongOrder.status == 400)
    #expect(
      complete("<CompleteMultipartUpload><Part><PartNumber>3</PartNumber></Part></CompleteMultipartUpload>").status
        == 400)
    #expect(
      complete(
        "<CompleteMultipartUpload><Part><PartNumber>1</PartNumber><ETag>\"00000000000000000000000000000000\"</ETag></Part></CompleteMultipartUpload>"
      ).status == 400)
    #expect(h.call("GET", "/bkt/o").status == 404)
    // A subset of the parts is a valid object.
    #expect(
      complete("<CompleteMultipartUpload><Part><PartNumber>2</PartNumber></Part></CompleteMultipartUpload>").status
        == 200)
    #expect(h.call("GET", "/bkt/o").text == "b")
  }

  @Test func abortForgetsTheUpload() throws {
    let id = try initiate("a")
    #expect(h.call("PUT", "/bkt/a?partNumber=1&uploadId=\(id)", "x").status == 200)
    #expect(h.call("DELETE", "/bkt/a?uploadId=\(id)").status == 204)
    #expect(h.call("PUT", "/bkt/a?partNumber=2&uploadId=\(id)", "x").status == 404)
    #expect(h.call("DELETE", "/bkt/a?uploadId=\(id)").status == 404)
    // An upload id is bound to its object.
    let other = try initiate("b")
    #expect(h.call("PUT", "/bkt/a?partNumber=1&uploadId=\(other)", "x").status == 404)
  }

  @Test func partNumbersOutOfRangeAndMissingBucketsAreRefused() throws {
    let id = try initiate("p")
    for number in ["0", "10001", "-1", "x"] {
      #expect(h.call("PUT", "/bkt/p?partNumber=\(number)&uploadId=\(id)", "x").status == 400, "partNumber \(number)")
    }
    #expect(h.call("POST", "/nobucket/p?uploads").text.contains("NoSuchBucket"))
  }

  @Test(arguments: [
    "", "not xml", "<CompleteMultipartUpload></CompleteMultipartUpload>",
    "<CompleteMultipartUpload><Part><PartNumber>1</PartNumber>",
    "<CompleteMultipartUpload><Part><ETag>x</ETag></Part></CompleteMultipartUpload>",
    "<CompleteMultipartUpload><Part><PartNumber>99999999999999999999</PartNumber></Part></CompleteMultipartUpload>",
  ])
  func malformedCompleteDocumentsAre400(body: String) throws {
    #expect(throws: XMLError.self) { try XMLCompleteDocument.parts(Array(body.utf8)) }
  }

  @Test func deeplyNestedOrHugeCompleteDocumentsEndQuickly() throws {
    // Nesting does not matter to a linear reader: 100 000 nested <Part> open tags, one close.
    let nested = "<CompleteMultipartUpload>" + String(repeating: "<Part>", count: 100_000) + "</Part>"
    #expect(throws: XMLError.self) { try XMLCompleteDocument.parts(Array(nested.utf8)) }
    // More than 10 000 parts: refused.
    let many =
      "<CompleteMultipartUpload>" + String(repeating: "<Part><PartNumber>1</PartNumber></Part>", count: 10_001)
      + "</CompleteMultipartUpload>"
    #expect(throws: XMLError.self) { try XMLCompleteDocument.parts(Array(many.utf8)) }
  }

  @Test func uploadFloodPastTheCapIsRefused() throws {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("se-xmlmp-\(UUID().uuidString)")
    defer { try? FileManager.default.removeItem(at: folder) }
    let uploads = try MultipartUploads(directory: folder, maxUploads: 2, maxBytes: 10)
    let first = try uploads.initiate(bucket: "bkt", name: "a", patch: MetadataPatch())
    _ = try uploads.initiate(bucket: "bkt", name: "b", patch: MetadataPatch())
    #expect(throws: StorageError.self) { try uploads.initiate(bucket: "bkt", name: "c", patch: MetadataPatch()) }
    // Parts past the upload's byte budget are refused too.
    #expect(throws: StorageError.self) {
      try uploads.putPart(
        first.id, bucket: "bkt", name: "a", number: 1, bytes: Array(repeating: 1, count: 11), file: nil)
    }
    uploads.abort(first.id)
    _ = try uploads.initiate(bucket: "bkt", name: "c", patch: MetadataPatch())
  }
}
