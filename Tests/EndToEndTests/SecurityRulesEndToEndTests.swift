import EmulatorApp
import Foundation
import Testing

/// An unsigned ID token like the Firebase Auth emulator's (`alg: none`).
func authEmulatorToken(uid: String) -> String {
  func encode(_ text: String) -> String {
    Data(text.utf8).base64EncodedString().replacingOccurrences(of: "+", with: "-")
      .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
  }
  let claims =
    #"{"iss":"https://securetoken.google.com/demo","aud":"demo","user_id":"\#(uid)","sub":"\#(uid)","#
    + #""email":"\#(uid)@example.com","email_verified":true,"firebase":{"sign_in_provider":"password"}}"#
  return encode(#"{"alg":"none","typ":"JWT"}"#) + "." + encode(claims) + "."
}

/// The seed's metadata example under rules where only the owner (custom metadata `owner`)
/// may change an object's metadata; users own `users/{uid}/...`.
let seedOwnerRules = """
  rules_version = '2';
  service firebase.storage {
    match /b/{bucket}/o {
      match /images/{imageId} {
        allow read: if true;
        allow create: if request.auth != null && request.resource.metadata.owner == request.auth.uid;
        allow update: if request.auth != null && resource.metadata.owner == request.auth.uid
          && request.resource.metadata.owner == resource.metadata.owner;
        allow delete: if request.auth.uid == resource.metadata.owner;
      }
      match /users/{userId}/{allPaths=**} {
        allow read, write: if request.auth.uid == userId;
      }
    }
  }
  """

@Suite struct SecurityRulesEndToEndTests {
  static let denied = #"{"error":{"code":403,"message":"Permission denied. No WRITE permission."}}"#

  func rulesFile(_ content: String) throws -> URL {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("se-rules-\(UUID().uuidString).rules")
    try content.write(to: url, atomically: true, encoding: .utf8)
    return url
  }

  func server(rules: String) throws -> RunningEmulator {
    let file = try rulesFile(rules)
    let server = try RunningEmulator(inMemory: true) { $0.rulesFile = file.path }
    try server.emulator.loadRules(pollInterval: 0.1)
    return server
  }

  @Test func seedMetadataFlowUnderOwnerOnlyRules() throws {
    let server = try server(rules: seedOwnerRules)
    defer { server.stop() }
    let alice = "Authorization: Firebase " + authEmulatorToken(uid: "alice")
    let bob = "Authorization: Firebase " + authEmulatorToken(uid: "bob")
    let object = server.base + "/v0/b/demo.appspot.com/o/images%2Fforest.jpg"
    let boundary = "seed-boundary"
    let multipart =
      "--\(boundary)\r\nContent-Type: application/json; charset=utf-8\r\n\r\n"
      + #"{"name":"images/forest.jpg","contentType":"image/jpeg","metadata":{"owner":"alice"}}"#
      + "\r\n--\(boundary)\r\nContent-Type: image/jpeg\r\n\r\nnot really a jpeg\r\n--\(boundary)--\r\n"
    let headers = ["X-Goog-Upload-Protocol: multipart", "Content-Type: multipart/related; boundary=\(boundary)"]
    // Bob cannot upload a file claiming alice owns it; alice can.
    let forged = try Curl.request(
      "POST", server.base + "/v0/b/demo.appspot.com/o?name=images%2Fforest.jpg", body: multipart,
      headers: headers + [bob])
    #expect(forged.status == 403)
    #expect(forged.text == Self.denied)
    let uploaded = try Curl.request(
      "POST", server.base + "/v0/b/demo.appspot.com/o?name=images%2Fforest.jpg", body: multipart,
      headers: headers + [alice])
    #expect(uploaded.status == 200, "\(uploaded.text)")
    // Anyone reads; only alice changes metadata, and not its owner.
    #expect(try Curl.request("GET", object).json["contentType"] as? String == "image/jpeg")
    let patch = #"{"cacheControl":"public,max-age=300","contentType":"image/jpeg"}"#
    let json = ["Content-Type: application/json"]
    #expect(try Curl.request("PATCH", object, body: patch, headers: json + [bob]).text == Self.denied)
    #expect(try Curl.request("PATCH", object, body: patch, headers: json).status == 403)
    let changed = try Curl.request("PATCH", object, body: patch, headers: json + [alice])
    #expect(changed.status == 200)
    #expect(changed.json["cacheControl"] as? String == "public,max-age=300")
    let steal = #"{"metadata":{"owner":"bob"}}"#
    #expect(try Curl.request("PATCH", object, body: steal, headers: json + [alice]).status == 403)
    let custom = #"{"metadata":{"location":"Yosemite, CA, USA","activity":"Hiking"}}"#
    #expect(try Curl.request("PATCH", object, body: custom, headers: json + [alice]).status == 200)
    #expect(try Curl.request("DELETE", object, headers: [bob]).status == 403)
    #expect(try Curl.request("DELETE", object, headers: [alice]).status == 204)
  }

  /// The Apple SDK's putData (resumable: start with credentials, one `upload, finalize` chunk
  /// without), getMetadata and list, signed in and signed out, on a raw socket.
  @Test func appleSDKSequenceSeesTheDenials() throws {
    let server = try server(rules: seedOwnerRules)
    defer { server.stop() }
    let socket = try RawSocket(port: server.port)
    let host = "localhost:\(server.port)"
    let sdk = AppleSDKReplayTests()
    func putData(_ name: String, authorization: String?) throws -> (head: String, body: Data) {
      let startBody = #"{"bucket":"","contentType":"text/plain","metadata":null,"name":"\#(name)"}"#
      let encoded = name.replacingOccurrences(of: "/", with: "%2F")
      let auth = authorization.map { "Authorization: \($0)\r\n" } ?? ""
      let start = sdk.exchange(
        socket,
        "POST /v0/b/demo.appspot.com/o/\(encoded)?uploadType=resumable&name=\(encoded) HTTP/1.1\r\nHost: \(host)\r\n"
          + "X-Goog-Upload-Protocol: resumable\r\nX-Goog-Upload-Command: start\r\n" + auth
          + "X-Goog-Upload-Content-Type: text/plain\r\nX-Goog-Upload-Content-Length: 11\r\n"
          + "Content-Type: application/json; charset=UTF-8\r\n" + AppleSDKReplayTests.sdkHeaders
          + "Content-Length: \(startBody.utf8.count)\r\n\r\n" + startBody)
      #expect(start.head.hasPrefix("HTTP/1.1 200"))
      let url = try #require(sdk.header(start.head, "X-Goog-Upload-URL"))
      return sdk.exchange(
        socket,
        "PUT \(url.dropFirst("http://\(host)".count)) HTTP/1.1\r\nHost: \(host)\r\nX-Goog-Upload-Protocol: resumable\r\n"
          + "X-Goog-Upload-Command: upload, finalize\r\nX-Goog-Upload-Offset: 0\r\n"
          + "X-Goog-Upload-Content-Length: 11\r\nContent-Length: 11\r\n\r\nhello world")
    }
    let alice = "Firebase " + authEmulatorToken(uid: "alice")
    let signedOut = try putData("users/alice/o.txt", authorization: nil)
    #expect(signedOut.head.hasPrefix("HTTP/1.1 403"))
    #expect(sdk.header(signedOut.head, "X-Goog-Upload-Status") == "final")
    #expect(String(decoding: signedOut.body, as: UTF8.self) == Self.denied)
    let signedIn = try putData("users/alice/o.txt", authorization: alice)
    #expect(signedIn.head.hasPrefix("HTTP/1.1 200"))
    #expect(sdk.header(signedIn.head, "X-Goog-Upload-Status") == "final")
    for (authorization, expected) in [(nil, "403"), (alice, "200")] {
      let auth = authorization.map { "Authorization: \($0)\r\n" } ?? ""
      let got = sdk.exchange(
        socket,
        "GET /v0/b/demo.appspot.com/o/users%2Falice%2Fo.txt HTTP/1.1\r\nHost: \(host)\r\n" + auth
          + AppleSDKReplayTests.sdkHeaders + "\r\n")
      #expect(got.head.hasPrefix("HTTP/1.1 \(expected)"))
      let list = sdk.exchange(
        socket,
        "GET /v0/b/demo.appspot.com/o?prefix=users/alice/&delimiter=/&maxResults=10 HTTP/1.1\r\nHost: \(host)\r\n"
          + auth + AppleSDKReplayTests.sdkHeaders + "\r\n")
      #expect(list.head.hasPrefix("HTTP/1.1 \(expected)"))
      if expected == "403" {
        #expect(
          String(decoding: list.body, as: UTF8.self)
            == #"{"error":{"code":403,"message":"Permission denied. No LIST permission."}}"#)
      }
    }
  }

  /// `@firebase/rules-unit-testing`'s loop over HTTP: setRules, then requests as several users.
  @Test func setRulesThenRequestsAsDifferentUsers() throws {
    let server = try RunningEmulator(inMemory: true)
    defer { server.stop() }
    let object = server.base + "/v0/b/demo/o?name=users%2Fbob%2Ff.txt"
    #expect(try Curl.request("POST", object, body: "open").status == 200)
    var json = [String: Any]()
    json["rules"] = ["files": [["name": "storage.rules", "content": seedOwnerRules]]]
    let body = String(decoding: try JSONSerialization.data(withJSONObject: json), as: UTF8.self)
    let set = try Curl.request("PUT", server.base + "/internal/setRules", body: body)
    #expect(set.status == 200)
    #expect(set.text == #"{"message":"Rules updated successfully"}"#)
    #expect(try Curl.request("POST", object, body: "x").status == 403)
    #expect(try Curl.request("POST", object, body: "x", headers: ["Authorization: Bearer owner"]).status == 200)
    let bob = "Authorization: Bearer " + authEmulatorToken(uid: "bob")
    #expect(try Curl.request("POST", object, body: "x", headers: [bob]).status == 200)
  }

  @Test func editedRulesFileIsReloadedAndABadEditKeepsThePreviousRules() throws {
    let allow = "rules_version = '2'; service firebase.storage { match /b/{b}/o/{p=**} { allow read, write; } }"
    let file = try rulesFile(allow)
    let logged = LogLines()
    let server = try RunningEmulator(inMemory: true) { $0.rulesFile = file.path }
    defer { server.stop() }
    try server.emulator.loadRules(log: { logged.append($0) }, pollInterval: 0.05)
    let url = server.base + "/v0/b/demo/o?name=a.txt"
    #expect(try Curl.request("POST", url, body: "a").status == 200)
    func waitFor(_ status: Int) throws -> Bool {
      for _ in 0..<100 {
        if try Curl.request("POST", url, body: "a").status == status { return true }
        Thread.sleep(forTimeInterval: 0.05)
      }
      return false
    }
    try allow.replacingOccurrences(of: "allow read, write;", with: "allow read;").write(
      to: file, atomically: true, encoding: .utf8)
    #expect(try waitFor(403))
    try "service firebase.storage { match /b/{b}/o { allow reed; } }".write(to: file, atomically: true, encoding: .utf8)
    for _ in 0..<100 where !logged.lines.contains(where: { $0.contains("reload failed") }) {
      Thread.sleep(forTimeInterval: 0.05)
    }
    #expect(logged.lines.contains { $0.contains("reload failed, keeping the previous rules") && $0.contains(":1:") })
    #expect(try Curl.request("POST", url, body: "a").status == 403)
    #expect(try Curl.request("GET", server.base + "/v0/b/demo/o/a.txt").status == 200)
  }

  @Test func firebaseJSONSingleAndArrayForms() throws {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("se-fbjson-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: folder) }
    let open = "rules_version = '2'; service firebase.storage { match /b/{b}/o/{p=**} { allow read, write; } }"
    let closed =
      "rules_version = '2'; service firebase.storage { match /b/{b}/o/{p=**} { allow read, write: if false; } }"
    try open.write(to: folder.appendingPathComponent("open.rules"), atomically: true, encoding: .utf8)
    try closed.write(to: folder.appendingPathComponent("closed.rules"), atomically: true, encoding: .utf8)
    try #"{"storage":{"rules":"closed.rules"}}"#.write(
      to: folder.appendingPathComponent("single.json"), atomically: true, encoding: .utf8)
    try #"{"storage":[{"bucket":"open-bucket","rules":"open.rules"},{"target":"locked","rules":"closed.rules"}]}"#
      .write(to: folder.appendingPathComponent("firebase.json"), atomically: true, encoding: .utf8)
    try #"{"projects":{"default":"demo"},"targets":{"demo":{"storage":{"locked":["closed-bucket"]}}}}"#.write(
      to: folder.appendingPathComponent(".firebaserc"), atomically: true, encoding: .utf8)

    let single = try RunningEmulator(inMemory: true) {
      $0.firebaseJSON = folder.appendingPathComponent("single.json").path
    }
    defer { single.stop() }
    #expect(try single.emulator.loadRules().contains("closed.rules"))
    #expect(try Curl.request("POST", single.base + "/v0/b/any/o?name=x", body: "x").status == 403)

    let targets = try RunningEmulator(inMemory: true) {
      $0.firebaseJSON = folder.appendingPathComponent("firebase.json").path
    }
    defer { targets.stop() }
    try targets.emulator.loadRules()
    #expect(try Curl.request("POST", targets.base + "/v0/b/open-bucket/o?name=x", body: "x").status == 200)
    #expect(try Curl.request("POST", targets.base + "/v0/b/closed-bucket/o?name=x", body: "x").status == 403)
    #expect(try Curl.request("POST", targets.base + "/v0/b/third/o?name=x", body: "x").status == 403)
  }

  @Test func startupLineNamesTheRulesAndABadFileIsAStartupError() throws {
    let good = try rulesFile("rules_version = '2'; service firebase.storage { }")
    let withRules = try EmulatorProcess(arguments: ["--in-memory", "--rules", good.path])
    #expect(withRules.terminate().0 == 0)
    let none = try EmulatorProcess(arguments: ["--in-memory"])
    #expect(none.terminate().0 == 0)
    #expect(withRules.readyLine.contains("security rules from \(good.path)"))
    #expect(none.readyLine.contains("no security rules: every request is allowed"))

    let bad = try rulesFile("service firebase.storage {\n  match /b/{bucket}/o {\n    allow reed;\n  }\n}")
    let process = Process()
    process.executableURL = EmulatorProcess.executableURL()
    process.arguments = ["--in-memory", "--port", "0", "--rules", bad.path]
    let errors = Pipe()
    process.standardError = errors
    process.standardOutput = FileHandle.nullDevice
    try process.run()
    process.waitUntilExit()
    let message = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    #expect(process.terminationStatus == 2)
    #expect(message.contains("\(bad.path):3:11: 'reed' is not a method"), "\(message)")
  }
}

