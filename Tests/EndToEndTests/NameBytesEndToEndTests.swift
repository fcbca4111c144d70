import Foundation
import Testing

/// Over real sockets, against the binary: a precomposed and a decomposed "café" are two objects
/// through a clean restart (snapshot) and a `kill -9` (journal replay), listed in byte order.
@Suite struct NameBytesEndToEndTests {
  static let composed = "caf%C3%A9"
  static let decomposed = "cafe%CC%81"

  func expectBoth(_ base: String, _ suffix: String) throws {
    #expect(try Curl.request("GET", base + "/storage/v1/b/bkt/o/\(Self.composed)?alt=media").text == "nfc" + suffix)
    #expect(try Curl.request("GET", base + "/storage/v1/b/bkt/o/\(Self.decomposed)?alt=media").text == "nfd" + suffix)
    let items = try Curl.request("GET", base + "/storage/v1/b/bkt/o").json["items"] as? [[String: Any]] ?? []
    let names = items.compactMap { ($0["name"] as? String).map { Array($0.utf8) } }
    #expect(names == [Array("cafe\u{301}".utf8), Array("caf\u{E9}".utf8)])
  }

  @Test func canonicallyEquivalentNamesSurviveARestartAndAKill() throws {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("se-names-\(UUID().uuidString)")
    defer { try? FileManager.default.removeItem(at: folder) }
    let data = folder.appendingPathComponent("data").path
    let first = try EmulatorProcess(arguments: ["--data-dir", data])
    for (name, body) in [(Self.composed, "nfc1"), (Self.decomposed, "nfd1")] {
      let reply = try Curl.request(
        "POST", first.base + "/upload/storage/v1/b/bkt/o?uploadType=media&name=\(name)", body: body)
      #expect(reply.status == 200)
    }
    try expectBoth(first.base, "1")
    #expect(first.terminate().0 == 0)  // a clean stop: the snapshot holds both

    let second = try EmulatorProcess(arguments: ["--data-dir", data])
    try expectBoth(second.base, "1")
    for (name, body) in [(Self.composed, "nfc2"), (Self.decomposed, "nfd2")] {
      let reply = try Curl.request(
        "POST", second.base + "/upload/storage/v1/b/bkt/o?uploadType=media&name=\(name)", body: body)
      #expect(reply.status == 200)
    }
    second.kill9()  // only the journal names the second generations

    let third = try EmulatorProcess(arguments: ["--data-dir", data])
    defer { _ = third.terminate() }
    try expectBoth(third.base, "2")
  }
}
