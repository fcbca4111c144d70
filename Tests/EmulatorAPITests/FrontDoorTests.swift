import EmulatorHTTP
import EmulatorStorage
import Foundation
import Testing

@testable import EmulatorAPI

/// The emulator's own routes in front of the storage API, without sockets.
@Suite struct FrontDoorTests {
  let door: FrontDoor

  init() throws {
    let store = try ObjectStore(backend: MemoryBackend())
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("se-door-\(UUID().uuidString)")
    let api = StorageAPI(store: store, sessions: try UploadSessions(directory: folder))
    door = FrontDoor(
      api: api,
      routes: [
        RouteEntry("GET", "/internal/ping", .memory) { _ in HTTPResponse.json(Array(#"{"pong":true}"#.utf8)) },
        RouteEntry("POST", "/internal/echo") { request in HTTPResponse.json(request.body) },
        RouteEntry("PUT", "/internal/echo") { _ in HTTPResponse(status: 204) },
      ])
  }

  func call(_ method: String, _ target: String, _ body: String = "") -> HTTPResponse {
    door.handle(HTTPRequest(head: HTTPRequestHead(method: method, target: target), body: Array(body.utf8)))
  }

  @Test func extraRoutesAnswerByMethodAndPath() {
    #expect(String(decoding: call("GET", "/internal/ping").body, as: UTF8.self) == #"{"pong":true}"#)
    #expect(String(decoding: call("POST", "/internal/echo", "[1]").body, as: UTF8.self) == "[1]")
    #expect(call("PUT", "/internal/echo").status == 204)
    // The query does not take part in the match.
    #expect(call("GET", "/internal/ping?x=1").status == 200)
  }

  @Test func unknownInternalPathIsAJSON404AndWrongMethodA405WithAllow() throws {
    let missing = call("GET", "/internal/nothing")
    #expect(missing.status == 404)
    #expect(try JSONValue.parse(missing.body)["error"]?["code"] == .number("404"))
    let wrong = call("DELETE", "/internal/echo")
    #expect(wrong.status == 405)
    #expect(wrong.headers["allow"] == "POST, PUT")
  }

  @Test func inlineRoutesAreAnsweredAtOnceAndOthersOnALane() {
    let ping = door.start(HTTPRequest(head: HTTPRequestHead(method: "GET", target: "/internal/ping")))
    guard case .respond(let response) = ping else {
      Issue.record("an inline route must be answered at once")
      return
    }
    #expect(response.status == 200)
    let echo = door.start(HTTPRequest(head: HTTPRequestHead(method: "POST", target: "/internal/echo")))
    guard case .blocking = echo else {
      Issue.record("a blocking route must run on a lane")
      return
    }
  }

  @Test func storageRequestsStillReachTheAPI() {
    #expect(call("POST", "/storage/v1/b?project=p", #"{"name":"bkt"}"#).status == 200)
    #expect(call("GET", "/storage/v1/b/bkt").status == 200)
    #expect(call("GET", "/v0/b/bkt/o").status == 200)
    // A path that only looks like an internal one is the API's 404.
    #expect(call("GET", "/internalx").status == 404)
  }

  @Test func internalBodiesAreLimitedLikeMetadata() {
    let head = HTTPRequestHead(method: "POST", target: "/internal/echo")
    #expect(door.bodyLimit(for: head) == door.api.limits.maxMetadataBytes)
    let upload = HTTPRequestHead(method: "POST", target: "/upload/storage/v1/b/x/o?uploadType=media&name=a")
    #expect(door.bodyLimit(for: upload) == door.api.limits.maxUploadBytes)
  }
}

/// Routes of one path segment (`/`, `/ui`) take only their own methods.
@Suite struct FrontDoorSingleSegmentTests {
  @Test func aRootRouteTakesItsMethodAndLeavesTheRestToTheAPI() throws {
    let store = try ObjectStore(backend: MemoryBackend())
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("se-door-\(UUID().uuidString)")
    let api = StorageAPI(store: store, sessions: try UploadSessions(directory: folder))
    let door = FrontDoor(api: api, routes: [RouteEntry("GET", "/", .memory) { _ in HTTPResponse(status: 302) }])
    func call(_ method: String, _ target: String) -> Int {
      door.handle(HTTPRequest(head: HTTPRequestHead(method: method, target: target))).status
    }
    #expect(call("GET", "/") == 302)
    #expect(call("POST", "/") == 405)  // the API's answer: the XML ListBuckets takes GET only
    #expect(call("GET", "/b") == 200)  // the bucket list: not taken for "/"
    #expect(call("GET", "/storage/v1/b") == 200)
  }
}

/// A web page of another origin cannot call the emulator's state-changing routes.
@Suite struct FrontDoorCrossSiteTests {
  let door: FrontDoor

  init() throws {
    let store = try ObjectStore(backend: MemoryBackend())
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("se-door-\(UUID().uuidString)")
    let api = StorageAPI(store: store, sessions: try UploadSessions(directory: folder))
    door = FrontDoor(
      api: api,
      routes: [
        RouteEntry("POST", "/internal/reset") { _ in HTTPResponse(status: 200) },
        RouteEntry("GET", "/internal/info", .memory) { _ in HTTPResponse(status: 200) },
      ])
  }

  func status(_ method: String, _ path: String, _ headers: HTTPHeaders) -> Int {
    let request = HTTPRequest(head: HTTPRequestHead(method: method, target: path, headers: headers))
    let started: Int
    switch door.start(request) {
    case .respond(let response): started = response.status
    case .blocking(let work): started = work().status
    case .deferred: started = -1
    }
    #expect(door.handle(request).status == started)
    return started
  }

  @Test func aCrossSiteFormPostToResetIsRefused() {
    #expect(status("POST", "/internal/reset", ["host": "127.0.0.1:9199", "origin": "http://evil.test"]) == 403)
    #expect(status("POST", "/internal/reset", ["host": "127.0.0.1:9199", "origin": "null"]) == 403)
    #expect(status("POST", "/internal/reset", ["host": "127.0.0.1:9199", "origin": "http://127.0.0.1:9200"]) == 403)
  }

  @Test func toolsWithoutOriginAndTheEmulatorsOwnPagesAreServed() {
    #expect(status("POST", "/internal/reset", ["host": "127.0.0.1:9199"]) == 200)
    #expect(status("POST", "/internal/reset", ["host": "127.0.0.1:9199", "origin": "http://127.0.0.1:9199"]) == 200)
    // Reads are not refused.
    #expect(status("GET", "/internal/info", ["host": "127.0.0.1:9199", "origin": "http://evil.test"]) == 200)
  }
}
