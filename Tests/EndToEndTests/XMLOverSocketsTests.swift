import Foundation
import Testing

/// The XML API over real sockets with libcurl: a large PUT past the metadata body limit, both
/// addressing styles, conditional GET, listing, and GCS's 404 for a missing bucket.
@Suite struct XMLOverSocketsTests {
  @Test func xmlObjectLifecycleOverSockets() throws {
    let server = try RunningEmulator { $0.api.lenientBuckets = false }
    defer {
      server.stop()
      server.removeFolder()
    }
    let base = server.base
    #expect(try Curl.request("PUT", base + "/xbkt").status == 200)
    // 3 MiB: more than the 1 MiB metadata limit, so the XML PUT must get the upload limit.
    let big = [UInt8]((0..<(3 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 31) })
    let put = try Curl().perform(
      "PUT", base + "/xbkt/big%2Ebin", body: big, headers: ["Content-Type: application/x-test"])
    #expect(put.status == 200, "\(put.text)")
    let etag = try #require(put.header("etag"))
    let got = try Curl().perform("GET", base + "/xbkt/big.bin")
    #expect(got.status == 200)
    #expect(got.body == big)
    #expect(got.header("x-goog-stored-content-length") == String(big.count))
    // Virtual-host style: Host: xbkt.localhost.
    let hosted = try Curl.request("GET", base + "/big.bin", headers: ["Host: xbkt.localhost:\(server.port)"])
    #expect(hosted.status == 200)
    #expect(hosted.body.count == big.count)
    #expect(try Curl.request("GET", base + "/xbkt/big.bin", headers: ["If-None-Match: \(etag)"]).status == 304)
    let head = try Curl.request("HEAD", base + "/xbkt/big.bin")
    #expect(head.status == 200)
    #expect(head.header("content-length") == String(big.count))
    let list = try Curl.request("GET", base + "/xbkt?list-type=2")
    #expect(list.text.contains("<Key>big.bin</Key>"))
    let missing = try Curl.request("PUT", base + "/nobkt/x", body: "x")
    #expect(missing.status == 404)
    #expect(missing.text.contains("<Code>NoSuchBucket</Code>"))
    #expect(try Curl.request("DELETE", base + "/xbkt/big.bin").status == 204)
    #expect(try Curl.request("GET", base + "/xbkt/big.bin").text.contains("<Code>NoSuchKey</Code>"))
    // The JSON surfaces are routed as before.
    #expect(try Curl.request("GET", base + "/storage/v1/b/xbkt").json["name"] as? String == "xbkt")
  }

  /// Parts over 1 MiB are spooled to disk by the HTTP layer and handed over as files.
  @Test func xmlMultipartUploadWithSpooledPartsOverSockets() throws {
    let server = try RunningEmulator { $0.api.lenientBuckets = false }
    defer {
      server.stop()
      server.removeFolder()
    }
    let base = server.base
    #expect(try Curl.request("PUT", base + "/mbkt").status == 200)
    let initiated = try Curl.request("POST", base + "/mbkt/big%20file?uploads", headers: ["Content-Type: text/x"])
    #expect(initiated.status == 200)
    let id = try #require(initiated.text.components(separatedBy: "<UploadId>").last?.components(separatedBy: "<").first)
    let first = [UInt8](repeating: 0x61, count: 5 << 20)
    let second = [UInt8]((0..<(3 << 20)).map { UInt8(truncatingIfNeeded: $0) })
    let tag2 = try #require(
      try Curl().perform("PUT", base + "/mbkt/big%20file?partNumber=2&uploadId=\(id)", body: second).header("etag"))
    let tag1 = try #require(
      try Curl().perform("PUT", base + "/mbkt/big%20file?partNumber=1&uploadId=\(id)", body: first).header("etag"))
    let document =
      "<CompleteMultipartUpload><Part><PartNumber>1</PartNumber><ETag>\(tag1)</ETag></Part>"
      + "<Part><PartNumber>2</PartNumber><ETag>\(tag2)</ETag></Part></CompleteMultipartUpload>"
    let done = try Curl.request("POST", base + "/mbkt/big%20file?uploadId=\(id)", body: document)
    #expect(done.status == 200, "\(done.text)")
    let got = try Curl().perform("GET", base + "/mbkt/big%20file")
    #expect(got.body == first + second)
    #expect(got.header("content-type") == "text/x")
    // The JSON API sees the same object.
    let json = try Curl.request("GET", base + "/storage/v1/b/mbkt/o/big%20file")
    #expect(json.json["size"] as? String == String(first.count + second.count))
  }
}
