import EmulatorStorage
import Foundation
import Testing

@testable import EmulatorAPI
@testable import EmulatorHTTP

/// A small upload is written on the connection's thread (no hand-off to a lane and back) only
/// when nothing in it waits for the disk: its body is in memory and at most
/// `StorageAPI.inlineWriteBytes`, and the store does not sync writes. Everything else that may
/// block goes to a lane.
@Suite struct UploadExecutionTests {
  final class Fixture {
    let folder: URL
    let api: StorageAPI

    init(fsync: Bool) throws {
      folder = FileManager.default.temporaryDirectory.appendingPathComponent("se-exec-\(UUID().uuidString)")
      let backend = try FileBackend(root: folder, fsync: fsync)
      var limits = APILimits()
      limits.lenientBuckets = true
      api = StorageAPI(
        store: try ObjectStore(backend: backend),
        sessions: UploadSessions(space: try backend.uploadSpace(.sessions)), limits: limits)
    }

    deinit { try? FileManager.default.removeItem(at: folder) }

    /// How the API starts the request, and its response when it answered at once.
    func start(_ method: String, _ target: String, body: [UInt8] = [], file: SpooledFile? = nil,
      headers: [(String, String)] = []) -> (kind: String, status: Int)
    {
      var head = HTTPRequestHead(method: method, target: target, headers: ["host": "localhost:9199"])
      for (name, value) in headers { head.headers.add(name, value) }
      let handling = api.start(HTTPRequest(head: head, body: body, bodyFile: file))
      switch handling {
      case .respond(let response): return ("inline", response.status)
      case .blocking: return ("lane", handling.wait().status)
      case .deferred: return ("deferred", handling.wait().status)
      }
    }
  }

  static let multipartBody = Array(
    "--b\r\nContent-Type: application/json\r\n\r\n{\"name\":\"m\"}\r\n--b\r\n\r\ndata\r\n--b--\r\n".utf8)

  @Test func smallUploadsOfEveryKindAreWrittenWhereTheyArrived() throws {
    let fixture = try Fixture(fsync: false)
    let media = fixture.start("POST", "/upload/storage/v1/b/bkt/o?uploadType=media&name=a", body: [1, 2, 3])
    #expect(media.kind == "inline" && media.status == 200)
    let multipart = fixture.start(
      "POST", "/upload/storage/v1/b/bkt/o?uploadType=multipart", body: Self.multipartBody,
      headers: [("content-type", "multipart/related; boundary=b")])
    #expect(multipart.kind == "inline" && multipart.status == 200)
    let firebase = fixture.start("POST", "/v0/b/bkt/o?name=f", body: [4])
    #expect(firebase.kind == "inline" && firebase.status == 200)
    let firebaseNamed = fixture.start("POST", "/v0/b/bkt/o/g", body: [5])
    #expect(firebaseNamed.kind == "inline" && firebaseNamed.status == 200)
    // Written, not only answered.
    let (object, bytes) = try fixture.api.store.read(bucket: "bkt", name: "a")
    #expect(object.size == 3 && bytes == [1, 2, 3])
    #expect(try fixture.api.store.read(bucket: "bkt", name: "m").1 == Array("data".utf8))
  }

  @Test func aBodyPastTheInlineLimitGoesToALane() throws {
    let fixture = try Fixture(fsync: false)
    let limit = StorageAPI.inlineWriteBytes
    let atLimit = fixture.start(
      "POST", "/upload/storage/v1/b/bkt/o?uploadType=media&name=a", body: [UInt8](repeating: 1, count: limit))
    #expect(atLimit.kind == "inline" && atLimit.status == 200)
    let past = fixture.start(
      "POST", "/upload/storage/v1/b/bkt/o?uploadType=media&name=b", body: [UInt8](repeating: 2, count: limit + 1))
    #expect(past.kind == "lane" && past.status == 200)
  }

  @Test func aSpooledBodyGoesToALane() throws {
    let fixture = try Fixture(fsync: false)
    let path = fixture.folder.path + "/tmp/spooled"
    try Data([7, 8]).write(to: URL(fileURLWithPath: path))
    let spooled = fixture.start(
      "POST", "/upload/storage/v1/b/bkt/o?uploadType=media&name=s", file: SpooledFile(path: path, size: 2))
    #expect(spooled.kind == "lane" && spooled.status == 200)
    #expect(try fixture.api.store.read(bucket: "bkt", name: "s").1 == [7, 8])
  }

  /// With `fsync` no upload is written on the connection's thread: a small one waits for the
  /// disk on a sync lane (answered through a responder), a spooled one on a blocking lane.
  @Test func withFsyncNoUploadIsWrittenOnTheConnectionsThread() throws {
    let fixture = try Fixture(fsync: true)
    let media = fixture.start("POST", "/upload/storage/v1/b/bkt/o?uploadType=media&name=a", body: [1])
    #expect(media.kind == "deferred" && media.status == 200)
    let firebase = fixture.start("POST", "/v0/b/bkt/o?name=f", body: [4])
    #expect(firebase.kind == "deferred" && firebase.status == 200)
    let past = fixture.start(
      "POST", "/upload/storage/v1/b/bkt/o?uploadType=media&name=b",
      body: [UInt8](repeating: 2, count: StorageAPI.inlineWriteBytes + 1))
    #expect(past.kind == "lane" && past.status == 200)
    #expect(try fixture.api.store.read(bucket: "bkt", name: "a").1 == [1])
  }

  /// A chunk is small but its finalize may digest and move a large session's bytes.
  @Test func resumableChunksGoToALane() throws {
    let fixture = try Fixture(fsync: false)
    var head = HTTPRequestHead(
      method: "POST", target: "/upload/storage/v1/b/bkt/o?uploadType=resumable&name=r",
      headers: ["host": "localhost:9199"])
    head.headers.add("content-type", "application/json")
    let started = fixture.api.answer(HTTPRequest(head: head, body: Array("{}".utf8)))
    let location = try #require(started.headers["location"])
    let target = String(location[location.range(of: "localhost:9199")!.upperBound...])
    let chunk = fixture.start("PUT", target, body: [1, 2])
    #expect(chunk.kind == "lane" && chunk.status == 200)
  }
}
