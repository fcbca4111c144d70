import Foundation
import Testing

/// The requests the Firebase Apple SDK sends (shared/docs/reference/client-protocol.md §A4–§A6),
/// replayed byte for byte on a raw socket, and the answers checked the way the SDK parses them.
@Suite struct AppleSDKReplayTests {
  static let sdkHeaders =
    "x-firebase-storage-version: ios/12.17.0\r\nx-firebase-gmpid: 1:123456789:ios:abcdef\r\n"
    + "User-Agent: MyApp/1 CFNetwork/1490 Darwin/23.0.0 (GTMSUF/1)\r\nAccept: */*\r\n"

  func exchange(_ socket: RawSocket, _ request: String) -> (head: String, body: Data) {
    socket.send(request)
    let response = socket.receiveResponses(1).first ?? ""
    guard let split = response.range(of: "\r\n\r\n") else { return (response, Data()) }
    return (String(response[..<split.lowerBound]), Data(response[split.upperBound...].utf8))
  }

  func header(_ head: String, _ name: String) -> String? {
    for line in head.split(separator: "\r\n") {
      let parts = line.split(separator: ":", maxSplits: 1)
      if parts.count == 2 && parts[0].lowercased() == name.lowercased() {
        return parts[1].trimmingCharacters(in: .whitespaces)
      }
    }
    return nil
  }

