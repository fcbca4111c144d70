import Foundation
import Testing

/// `/internal/health`, `/internal/info`, `POST /internal/reset` and `storage-emulator health`
/// over real sockets.
@Suite struct InternalEndpointsTests {
  @Test func healthAnswers200OnBothPaths() throws {
    let server = try RunningEmulator(inMemory: true)
    defer {
      server.stop()
      server.removeFolder()
    }
    for path in ["/internal/health", "/_internal/healthcheck"] {
      let reply = try Curl.request("GET", server.base + path)
      #expect(reply.status == 200)
      #expect(reply.json["status"] as? String == "ok")
    }
    let wrongMethod = try Curl.request("POST", server.base + "/internal/health", body: "")
    #expect(wrongMethod.status == 405)
    #expect(wrongMethod.header("allow") == "GET")
  }

  @Test func infoReportsVersionUptimeDataFolderAndCounts() throws {
    let server = try RunningEmulator()
    defer {
      server.stop()
      server.removeFolder()
    }
    for name in ["a", "b/c"] {
      let upload = try Curl.request("POST", server.base + "/v0/b/bkt/o?name=\(name)", body: "xyz")
      #expect(upload.status == 200)
    }
    let info = try Curl.request("GET", server.base + "/internal/info")
    #expect(info.status == 200)
    #expect(info.json["version"] as? String == "0.1.0")
    #expect(info.json["objectCount"] as? Int == 2)
    #expect(info.json["bucketCount"] as? Int == 1)
    #expect((info.json["uptimeSeconds"] as? Double ?? -1) >= 0)
    let folder = try #require(info.json["dataDirectory"] as? String)
    #expect(folder == server.dataDirectory.standardizedFileURL.path)
    #expect(info.json["inMemory"] as? Bool == false)
  }

  @Test func resetRemovesObjectsBucketsAndUploadSessionsButKeepsConfiguredBuckets() throws {
    let server = try RunningEmulator { $0.buckets = ["configured"] }
    defer {
      server.stop()
      server.removeFolder()
    }
    let base = server.base
    #expect(try Curl.request("POST", base + "/v0/b/other/o?name=x", body: "1").status == 200)
    #expect(try Curl.request("POST", base + "/v0/b/configured/o?name=y%2Fz", body: "22").status == 200)
    let start = try Curl.request(
      "POST", base + "/upload/storage/v1/b/other/o?uploadType=resumable&name=big", body: "{}",
      headers: ["Content-Type: application/json"])
    let location = try #require(start.header("location"))
    // An XML multipart upload in progress goes too.
    let initiate = try Curl.request("POST", base + "/other/parts?uploads", body: "")
    #expect(initiate.status == 200)
    let uploadID = try #require(
      initiate.text.range(of: "<UploadId>").flatMap { open in
        initiate.text[open.upperBound...].range(of: "</UploadId>").map { initiate.text[open.upperBound..<$0.lowerBound] }
      })
    #expect(try Curl.request("GET", base + "/other/parts?uploadId=\(uploadID)").status == 200)

    let reset = try Curl.request("POST", base + "/internal/reset", body: "")
    #expect(reset.status == 200)
    #expect(reset.json["objects"] as? Int == 2)
    #expect(reset.json["buckets"] as? Int == 2)
    #expect(reset.json["uploadSessions"] as? Int == 1)
    #expect(reset.json["multipartUploads"] as? Int == 1)
    #expect(try Curl.request("GET", base + "/other/parts?uploadId=\(uploadID)").status == 404)

    #expect(try Curl.request("GET", base + "/v0/b/other/o/x").status == 404)
    #expect(try Curl.request("GET", base + "/storage/v1/b/other").status == 404)
    let buckets = try Curl.request("GET", base + "/storage/v1/b")
    #expect((buckets.json["items"] as? [[String: Any]])?.compactMap { $0["name"] as? String } == ["configured"])
    let list = try Curl.request("GET", base + "/storage/v1/b/configured/o")
    #expect((list.json["items"] as? [Any] ?? []).isEmpty)
    // The resumable session is gone with the rest.
    #expect(try Curl.request("PUT", location, body: "data").status == 404)
    // And the emulator goes on working.
    #expect(try Curl.request("POST", base + "/v0/b/other/o?name=x", body: "again").status == 200)
    #expect(try Curl.request("GET", base + "/v0/b/other/o/x?alt=media").text == "again")
  }

  @Test func resetSurvivesARestart() throws {
    let first = try RunningEmulator()
    defer { first.removeFolder() }
    #expect(try Curl.request("POST", first.base + "/v0/b/bkt/o?name=x", body: "1").status == 200)
    #expect(try Curl.request("POST", first.base + "/internal/reset", body: "").status == 200)
    first.stop()
    let second = try RunningEmulator(folder: first.folder)
    defer { second.stop() }
    #expect(try Curl.request("GET", second.base + "/v0/b/bkt/o/x").status == 404)
    #expect((try Curl.request("GET", second.base + "/internal/info").json["objectCount"] as? Int) == 0)
  }

  @Test func healthSubcommandExitsZeroForARunningEmulatorAndOneOtherwise() throws {
    let server = try RunningEmulator(inMemory: true)
    let port = server.port
    func runHealth() throws -> Int32 {
      let process = Process()
      process.executableURL = EmulatorProcess.executableURL()
      process.arguments = ["health", "--port", String(port)]
      process.standardOutput = FileHandle.nullDevice
      process.standardError = FileHandle.nullDevice
      try process.run()
      process.waitUntilExit()
      return process.terminationStatus
    }
    #expect(try runHealth() == 0)
    server.stop()
    server.removeFolder()
    #expect(try runHealth() == 1)
  }
}
