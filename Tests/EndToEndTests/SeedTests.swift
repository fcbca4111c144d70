import EmulatorStorage
import Foundation
import Testing

@testable import EmulatorApp

/// `--seed DIR`: a folder tree loaded as objects, idempotently, with sidecar metadata.
@Suite struct SeedTests {
  /// A seed tree in a fresh folder:
  ///   photos/a.txt, photos/img/pic.png (+ sidecar), photos/orphan.meta.json (an object: no `orphan`),
  ///   big/deep/x/y/z.bin (2 MiB, copied rather than moved), stray.txt (no bucket), Bad_Bucket/…,
  ///   photos/bad.json (+ a sidecar that is not JSON).
  static func makeTree() throws -> URL {
    let root = FileManager.default.temporaryDirectory.appendingPathComponent("se-seed-\(UUID().uuidString)")
    func write(_ path: String, _ bytes: [UInt8]) throws {
      let url = root.appendingPathComponent(path)
      try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
      try Data(bytes).write(to: url)
    }
    try write("photos/a.txt", Array("hello world".utf8))
    try write("photos/img/pic.png", [0x89, 0x50, 0x4E, 0x47])
    try write(
      "photos/img/pic.png.meta.json",
      Array(#"{"cacheControl":"no-cache","contentType":"image/x-custom","metadata":{"k":"v","n":5}}"#.utf8))
    try write("photos/orphan.meta.json", Array("{}".utf8))
    try write("big/deep/x/y/z.bin", (0..<(2 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 31) })
    try write("stray.txt", [1])
    try write("Bad_Bucket/x.txt", [1])
    try write("photos/bad.json", Array("{}".utf8))
    try write("photos/bad.json.meta.json", Array("{not json".utf8))
    return root
  }

  @Test func seedLoadsBucketsObjectsContentTypesAndSidecarsOverSockets() throws {
    let tree = try Self.makeTree()
    defer { try? FileManager.default.removeItem(at: tree) }
    let server = try RunningEmulator { $0.seedDirectory = tree.path }
    defer {
      server.stop()
      server.removeFolder()
    }
    let base = server.base
    let text = try Curl.request("GET", base + "/storage/v1/b/photos/o/a.txt")
    #expect(text.json["contentType"] as? String == "text/plain")
    #expect(text.json["md5Hash"] as? String == "XrY7u+Ae7tCTyyK7j1rNww==")
    let pic = try Curl.request("GET", base + "/storage/v1/b/photos/o/img%2Fpic.png")
    #expect(pic.json["contentType"] as? String == "image/x-custom")
    #expect(pic.json["cacheControl"] as? String == "no-cache")
    #expect(pic.json["metadata"] as? [String: String] == ["k": "v", "n": "5"])
    #expect(try Curl.request("GET", base + "/storage/v1/b/photos/o/orphan.meta.json").json["contentType"] as? String
      == "application/json")
    // The sidecars are not objects of their own.
    #expect(try Curl.request("GET", base + "/storage/v1/b/photos/o/img%2Fpic.png.meta.json").status == 404)
    let big = try Curl.request("GET", base + "/storage/v1/b/big/o/deep%2Fx%2Fy%2Fz.bin?alt=media")
    #expect(big.body.count == 2 << 20)
    #expect(big.body == (0..<(2 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 31) })
    #expect(FileManager.default.fileExists(atPath: tree.appendingPathComponent("big/deep/x/y/z.bin").path))
    // What could not be seeded is not there; the rest is.
    #expect(try Curl.request("GET", base + "/storage/v1/b/Bad_Bucket").status != 200)
    #expect(try Curl.request("GET", base + "/storage/v1/b/photos/o/bad.json").status == 404)
    let buckets = try Curl.request("GET", base + "/storage/v1/b").json["items"] as? [[String: Any]] ?? []
    #expect(buckets.compactMap { $0["name"] as? String } == ["big", "photos"])
  }

  @Test func seedingTwiceChangesNothingAndAChangedFileOrSidecarIsLoadedAgain() throws {
    let tree = try Self.makeTree()
    defer { try? FileManager.default.removeItem(at: tree) }
    let store = try ObjectStore(backend: MemoryBackend())
    let spool = FileManager.default.temporaryDirectory.path
    let lines = CollectedLines()
    var loader = SeedLoader(store: store, spoolDirectory: spool, log: { line in lines.sink.append(Array(line.utf8)) })
    let first = try loader.load(from: tree.path)
    #expect(first.loaded == 4)  // a.txt, img/pic.png, orphan.meta.json, deep/x/y/z.bin
    #expect(first.unchanged == 0)
    #expect(first.skipped == 3)  // stray.txt, Bad_Bucket, bad.json
    #expect(first.bytes == 11 + 4 + 2 + (2 << 20))
    #expect(first.buckets == 2)
    let before = try store.metadata(bucket: "photos", name: "img/pic.png")
    let bigBefore = try store.metadata(bucket: "big", name: "deep/x/y/z.bin")

    // A Firebase read adds a download token meanwhile: still unchanged.
    _ = try store.ensureDownloadToken(bucket: "photos", name: "a.txt")
    let second = try loader.load(from: tree.path)
    #expect(second.loaded == 0)
    #expect(second.unchanged == 4)
    #expect(try store.metadata(bucket: "photos", name: "img/pic.png") == before)
    #expect(try store.metadata(bucket: "big", name: "deep/x/y/z.bin").generation == bigBefore.generation)

    try Data(#"{"cacheControl":"max-age=5"}"#.utf8).write(to: tree.appendingPathComponent("photos/img/pic.png.meta.json"))
    try Data("changed".utf8).write(to: tree.appendingPathComponent("photos/a.txt"))
    loader.progressEvery = 0
    let third = try loader.load(from: tree.path)
    #expect(third.loaded == 2)
    #expect(third.unchanged == 2)
    let after = try store.metadata(bucket: "photos", name: "img/pic.png")
    #expect(after.generation > before.generation)
    #expect(after.cacheControl == "max-age=5")
    #expect(after.contentType == "image/png")  // from the extension again: the sidecar no longer names one
    #expect(after.custom.isEmpty)
    #expect(try store.read(bucket: "photos", name: "a.txt").1 == Array("changed".utf8))

    let log = lines.all()
    #expect(log.contains { $0.hasPrefix("seed: 4 objects loaded, 0 unchanged, 3 skipped") && $0.contains("2 buckets") })
    #expect(log.contains { $0.contains("seed: skipped") && $0.contains("bad.json.meta.json is not JSON") })
    #expect(log.contains { $0.contains("so far…") })
  }

  @Test func aMissingSeedFolderIsAClearStartUpError() {
    var configuration = EmulatorConfiguration()
    configuration.inMemory = true
    configuration.seedDirectory = "/nonexistent-seed-folder-\(UUID().uuidString)"
    #expect(throws: StorageError.self) { try makeEmulator(configuration) }
  }

  @Test func contentTypesComeFromTheExtension() {
    #expect(ContentTypes.forName("a/b/photo.JPG") == "image/jpeg")
    #expect(ContentTypes.forName("index.html") == "text/html")
    #expect(ContentTypes.forName("archive.tar.gz") == "application/gzip")
    #expect(ContentTypes.forName(".hidden") == "application/octet-stream")
    #expect(ContentTypes.forName("noext") == "application/octet-stream")
    #expect(ContentTypes.forName("dir.d/file") == "application/octet-stream")
  }
}