final class LogLines: @unchecked Sendable {
  // Invariant: `stored` is only touched with `lock` held.
  private let lock = NSLock()
  private var stored: [String] = []
  func append(_ line: String) {
    lock.lock()
    stored.append(line)
    lock.unlock()
  }
  var lines: [String] {
    lock.lock()
    defer { lock.unlock() }
    return stored
  }
}

/// Rules built to use as much native stack as the limits allow, evaluated by the server's own
/// threads: the request is denied and the server keeps serving.
@Suite struct RulesStackExhaustionTests {
  @Test func deepestRulesTheLimitsAllowDoNotExhaustAHandlerStack() throws {
    let server = try RunningEmulator(inMemory: true)
    defer { server.stop() }
    // Unary operators are nodes (parentheses are not): 60 levels of them, and 10 more per call.
    let deep = String(repeating: "!", count: 60) + "(n < 0)"
    let rules = """
      rules_version = '2';
      service firebase.storage {
        function f(n) { return n <= 0 ? \(deep) : !!!!!!!!!!f(n - 1) || \(deep); }
        match /b/{bucket}/o/{path=**} { allow read, write: if f(19); }
      }
      """
    var json = [String: Any]()
    json["rules"] = ["files": [["name": "deep.rules", "content": rules]]]
    let body = String(decoding: try JSONSerialization.data(withJSONObject: json), as: UTF8.self)
    #expect(try Curl.request("PUT", server.base + "/internal/setRules", body: body).status == 200)
    #expect(try Curl.request("POST", server.base + "/v0/b/demo/o?name=a", body: "a").status == 403)
    #expect(try Curl.request("GET", server.base + "/v0/b/demo/o/a").status == 403)
    #expect(try Curl.request("PATCH", server.base + "/v0/b/demo/o/a", body: "{}").status == 403)
    #expect(try Curl.request("GET", server.base + "/v0/b/demo/o?prefix=").status == 403)
    #expect(try Curl.request("GET", server.base + "/storage/v1/b").status == 200)
  }
}