  /// `StorageMetadata.init(dictionary:)`: a dictionary; `metadata` as [String: String]; int64s
  /// readable by `Int64(string)`; dates in `yyyy-MM-dd'T'HH:mm:ss.SSSZZZZZ`.
  func checkParsesAsStorageMetadata(_ body: Data) throws -> [String: Any] {
    let dictionary = try #require(try JSONSerialization.jsonObject(with: body) as? [String: Any])
    #expect(dictionary["metadata"] as? [String: String] != nil)
    for key in ["size", "generation", "metageneration"] {
      #expect((dictionary[key] as? String).flatMap { Int64($0) } != nil, "\(key)")
    }
    let pattern = try Regex(#"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$"#)
    for key in ["timeCreated", "updated"] {
      #expect((dictionary[key] as? String)?.wholeMatch(of: pattern) != nil, "\(key)")
    }
    return dictionary
  }

  @Test func putDataGetMetadataUpdateMetadataListDownloadDelete() throws {
    let server = try RunningEmulator(inMemory: true)
    defer { server.stop() }
    let socket = try RawSocket(port: server.port)
    let host = "localhost:\(server.port)"

    // putData: start the upload.
    let startBody = #"{"bucket":"","contentType":"text/plain","metadata":null,"name":"dir/o.txt"}"#
    let start = exchange(
      socket,
      "POST /v0/b/demo.appspot.com/o/dir%2Fo.txt?uploadType=resumable&name=dir%2Fo.txt HTTP/1.1\r\nHost: \(host)\r\n"
        + "X-Goog-Upload-Protocol: resumable\r\nX-Goog-Upload-Command: start\r\n"
        + "X-Goog-Upload-Content-Type: text/plain\r\nX-Goog-Upload-Content-Length: 11\r\n"
        + "Content-Type: application/json; charset=UTF-8\r\n" + Self.sdkHeaders
        + "Content-Length: \(startBody.utf8.count)\r\n\r\n" + startBody)
    #expect(start.head.hasPrefix("HTTP/1.1 200"))
    #expect(start.body.isEmpty)
    #expect(header(start.head, "X-Goog-Upload-Status") == "active")
    let uploadURL = try #require(header(start.head, "X-Goog-Upload-URL"))
    #expect(uploadURL.hasPrefix("http://\(host)/v0/b/demo.appspot.com/o?"))
    let uploadPath = String(uploadURL.dropFirst("http://\(host)".count))

    // The chunk: no Authorization, `upload, finalize` in one request.
    let final = exchange(
      socket,
      "PUT \(uploadPath) HTTP/1.1\r\nHost: \(host)\r\nX-Goog-Upload-Protocol: resumable\r\n"
        + "X-Goog-Upload-Command: upload, finalize\r\nX-Goog-Upload-Offset: 0\r\n"
        + "X-Goog-Upload-Content-Length: 11\r\nUser-Agent: MyApp (GTMSUF/1)\r\nContent-Length: 11\r\n\r\nhello world")
    #expect(final.head.hasPrefix("HTTP/1.1 200"))
    #expect(header(final.head, "X-Goog-Upload-Status") == "final")
    let uploaded = try checkParsesAsStorageMetadata(final.body)
    #expect(uploaded["name"] as? String == "dir/o.txt")
    #expect(uploaded["contentType"] as? String == "text/plain")

    // getMetadata, then downloadURL needs downloadTokens.
    let got = exchange(
      socket, "GET /v0/b/demo.appspot.com/o/dir%2Fo.txt HTTP/1.1\r\nHost: \(host)\r\n" + Self.sdkHeaders + "\r\n")
    let metadata = try checkParsesAsStorageMetadata(got.body)
    let token = try #require((metadata["downloadTokens"] as? String)?.split(separator: ",").first)

    // updateMetadata: the diff body, full of nulls for keys the model does not hold.
    let diff =
      #"{"bucket":"","cacheControl":"max-age=60","contentLanguage":null,"metadata":{"k":"v"},"size":11,"#
      + #""kind":null,"etag":null,"downloadTokens":null,"timeCreated":null,"selfLink":null,"crc32c":null}"#
    let updated = exchange(
      socket,
      "PATCH /v0/b/demo.appspot.com/o/dir%2Fo.txt HTTP/1.1\r\nHost: \(host)\r\n"
        + "Content-Type: application/json; charset=UTF-8\r\n" + Self.sdkHeaders
        + "Content-Length: \(diff.utf8.count)\r\n\r\n" + diff)
    #expect(updated.head.hasPrefix("HTTP/1.1 200"))
    let afterUpdate = try checkParsesAsStorageMetadata(updated.body)
    #expect(afterUpdate["cacheControl"] as? String == "max-age=60")
    #expect(afterUpdate["metadata"] as? [String: String] == ["k": "v"])
    #expect(afterUpdate["downloadTokens"] as? String == metadata["downloadTokens"] as? String)

    // list(maxResults:): every item must be [String: String] or the SDK drops them all.
    let list = exchange(
      socket,
      "GET /v0/b/demo.appspot.com/o?prefix=dir/&delimiter=/&maxResults=10 HTTP/1.1\r\nHost: \(host)\r\n"
        + Self.sdkHeaders + "\r\n")
    let listed = try #require(try JSONSerialization.jsonObject(with: list.body) as? [String: Any])
    let items = try #require(listed["items"] as? [[String: String]])
    #expect(items == [["name": "dir/o.txt", "bucket": "demo.appspot.com"]])
    #expect(listed["prefixes"] as? [String] == [])

    // The download URL the SDK builds.
    let media = exchange(
      socket,
      "GET /v0/b/demo.appspot.com/o/dir%2Fo.txt?alt=media&token=\(token) HTTP/1.1\r\nHost: \(host)\r\n\r\n")
    #expect(String(decoding: media.body, as: UTF8.self) == "hello world")

    let deleted = exchange(
      socket, "DELETE /v0/b/demo.appspot.com/o/dir%2Fo.txt HTTP/1.1\r\nHost: \(host)\r\n" + Self.sdkHeaders + "\r\n")
    #expect(deleted.head.hasPrefix("HTTP/1.1 204"))
    let missing = exchange(
      socket, "GET /v0/b/demo.appspot.com/o/dir%2Fo.txt HTTP/1.1\r\nHost: \(host)\r\n" + Self.sdkHeaders + "\r\n")
    #expect(missing.head.hasPrefix("HTTP/1.1 404"))
  }
}
