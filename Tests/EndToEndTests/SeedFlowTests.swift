import Foundation
import Testing

/// The seed documents' flow over real sockets with libcurl, on each surface.
@Suite struct SeedFlowTests {
  @Test(arguments: ["/v0/b/demo.appspot.com/o/", "/b/demo.appspot.com/o/", "/storage/v1/b/demo.appspot.com/o/"])
  func seedFlowOverSockets(prefix: String) throws {
    let server = try RunningEmulator()
    defer {
      server.stop()
      server.removeFolder()
    }
    let base = server.base
    let firebase = prefix.hasPrefix("/v0")
    // Upload a file.
    let upload =
      firebase
      ? try Curl.request(
        "POST", base + "/v0/b/demo.appspot.com/o?name=images%2Fforest.jpg", body: "hello world",
        headers: ["Content-Type: image/jpeg"])
      : try Curl.request(
        "POST", base + "/upload/storage/v1/b/demo.appspot.com/o?uploadType=media&name=images%2Fforest.jpg",
        body: "hello world", headers: ["Content-Type: image/jpeg"])
    #expect(upload.status == 200)
    let path = base + prefix + "images%2Fforest.jpg"

    // Get its metadata.
    let got = try Curl.request("GET", path)
    #expect(got.status == 200)
    #expect(got.json["name"] as? String == "images/forest.jpg")
    #expect(got.json["contentType"] as? String == "image/jpeg")
    #expect(got.json["size"] as? String == "11")
    #expect(got.json["md5Hash"] as? String == "XrY7u+Ae7tCTyyK7j1rNww==")
    #expect(got.json["crc32c"] as? String == (firebase ? "3381945770" : "yZRlqg=="))
    let generation = try #require(got.json["generation"] as? String)
    let metageneration = Int(got.json["metageneration"] as? String ?? "") ?? 0

    // Update some properties.
    let updated = try Curl.request(
      "PATCH", path, body: #"{"cacheControl":"public,max-age=300","contentType":"image/png"}"#,
      headers: ["Content-Type: application/json"])
    #expect(updated.status == 200)
    #expect(updated.json["cacheControl"] as? String == "public,max-age=300")
    #expect(updated.json["contentType"] as? String == "image/png")
    #expect(updated.json["generation"] as? String == generation)
    #expect(updated.json["metageneration"] as? String == String(metageneration + 1))

    // Delete a property with null.
    let nulled = try Curl.request("PATCH", path, body: #"{"contentType":null}"#)
    #expect(nulled.status == 200)
    #expect(nulled.json["contentType"] == nil)
    #expect(nulled.json["cacheControl"] as? String == "public,max-age=300")

    // Add custom key/values, then remove one.
    let custom = try Curl.request(
      "PATCH", path, body: #"{"metadata":{"location":"Yosemite, CA, USA","activity":"Hiking"}}"#)
    #expect((custom.json["metadata"] as? [String: String])?["activity"] == "Hiking")
    let removed = try Curl.request("PATCH", path, body: #"{"metadata":{"activity":null}}"#)
    let remaining = removed.json["metadata"] as? [String: String] ?? [:]
    #expect(remaining["activity"] == nil)
    #expect(remaining["location"] == "Yosemite, CA, USA")
    #expect(removed.json["metageneration"] as? String == String(metageneration + 4))

    // The bytes are untouched by all of that.
    let media = try Curl.request("GET", path + "?alt=media")
    #expect(media.status == 200)
    #expect(media.text == "hello world")
    #expect(media.header("x-goog-hash") == "crc32c=yZRlqg==,md5=XrY7u+Ae7tCTyyK7j1rNww==")

    let head = try Curl.request("HEAD", path)
    #expect(head.status == 200)
    #expect(head.body.isEmpty)
    #expect(Int(head.header("content-length") ?? "") ?? 0 > 100)

    let list = try Curl.request("GET", base + prefix.dropLast() + "?prefix=images%2F")
    #expect(list.status == 200)
    #expect((list.json["items"] as? [[String: Any]])?.first?["name"] as? String == "images/forest.jpg")

    #expect(try Curl.request("DELETE", path).status == 204)
    let gone = try Curl.request("GET", path)
    #expect(gone.status == 404)
    #expect((gone.json["error"] as? [String: Any])?["code"] as? Int == 404)
  }
}
