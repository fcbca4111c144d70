import Foundation
import Testing

/// gcloud's request shapes over real sockets, and versioned generations across a kill -9 of the
/// real binary.
@Suite struct GcloudFlowTests {
  @Test func apitoolsMultipartResumablePrefixAndStorageLayoutOverHTTP() throws {
    let server = try RunningEmulator()
    defer {
      server.stop()
      server.removeFolder()
    }
    let created = try Curl.request(
      "POST", server.base + "/storage/v1/b?project=p",
      body:
        #"{"iamConfiguration":{"uniformBucketLevelAccess":{"enabled":true}},"location":"us-east1","name":"gcloud-flow","storageClass":"nearline"}"#
    )
    #expect(created.status == 200)
    #expect(created.json["location"] as? String == "US-EAST1")
    let boundary = "===============1234567890123456789=="
    let body =
      "--\(boundary)\nContent-Type: application/json\nMIME-Version: 1.0\n\n{\"name\": \"a.txt\"}\n--\(boundary)\n"
      + "Content-Type: text/plain\nMIME-Version: 1.0\nContent-Transfer-Encoding: binary\n\nhi\n\n--\(boundary)--"
    let upload = try Curl.request(
      "POST", server.base + "/upload/storage/v1/b/gcloud-flow/o?alt=json&uploadType=multipart", body: body,
      headers: ["Content-Type: multipart/related; boundary='\(boundary)'"])
    #expect(upload.status == 200)
    #expect(try Curl.request("GET", server.base + "/storage/v1/b/gcloud-flow/o/a.txt?alt=media").text == "hi\n")
    let start = try Curl.request(
      "POST", server.base + "/resumable/upload/storage/v1/b/gcloud-flow/o?alt=json&uploadType=resumable",
      body: #"{"name":"big.bin"}"#,
      headers: ["X-Upload-Content-Type: application/octet-stream"])
    #expect(start.status == 200)
    let session = try #require(start.header("location"))
    let done = try Curl.request("PUT", session, body: "whole", headers: ["Content-Range: bytes 0-4/5"])
    #expect(done.status == 200)
    #expect(done.json["size"] as? String == "5")
    let layout = try Curl.request("GET", server.base + "/storage/v1/b/gcloud-flow/storageLayout?alt=json")
    #expect(layout.json["kind"] as? String == "storage#storageLayout")
    #expect(layout.json["locationType"] as? String == "region")
  }

  @Test func noncurrentGenerationsSurviveKillMinus9() throws {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("se-ver-\(UUID().uuidString)")
    defer { try? FileManager.default.removeItem(at: folder) }
    let data = folder.appendingPathComponent("data").path
    let first = try EmulatorProcess(arguments: ["--data-dir", data])
    _ = try Curl.request("POST", first.base + "/storage/v1/b", body: #"{"name":"kept-versions"}"#)
    let versioned = try Curl.request(
      "PATCH", first.base + "/storage/v1/b/kept-versions", body: #"{"versioning":{"enabled":true}}"#)
    #expect(versioned.status == 200)
    var generations: [String] = []
    for text in ["one", "two"] {
      let reply = try Curl.request(
        "POST", first.base + "/upload/storage/v1/b/kept-versions/o?uploadType=media&name=v.txt", body: text)
      generations.append(reply.json["generation"] as? String ?? "")
    }
    first.kill9()

    let second = try EmulatorProcess(arguments: ["--data-dir", data])
    let listed = try Curl.request("GET", second.base + "/storage/v1/b/kept-versions/o?versions=true")
    let items = listed.json["items"] as? [[String: Any]] ?? []
    #expect(items.compactMap { $0["generation"] as? String } == generations)
    let old = try Curl.request(
      "GET", second.base + "/storage/v1/b/kept-versions/o/v.txt?alt=media&generation=\(generations[0])")
    #expect(old.text == "one")
    let bucket = try Curl.request("GET", second.base + "/storage/v1/b/kept-versions")
    #expect((bucket.json["versioning"] as? [String: Any])?["enabled"] as? Bool == true)
    let (status, _) = second.terminate()
    #expect(status == 0)
  }
}
