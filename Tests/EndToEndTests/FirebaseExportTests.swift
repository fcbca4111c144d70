import EmulatorStorage
import Foundation
import Testing

@testable import EmulatorApp

/// `--import`, `POST /internal/export` and `--export-on-exit` in the Firebase emulator suite's
/// format. The fixtures reproduce the layouts of the Firebase emulator's integration-test folders
/// (`flattened-emulator-data`, `nested-…`, `mapped-…`, `windows-…`,
/// `…-missing-blobs-and-metadata`), with its metadata document.
@Suite struct FirebaseExportTests {
  static let bucket = "fake-project-id.appspot.com"

  /// The metadata document of the Firebase fixtures' `test_upload.jpg` (an empty file).
  static func fixtureMetadata(name: String = "test_upload.jpg") -> String {
    """
    {
      "name": "\(name.replacingOccurrences(of: "\\", with: "\\\\"))",
      "bucket": "\(bucket)",
      "contentType": "application/octet-stream",
      "metageneration": 1,
      "generation": 1648084940926,
      "storageClass": "STANDARD",
      "contentDisposition": "inline",
      "cacheControl": "public, max-age=3600",
      "contentEncoding": "identity",
      "downloadTokens": [
        "c3c71086-95a8-445d-96e7-f625972de4b0"
      ],
      "etag": "PQJQBXRweACX9yRsBEInQjOJ/0s",
      "timeCreated": "2022-03-24T01:22:20.926Z",
      "updated": "2022-03-24T01:22:20.926Z",
      "size": 0,
      "md5Hash": "1B2M2Y8AsgTpgAmY7PhCfg==",
      "crc32c": "0"
    }
    """
  }

