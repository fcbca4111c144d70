import Foundation
import Testing

/// XML multipart uploads survive a restart of the emulator, even one by `kill -9`: the upload,
/// its metadata and its parts are read back from the data folder, listed, and completed.
@Suite struct XMLMultipartRestartTests {
  @Test func partsUploadedBeforeAKill9AreListedAndCompletedAfterTheRestart() throws {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("se-xmlrestart-\(UUID().uuidString)")
    defer { try? FileManager.default.removeItem(at: folder) }
    let arguments = ["--data-dir", folder.appendingPathComponent("data").path]
    let first = try EmulatorProcess(arguments: arguments)
    let big = (0..<(2 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 7 >> 3) }  // spooled on its way in
    var object = first.base + "/rbkt/dir/restart%20me.bin"
    #expect(try Curl.request("PUT", first.base + "/rbkt").status == 200)
    let initiated = try Curl.request(
      "POST", object + "?uploads", headers: ["Content-Type: text/x-restart", "x-goog-meta-colour: blue"])
    let id = try #require(initiated.text.components(separatedBy: "<UploadId>").last?.components(separatedBy: "<").first)
    let tag1 = try #require(
      try Curl().perform("PUT", object + "?partNumber=1&uploadId=\(id)", body: big).header("etag"))
    let tag3 = try #require(
      try Curl.request("PUT", object + "?partNumber=3&uploadId=\(id)", body: "end").header("etag"))
    first.kill9()

    let second = try EmulatorProcess(arguments: arguments)
    defer { _ = second.terminate() }
    object = second.base + "/rbkt/dir/restart%20me.bin"
    let listed = try Curl.request("GET", object + "?uploadId=\(id)")
    #expect(listed.status == 200, "\(listed.text)")
    #expect(listed.text.contains("<PartNumber>1</PartNumber>") && listed.text.contains("<PartNumber>3</PartNumber>"))
    for tag in [tag1, tag3] {
      let hex = tag.trimmingCharacters(in: CharacterSet(charactersIn: "\""))
      #expect(listed.text.contains("<ETag>&quot;\(hex)&quot;</ETag>"), "the part's ETag is its MD5 still")
    }
    #expect(listed.text.contains("<Size>\(big.count)</Size>"))
    let done = try Curl.request(
      "POST", object + "?uploadId=\(id)",
      body: "<CompleteMultipartUpload><Part><PartNumber>1</PartNumber><ETag>\(tag1)</ETag></Part>"
        + "<Part><PartNumber>3</PartNumber><ETag>\(tag3)</ETag></Part></CompleteMultipartUpload>")
    #expect(done.status == 200, "\(done.text)")
    let read = try Curl().perform("GET", object)
    #expect(read.body == big + Array("end".utf8))
    #expect(read.header("content-type") == "text/x-restart", "the initiate request's metadata survived")
    #expect(read.header("x-goog-meta-colour") == "blue")
    // Completed: the upload is gone, and so are its parts.
    #expect(try Curl.request("GET", object + "?uploadId=\(id)").status == 404)
    let left = try FileManager.default.contentsOfDirectory(atPath: folder.appendingPathComponent("data/multipart").path)
    #expect(left.isEmpty, "\(left)")
  }
}
