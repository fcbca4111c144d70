import Foundation
import Testing

@Suite struct DurabilityTests {
  @Test func thirtyTwoParallelPatchesAllLand() throws {
    let server = try RunningEmulator()
    defer {
      server.stop()
      server.removeFolder()
    }
    let object = server.base + "/storage/v1/b/bkt/o/shared"
    _ = try Curl.request("POST", server.base + "/upload/storage/v1/b/bkt/o?uploadType=media&name=shared", body: "x")
    let statuses = Statuses()
    DispatchQueue.concurrentPerform(iterations: 32) { index in
      let reply = try? Curl.request("PATCH", object, body: #"{"metadata":{"key\#(index)":"value\#(index)"}}"#)
      statuses.add(reply?.status ?? -1)
    }
    #expect(statuses.all == [Int](repeating: 200, count: 32))
    let final = try Curl.request("GET", object)
    #expect(final.json["metageneration"] as? String == "33")
    let custom = final.json["metadata"] as? [String: String] ?? [:]
    #expect(custom.count == 32)
    #expect((0..<32).allSatisfy { custom["key\($0)"] == "value\($0)" })
  }

  @Test func thirtyTwoConditionalPatchesOverHTTPHaveExactlyOneWinner() throws {
    let server = try RunningEmulator()
    defer {
      server.stop()
      server.removeFolder()
    }
    _ = try Curl.request("POST", server.base + "/upload/storage/v1/b/bkt/o?uploadType=media&name=o", body: "x")
    let statuses = Statuses()
    let base = server.base
    DispatchQueue.concurrentPerform(iterations: 32) { index in
      let reply = try? Curl.request(
        "PATCH", base + "/storage/v1/b/bkt/o/o?ifMetagenerationMatch=1", body: #"{"metadata":{"w":"\#(index)"}}"#
      )
      statuses.add(reply?.status ?? -1)
    }
    #expect(statuses.all.filter { $0 == 200 }.count == 1)
    #expect(statuses.all.filter { $0 == 412 }.count == 31)
    #expect(try Curl.request("GET", server.base + "/storage/v1/b/bkt/o/o").json["metageneration"] as? String == "2")
  }

  @Test func thirtyTwoCreatesOverHTTPLeaveOneObjectAndOneWinner() throws {
    let server = try RunningEmulator()
    defer {
      server.stop()
      server.removeFolder()
    }
    let winners = Statuses()
    let base = server.base
    DispatchQueue.concurrentPerform(iterations: 32) { index in
      let reply = try? Curl.request(
        "POST", base + "/upload/storage/v1/b/bkt/o?uploadType=media&name=once&ifGenerationMatch=0",
        body: "writer-\(index)")
      if reply?.status == 200 { winners.add(index) }
      #expect(reply?.status == 200 || reply?.status == 412)
    }
    #expect(winners.all.count == 1)
    let body = try Curl.request("GET", server.base + "/storage/v1/b/bkt/o/once?alt=media").text
    #expect(body == "writer-\(winners.all.first ?? -1)")
    let list = try Curl.request("GET", server.base + "/storage/v1/b/bkt/o")
    #expect((list.json["items"] as? [[String: Any]])?.count == 1)
  }

  @Test func aRestartKeepsEverything() throws {
    let first = try RunningEmulator()
    defer { first.removeFolder() }
    _ = try Curl.request("POST", first.base + "/storage/v1/b", body: #"{"name":"empty-bucket"}"#)
    let upload = try Curl.request(
      "POST", first.base + "/v0/b/bkt/o?name=a%2Fb.txt", body: "persist me", headers: ["Content-Type: text/plain"])
    #expect(upload.status == 200)
    let patched = try Curl.request("PATCH", first.base + "/v0/b/bkt/o/a%2Fb.txt", body: #"{"metadata":{"k":"v"}}"#)
    first.stop()

    let second = try RunningEmulator(folder: first.folder)
    defer { second.stop() }
    let reloaded = try Curl.request("GET", second.base + "/v0/b/bkt/o/a%2Fb.txt")
    #expect(reloaded.text == patched.text)
    #expect(try Curl.request("GET", second.base + "/v0/b/bkt/o/a%2Fb.txt?alt=media").text == "persist me")
    let buckets = try Curl.request("GET", second.base + "/storage/v1/b")
    #expect(
      (buckets.json["items"] as? [[String: Any]])?.compactMap { $0["name"] as? String } == ["bkt", "empty-bucket"])
  }

  @Test func killMinus9RightAfterAnAcknowledgedPatchKeepsIt() throws {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("se-kill-\(UUID().uuidString)")
    defer { try? FileManager.default.removeItem(at: folder) }
    let data = folder.appendingPathComponent("data").path
    let first = try EmulatorProcess(arguments: ["--data-dir", data])
    _ = try Curl.request("POST", first.base + "/upload/storage/v1/b/bkt/o?uploadType=media&name=o", body: "bytes")
    let patch = try Curl.request("PATCH", first.base + "/storage/v1/b/bkt/o/o", body: #"{"metadata":{"acked":"yes"}}"#)
    #expect(patch.status == 200)
    first.kill9()

    let second = try EmulatorProcess(arguments: ["--data-dir", data])
    let reply = try Curl.request("GET", second.base + "/storage/v1/b/bkt/o/o")
    #expect((reply.json["metadata"] as? [String: String])?["acked"] == "yes")
    #expect(reply.json["metageneration"] as? String == "2")
    #expect(try Curl.request("GET", second.base + "/storage/v1/b/bkt/o/o?alt=media").text == "bytes")
    let (status, printed) = second.terminate()
    #expect(status == 0)
    #expect(printed.contains("stopped"))
  }

  @Test func awkwardNamesRoundTripAndStayInsideTheDataFolder() throws {
    let server = try RunningEmulator()
    defer {
      server.stop()
      server.removeFolder()
    }
    let names = ["../../x", "a%2Fb", "日本語/ファイル.txt", "a b+c#d?e", "..\\..\\y", "/leading"]
    for (index, name) in names.enumerated() {
      let encoded = name.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
      let upload = try Curl.request(
        "POST", server.base + "/upload/storage/v1/b/bkt/o?uploadType=media&name=\(encoded)", body: "v\(index)")
      #expect(upload.status == 200)
      #expect(upload.json["name"] as? String == name)
      let meta = try Curl.request("GET", server.base + "/storage/v1/b/bkt/o/\(encoded)")
      #expect(meta.json["name"] as? String == name)
      let viaFirebase = try Curl.request("GET", server.base + "/v0/b/bkt/o/\(encoded)?alt=media")
      #expect(viaFirebase.text == "v\(index)")
      // Python downloads through mediaLink: it must work as given.
      let mediaLink = try #require(meta.json["mediaLink"] as? String)
      #expect(try Curl.request("GET", mediaLink).text == "v\(index)")
    }
    let list = try Curl.request("GET", server.base + "/storage/v1/b/bkt/o")
    #expect(Set((list.json["items"] as? [[String: Any]] ?? []).compactMap { $0["name"] as? String }) == Set(names))
    let top = try FileManager.default.contentsOfDirectory(atPath: server.folder.path)
    #expect(top == ["data"])
  }
}

final class Statuses: @unchecked Sendable {
  private let lock = NSLock()
  private var values: [Int] = []
  func add(_ value: Int) { lock.withLock { values.append(value) } }
  var all: [Int] { lock.withLock { values } }
}