  /// An export folder with the Firebase CLI's metadata file and the given storage files.
  static func makeExport(_ files: [String: String], withBuckets: Bool = true) throws -> URL {
    let root = FileManager.default.temporaryDirectory.appendingPathComponent("se-export-\(UUID().uuidString)")
    var all = files
    all["firebase-export-metadata.json"] =
      #"{"version": "10.4.2", "storage": {"version": "10.4.2", "path": "storage_export"}}"#
    if withBuckets { all["storage_export/buckets.json"] = #"{"buckets": [{"id": "\#(bucket)"}]}"# }
    for (path, text) in all {
      let url = root.appendingPathComponent(path)
      try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
      try Data(text.utf8).write(to: url)
    }
    return root
  }

  func withImported(_ export: URL, _ body: (RunningEmulator) throws -> Void) throws {
    defer { try? FileManager.default.removeItem(at: export) }
    let server = try RunningEmulator { $0.importDirectory = export.path }
    defer {
      server.stop()
      server.removeFolder()
    }
    try body(server)
  }

  @Test func importsTheFlattenedEmulatorDataFixture() throws {
    let export = try Self.makeExport([
      "storage_export/blobs/\(Self.bucket)%2Ftest_upload.jpg": "",
      "storage_export/metadata/\(Self.bucket)%2Ftest_upload.jpg.json": Self.fixtureMetadata(),
    ])
    try withImported(export) { server in
      let got = try Curl.request(
        "GET", server.base + "/v0/b/\(Self.bucket)/o/test_upload.jpg", headers: ["Authorization: Bearer owner"])
      #expect(got.status == 200)
      #expect(got.json["downloadTokens"] as? String == "c3c71086-95a8-445d-96e7-f625972de4b0")
      #expect(got.json["generation"] as? String == "1648084940926")
      #expect(got.json["metageneration"] as? String == "1")
      #expect(got.json["cacheControl"] as? String == "public, max-age=3600")
      #expect(got.json["contentDisposition"] as? String == "inline")
      #expect(got.json["timeCreated"] as? String == "2022-03-24T01:22:20.926Z")
      #expect(got.json["md5Hash"] as? String == "1B2M2Y8AsgTpgAmY7PhCfg==")
      #expect(got.json["crc32c"] as? String == "0")
      #expect(got.json["size"] as? String == "0")
      let media = try Curl.request(
        "GET", server.base + "/v0/b/\(Self.bucket)/o/test_upload.jpg?alt=media&token=c3c71086-95a8-445d-96e7-f625972de4b0")
      #expect(media.status == 200)
      #expect(media.body.isEmpty)
    }
  }

  @Test func importsTheNestedMappedAndWindowsLayouts() throws {
    let export = try Self.makeExport([
      // nested-emulator-data
      "storage_export/blobs/\(Self.bucket)/nested.jpg": "nested",
      "storage_export/metadata/\(Self.bucket)/nested.jpg.json": Self.fixtureMetadata(name: "nested.jpg"),
      // mapped-emulator-data: the current Firebase emulator names files by a UUID
      "storage_export/blobs/eaa2803e-4374-44bd-98cb-cdd7d31e3347": "mapped",
      "storage_export/metadata/eaa2803e-4374-44bd-98cb-cdd7d31e3347.json": Self.fixtureMetadata(name: "mapped.jpg"),
      // windows-emulator-data
      "storage_export/blobs/\(Self.bucket)%5Ctest-directory%5Ctest_nested_upload.jpg": "windows",
      "storage_export/metadata/\(Self.bucket)%5Ctest-directory%5Ctest_nested_upload.jpg.json":
        Self.fixtureMetadata(name: "test-directory\\test_nested_upload.jpg"),
      // a metadata file without its blob, and a stray file: skipped
      "storage_export/metadata/no-blob.json": Self.fixtureMetadata(name: "no-blob"),
      "storage_export/metadata/README": "x",
    ])
    try withImported(export) { server in
      let base = server.base + "/v0/b/\(Self.bucket)/o/"
      #expect(try Curl.request("GET", base + "nested.jpg?alt=media").text == "nested")
      #expect(try Curl.request("GET", base + "mapped.jpg?alt=media").text == "mapped")
      #expect(try Curl.request("GET", base + "test-directory%2Ftest_nested_upload.jpg?alt=media").text == "windows")
      #expect(try Curl.request("GET", base + "no-blob").status == 404)
      // Size and hashes come from the blob, not the metadata's claims.
      let nested = try Curl.request("GET", base + "nested.jpg")
      #expect(nested.json["size"] as? String == "6")
      #expect(nested.json["md5Hash"] as? String != "1B2M2Y8AsgTpgAmY7PhCfg==")
    }
  }

  @Test func anExportWithoutBlobsAndMetadataImportsItsBucketsOnly() throws {
    let export = try Self.makeExport([:])
    try withImported(export) { server in
      let bucket = try Curl.request("GET", server.base + "/storage/v1/b/\(Self.bucket)")
      #expect(bucket.status == 200)
      #expect((try Curl.request("GET", server.base + "/internal/info").json["objectCount"] as? Int) == 0)
    }
  }

  @Test func aFolderThatIsNoExportIsAClearStartUpError() throws {
    let empty = FileManager.default.temporaryDirectory.appendingPathComponent("se-noexport-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: empty, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: empty) }
    var configuration = EmulatorConfiguration()
    configuration.inMemory = true
    configuration.importDirectory = empty.path
    #expect(throws: StorageError.self) { try makeEmulator(configuration) }
    configuration.importDirectory = empty.appendingPathComponent("missing").path
    #expect(throws: StorageError.self) { try makeEmulator(configuration) }
  }

  /// Every field of the GCS resource but the links and id, which name the host and port.
  static func comparable(_ json: [String: Any]) -> NSDictionary {
    var copy = json
    for key in ["selfLink", "mediaLink", "id"] { copy[key] = nil }
    return copy as NSDictionary
  }

  @Test func exportThenImportRoundTripsEveryObjectAndItsMetadata() throws {
    let source = try RunningEmulator()
    defer {
      source.stop()
      source.removeFolder()
    }
    let base = source.base
    let names = ["plain.txt", "dir/nested/file.bin", "日本語/ファイル.txt", "big.bin", "a b+c%2Fd", "composed"]
    #expect(try Curl.request("POST", base + "/v0/b/app.appspot.com/o?name=plain.txt", body: "firebase upload",
      headers: ["Content-Type: text/plain"]).status == 200)
    #expect(try Curl.request("POST", base + "/upload/storage/v1/b/app.appspot.com/o?uploadType=media&name=dir%2Fnested%2Ffile.bin",
      body: "gcs upload").status == 200)
    #expect(try Curl.request("POST", base + "/v0/b/app.appspot.com/o?name=%E6%97%A5%E6%9C%AC%E8%AA%9E%2F%E3%83%95%E3%82%A1%E3%82%A4%E3%83%AB.txt",
      body: "unicode").status == 200)
    let big = String(repeating: "0123456789abcdef", count: 1 << 17)  // 2 MiB
    #expect(try Curl.request("POST", base + "/upload/storage/v1/b/other/o?uploadType=media&name=big.bin", body: big).status == 200)
    #expect(try Curl.request("POST", base + "/upload/storage/v1/b/other/o?uploadType=media&name=a%20b%2Bc%252Fd", body: "odd").status == 200)
    #expect(try Curl.request("POST", base + "/storage/v1/b/other/o/composed/compose",
      body: #"{"sourceObjects":[{"name":"big.bin"},{"name":"a b+c%2Fd"}]}"#).status == 200)
    #expect(try Curl.request("POST", base + "/storage/v1/b?project=p", body: #"{"name":"empty-bucket"}"#).status == 200)
    for patch in [
      #"{"cacheControl":"no-cache","contentLanguage":"en","metadata":{"k":"v","n":"5"}}"#,
      #"{"customTime":"2024-01-02T03:04:05.678Z","contentDisposition":"attachment"}"#,
    ] {
      #expect(try Curl.request("PATCH", base + "/storage/v1/b/app.appspot.com/o/dir%2Fnested%2Ffile.bin", body: patch).status == 200)
    }

    let folder = source.folder.appendingPathComponent("export")
    let exported = try Curl.request("POST", base + "/internal/export", body: #"{"path":"\#(folder.path)"}"#)
    #expect(exported.status == 200)
    #expect(exported.json["objects"] as? Int == names.count)
    #expect(exported.json["buckets"] as? Int == 3)
    let meta = try JSONSerialization.jsonObject(
      with: Data(contentsOf: folder.appendingPathComponent("firebase-export-metadata.json"))) as? [String: Any]
    #expect((meta?["storage"] as? [String: Any])?["path"] as? String == "storage_export")
    let bucketList = try JSONSerialization.jsonObject(
      with: Data(contentsOf: folder.appendingPathComponent("storage_export/buckets.json"))) as? [String: Any]
    #expect((bucketList?["buckets"] as? [[String: Any]])?.compactMap { $0["id"] as? String }
      == ["app.appspot.com", "empty-bucket", "other"])
    let blobs = try FileManager.default.contentsOfDirectory(atPath: folder.appendingPathComponent("storage_export/blobs").path)
    #expect(blobs.count == names.count)
    #expect(blobs.contains("app.appspot.com%2Fdir%2Fnested%2Ffile.bin"))
    // The metadata documents have what the Firebase emulator's StoredFileMetadata requires.
    let document = try JSONSerialization.jsonObject(with: Data(contentsOf: folder.appendingPathComponent(
      "storage_export/metadata/app.appspot.com%2Fdir%2Fnested%2Ffile.bin.json"))) as? [String: Any] ?? [:]
    #expect(document["name"] as? String == "dir/nested/file.bin")
    #expect(document["size"] as? Int == 10)
    #expect(document["metageneration"] as? Int == 3)
    #expect(document["crc32c"] is String)
    #expect(document["md5Hash"] is String)
    #expect(document["customMetadata"] as? [String: String] == ["k": "v", "n": "5"])
    let composedDocument = try JSONSerialization.jsonObject(with: Data(contentsOf: folder.appendingPathComponent(
      "storage_export/metadata/other%2Fcomposed.json"))) as? [String: Any] ?? [:]
    #expect(composedDocument["md5Hash"] is String)

    let copy = try RunningEmulator { $0.importDirectory = folder.path }
    defer {
      copy.stop()
      copy.removeFolder()
    }
    let buckets = try Curl.request("GET", copy.base + "/storage/v1/b").json["items"] as? [[String: Any]] ?? []
    #expect(buckets.compactMap { $0["name"] as? String } == ["app.appspot.com", "empty-bucket", "other"])
    for (bucket, name) in [("app.appspot.com", "plain.txt"), ("app.appspot.com", "dir/nested/file.bin"),
      ("app.appspot.com", "日本語/ファイル.txt"), ("other", "big.bin"), ("other", "a b+c%2Fd"), ("other", "composed")]
    {
      let escaped = name.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
      // A Firebase read of an object without a download token adds one (a change): only the
      // Firebase uploads, which have theirs, are read on that surface too.
      let surfaces = ["plain.txt", "日本語/ファイル.txt"].contains(name) ? ["/storage/v1/b/", "/v0/b/"] : ["/storage/v1/b/"]
      for surface in surfaces {
        let before = try Curl.request("GET", base + surface + bucket + "/o/" + escaped)
        let after = try Curl.request("GET", copy.base + surface + bucket + "/o/" + escaped)
        #expect(before.status == 200)
        #expect(Self.comparable(before.json) == Self.comparable(after.json), "\(surface) \(name)")
      }
      let bytesBefore = try Curl.request("GET", base + "/storage/v1/b/" + bucket + "/o/" + escaped + "?alt=media")
      let bytesAfter = try Curl.request("GET", copy.base + "/storage/v1/b/" + bucket + "/o/" + escaped + "?alt=media")
      #expect(bytesBefore.body == bytesAfter.body)
    }

    // Exporting the import gives the same documents again.
    let second = copy.folder.appendingPathComponent("export-again")
    #expect(try Curl.request("POST", copy.base + "/internal/export", body: #"{"path":"\#(second.path)"}"#).status == 200)
    for file in blobs {
      let a = try Data(contentsOf: folder.appendingPathComponent("storage_export/metadata/\(file).json"))
      let b = try Data(contentsOf: second.appendingPathComponent("storage_export/metadata/\(file).json"))
      #expect(a == b, "\(file)")
    }
  }

  @Test func importingTheSameExportTwiceKeepsGenerations() throws {
    let export = try Self.makeExport([
      "storage_export/blobs/x": "",
      "storage_export/metadata/x.json": Self.fixtureMetadata(),
    ])
    defer { try? FileManager.default.removeItem(at: export) }
    let first = try RunningEmulator { $0.importDirectory = export.path }
    defer { first.removeFolder() }
    #expect(try Curl.request("PATCH", first.base + "/v0/b/\(Self.bucket)/o/other-never", body: "{}").status == 404)
    first.stop()
    let second = try RunningEmulator(folder: first.folder) { $0.importDirectory = export.path }
    defer { second.stop() }
    let got = try Curl.request("GET", second.base + "/storage/v1/b/\(Self.bucket)/o/test_upload.jpg")
    #expect(got.json["generation"] as? String == "1648084940926")
  }

  @Test func exportOnExitWritesTheExportWhenTheEmulatorStops() throws {
    let target = FileManager.default.temporaryDirectory.appendingPathComponent("se-exit-\(UUID().uuidString)")
    defer { try? FileManager.default.removeItem(at: target) }
    let server = try RunningEmulator(inMemory: true) { $0.exportOnExit = target.path }
    defer { server.removeFolder() }
    #expect(try Curl.request("POST", server.base + "/v0/b/bk1/o?name=a%2Fb", body: "bytes").status == 200)
    #expect(!FileManager.default.fileExists(atPath: target.path))
    server.stop()
    let blob = target.appendingPathComponent("storage_export/blobs/bk1%2Fa%2Fb")
    #expect(try Data(contentsOf: blob) == Data("bytes".utf8))
    #expect(FileManager.default.fileExists(atPath: target.appendingPathComponent("firebase-export-metadata.json").path))
  }

  @Test func exportRequestsWithoutAPathOrToAFileAreJSONErrors() throws {
    let server = try RunningEmulator(inMemory: true)
    defer {
      server.stop()
      server.removeFolder()
    }
    let missing = try Curl.request("POST", server.base + "/internal/export", body: "{}")
    #expect(missing.status == 400)
    #expect((missing.json["error"] as? [String: Any])?["message"] as? String == "Export request body must include 'path'.")
    #expect(try Curl.request("POST", server.base + "/internal/export", body: "{oops").status == 400)
    #expect(try Curl.request("POST", server.base + "/internal/export", body: #"{"path":5}"#).status == 400)
    let file = server.folder.appendingPathComponent("a-file")
    try Data("x".utf8).write(to: file)
    let blocked = try Curl.request("POST", server.base + "/internal/export", body: #"{"path":"\#(file.path)"}"#)
    #expect(blocked.status == 500)
    #expect((blocked.json["error"] as? [String: Any])?["message"] is String)
  }
}
