import EmulatorHTTP
import EmulatorRules
import EmulatorStorage
import Foundation
import Testing

@testable import EmulatorAPI

/// An unsigned (`alg: none`) ID token like the Firebase Auth emulator's.
func unsignedJWT(_ claims: String) -> String {
  func encode(_ text: String) -> String {
    Data(text.utf8).base64EncodedString().replacingOccurrences(of: "+", with: "-")
      .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
  }
  return encode(#"{"alg":"none","typ":"JWT"}"#) + "." + encode(claims) + "."
}

/// Rules where users own `users/{uid}/...` and anyone signed in may read `public/`.
let ownerOnlyRules = """
  rules_version = '2';
  service firebase.storage {
    match /b/{bucket}/o {
      function signedIn() { return request.auth != null; }
      match /users/{userId}/{allPaths=**} {
        allow read, write: if request.auth.uid == userId;
      }
      match /public/{file} {
        allow read: if signedIn();
        allow create: if signedIn() && request.resource.size < 10;
        allow update: if false;
      }
    }
  }
  """

extension APIHarness {
  func setRules(_ content: String) throws {
    var json = JSONWriter()
    json.beginObject()
    json.objectKey("rules")
    json.beginArray("files")
    json.beginObject()
    json.string("name", "storage.rules")
    json.string("content", content)
    json.endObject()
    json.endArray()
    json.endObject()
    json.endObject()
    let reply = call("PUT", "/internal/setRules", String(decoding: json.bytes, as: UTF8.self))
    try #require(reply.status == 200, "\(reply.text)")
  }
}

@Suite struct SecurityRulesAPITests {
  let h: APIHarness
  let alice = [("authorization", "Firebase " + unsignedJWT(#"{"user_id":"alice","email":"alice@example.com"}"#))]
  let bob = [("authorization", "Bearer " + unsignedJWT(#"{"sub":"bob"}"#))]
  let owner = [("authorization", "Bearer owner")]
  static let readDenied = #"{"error":{"code":403,"message":"Permission denied. No READ permission."}}"#
  static let writeDenied = #"{"error":{"code":403,"message":"Permission denied. No WRITE permission."}}"#
  static let listDenied = #"{"error":{"code":403,"message":"Permission denied. No LIST permission."}}"#

  init() throws {
    h = try APIHarness()
    try h.setRules(ownerOnlyRules)
  }

  @Test func withoutRulesEverythingIsAllowed() throws {
    let open = try APIHarness()
    #expect(!open.api.rules.isEnabled)
    #expect(open.call("POST", "/v0/b/demo/o?name=users%2Fbob%2Fa.txt", "hi").status == 200)
    #expect(open.call("GET", "/v0/b/demo/o/users%2Fbob%2Fa.txt").status == 200)
  }

  @Test func ownerMayWriteAndReadOthersGetFirebase403s() {
    let path = "/v0/b/demo/o/users%2Falice%2Fnote.txt"
    #expect(
      h.call("POST", "/v0/b/demo/o?name=users%2Falice%2Fnote.txt", "hello", headers: bob).text == Self.writeDenied)
    let created = h.call("POST", "/v0/b/demo/o?name=users%2Falice%2Fnote.txt", "hello", headers: alice)
    #expect(created.status == 200, "\(created.text)")
    #expect(h.call("GET", path, headers: alice).status == 200)
    #expect(h.call("GET", path + "?alt=media", headers: alice).text == "hello")
    let denied = h.call("GET", path, headers: bob)
    #expect(denied.status == 403)
    #expect(denied.text == Self.readDenied)
    #expect(h.call("GET", path + "?alt=media").text == Self.readDenied)
    #expect(h.call("PATCH", path, #"{"contentType":"text/plain"}"#, headers: bob).text == Self.writeDenied)
    #expect(h.call("PATCH", path, #"{"contentType":"text/plain"}"#, headers: alice).status == 200)
    #expect(h.call("DELETE", path, headers: bob).text == Self.writeDenied)
    #expect(h.call("DELETE", path, headers: alice).status == 204)
  }

  @Test func listIsCheckedAsListWithTheFolderPath() {
    h.call("POST", "/v0/b/demo/o?name=users%2Falice%2Fa.txt", "a", headers: alice)
    #expect(h.call("GET", "/v0/b/demo/o?prefix=users%2Falice%2F&delimiter=%2F", headers: alice).status == 200)
    #expect(h.call("GET", "/v0/b/demo/o?prefix=users%2Falice%2F&delimiter=%2F", headers: bob).text == Self.listDenied)
    #expect(h.call("GET", "/v0/b/demo/o?prefix=users%2Falice%2F").status == 403)
  }

  @Test func deniedBeforeExistence() {
    #expect(h.call("GET", "/v0/b/demo/o/users%2Falice%2Fmissing").status == 403)
    #expect(h.call("GET", "/v0/b/demo/o/users%2Falice%2Fmissing", headers: alice).status == 404)
  }

  @Test func overwriteIsAnUpdateNotACreate() {
    #expect(h.call("POST", "/v0/b/demo/o?name=public%2Fp.txt", "small", headers: bob).status == 200)
    // create would allow it; the object exists, so this is an update, which the rules refuse.
    #expect(h.call("POST", "/v0/b/demo/o?name=public%2Fp.txt", "small", headers: bob).text == Self.writeDenied)
  }

  @Test func requestResourceSizeIsTheUploadSize() {
    #expect(h.call("POST", "/v0/b/demo/o?name=public%2Fbig.txt", "0123456789", headers: bob).status == 403)
    #expect(h.call("POST", "/v0/b/demo/o?name=public%2Fok.txt", "012345678", headers: bob).status == 200)
  }

  @Test func ownerCredentialsBypassTheRules() {
    #expect(h.call("POST", "/v0/b/demo/o?name=users%2Falice%2Fo.txt", "x", headers: owner).status == 200)
    #expect(h.call("GET", "/v0/b/demo/o/users%2Falice%2Fo.txt", headers: owner).status == 200)
    #expect(
      h.call("DELETE", "/v0/b/demo/o/users%2Falice%2Fo.txt", headers: [("authorization", "Firebase owner")]).status
        == 204)
  }

  @Test func gcsSurfacesStayAdmin() {
    #expect(
      h.call("POST", "/upload/storage/v1/b/demo/o?uploadType=media&name=users%2Falice%2Fg.txt", "g").status == 200)
    #expect(h.call("GET", "/storage/v1/b/demo/o/users%2Falice%2Fg.txt").status == 200)
    #expect(h.call("GET", "/b/demo/o/users%2Falice%2Fg.txt?alt=media").text == "g")
    #expect(h.call("GET", "/download/storage/v1/b/demo/o/users%2Falice%2Fg.txt").text == "g")
    #expect(h.call("DELETE", "/b/demo/o/users%2Falice%2Fg.txt").status == 204)
  }

  @Test func aValidDownloadTokenSkipsTheRules() throws {
    h.call("POST", "/v0/b/demo/o?name=users%2Falice%2Fshared.txt", "shared", headers: alice)
    let metadata = h.call("GET", "/v0/b/demo/o/users%2Falice%2Fshared.txt", headers: alice)
    let token = try #require(metadata.string("downloadTokens"))
    #expect(h.call("GET", "/v0/b/demo/o/users%2Falice%2Fshared.txt?alt=media&token=\(token)").text == "shared")
    #expect(h.call("GET", "/v0/b/demo/o/users%2Falice%2Fshared.txt?alt=media&token=wrong").status == 403)
    #expect(h.call("GET", "/v0/b/demo/o/users%2Falice%2Fshared.txt?alt=media").text == Self.readDenied)
  }

  @Test func resumableFinalizeIsCheckedWithTheStartCredentials() throws {
    func start(_ name: String, _ headers: [(String, String)]) throws -> String {
      let reply = h.call(
        "POST", "/v0/b/demo/o?name=\(name)", #"{"contentType":"text/plain"}"#,
        headers: [("x-goog-upload-protocol", "resumable"), ("x-goog-upload-command", "start")] + headers)
      try #require(reply.status == 200, "\(reply.text)")
      let url = try #require(reply.header("x-goog-upload-url"))
      return String(url.dropFirst("http://localhost:9199".count))
    }
    let finalize = [("x-goog-upload-command", "upload, finalize"), ("x-goog-upload-offset", "0")]
    // Started by alice: the chunks carry no credentials, as the SDKs send them.
    let allowed = try start("users%2Falice%2Fr.txt", alice)
    let done = h.call("PUT", allowed, "resumable", headers: finalize)
    #expect(done.status == 200, "\(done.text)")
    #expect(done.header("x-goog-upload-status") == "final")
    // Started by bob: denied at finalize, 403 with final, and again on a second finalize.
    let refused = try start("users%2Falice%2Fr2.txt", bob)
    let denied = h.call("PUT", refused, "resumable", headers: finalize)
    #expect(denied.status == 403)
    #expect(denied.text == Self.writeDenied)
    #expect(denied.header("x-goog-upload-status") == "final")
    let again = h.call("PUT", refused, "", headers: [("x-goog-upload-command", "finalize")])
    #expect(again.status == 403)
    #expect(again.header("x-goog-upload-status") == "final")
    #expect(h.call("GET", "/storage/v1/b/demo/o/users%2Falice%2Fr2.txt").status == 404)
  }

  @Test(arguments: [
    "Bearer not.a.jwt", "Firebase %%%", "Bearer " + String(repeating: "a", count: 100_000), "Bearer", "Basic abc",
    "Firebase " + unsignedJWT("[1,2]"), "Firebase eyJ.eyJhIjo.x", "Bearer ..",
  ])
  func undecodableTokensAreSignedOutNotACrash(_ header: String) {
    let reply = h.call("GET", "/v0/b/demo/o/public%2Fx", headers: [("authorization", header)])
    #expect(reply.status == 403)
  }

  @Test func credentialsDecodeClaims() {
    guard case .user(let auth) = FirebaseCredentials(authorization: alice[0].1) else {
      Issue.record("not a user")
      return
    }
    #expect(
      auth.rulesEquals(
        .map([
          "uid": .string("alice"),
          "token": .map(["user_id": .string("alice"), "email": .string("alice@example.com")]),
        ])))
    #expect(FirebaseCredentials(authorization: "Bearer owner") == .admin)
    #expect(FirebaseCredentials(authorization: nil) == .user(.null))
    guard case .user(let bobAuth) = FirebaseCredentials(authorization: bob[0].1), case .map(let map) = bobAuth else {
      Issue.record("bob")
      return
    }
    #expect(map["uid"]?.rulesEquals(.string("bob")) == true)
    // Decodable but without a string uid: signed in, uid null.
    guard case .user(.map(let odd)) = FirebaseCredentials(authorization: "Bearer " + unsignedJWT(#"{"user_id":5}"#))
    else {
      Issue.record("odd")
      return
    }
    #expect(odd["uid"]?.rulesEquals(.null) == true)
  }

  @Test func setRulesAnswersAsTheFirebaseEmulator() {
    #expect(
      h.call("PUT", "/internal/setRules", "{}").text == #"{"message":"Request body must include 'rules.files' array"}"#)
    #expect(
      h.call("PUT", "/internal/setRules", #"{"rules":{"files":[{"name":"a"}]}}"#).text
        == #"{"message":"Each member of 'rules.files' array must contain 'name' and 'content'"}"#)
    #expect(
      h.call("PUT", "/internal/setRules", #"{"rules":{"files":[{"name":"a","content":""},{"name":"b","content":""}]}}"#)
        .text == #"{"message":"Each member of 'rules.files' array must contain 'name', 'content', and 'resource'"}"#)
    let bad = h.call(
      "PUT", "/internal/setRules", #"{"rules":{"files":[{"name":"storage.rules","content":"service x {}"}]}}"#)
    #expect(bad.status == 400)
    #expect(bad.string("message") == "There was an error updating rules, see logs for more details")
    #expect(bad.string("error")?.hasPrefix("storage.rules:1:1: ") == true)
    // The previous rules are still in force.
    #expect(h.call("GET", "/v0/b/demo/o/users%2Falice%2Fz").status == 403)
    #expect(h.call("GET", "/internal/setRules").status == 405)
  }

  @Test func rulesPerBucket() {
    let allowAll = "rules_version = '2'; service firebase.storage { match /b/{b}/o/{p=**} { allow read, write; } }"
    let denyAll =
      "rules_version = '2'; service firebase.storage { match /b/{b}/o/{p=**} { allow read, write: if false; } }"
    func file(_ name: String, _ content: String, _ bucket: String) -> String {
      #"{"name":"\#(name)","content":"\#(content)","resource":"\#(bucket)"}"#
    }
    let body =
      #"{"rules":{"files":[\#(file("open.rules", allowAll, "open")),\#(file("closed.rules", denyAll, "closed"))]}}"#
    #expect(h.call("PUT", "/internal/setRules", body).status == 200)
    #expect(h.call("POST", "/v0/b/open/o?name=x", "x").status == 200)
    #expect(h.call("POST", "/v0/b/closed/o?name=x", "x").text == Self.writeDenied)
    #expect(
      h.call("POST", "/v0/b/other/o?name=x", "x").text
        == #"{"error":{"code":403,"message":"Permission denied. Storage Emulator has no loaded ruleset."}}"#)
  }

  @Test func rulesSeeTheObjectAsItIsNowNotACachedOldVersion() throws {
    try h.setRules(
      """
      rules_version = '2';
      service firebase.storage {
        match /b/{bucket}/o/{path=**} {
          allow read: if resource.metadata.get('public', 'no') == 'yes';
        }
      }
      """)
    let path = "/v0/b/demo/o/flag.txt"
    #expect(h.call("POST", "/v0/b/demo/o?name=flag.txt", "x", headers: owner).status == 200)
    #expect(h.call("GET", path).status == 403)
    for (value, expected) in [("yes", 200), ("no", 403), ("yes", 200)] {
      let patched = h.call(
        "PATCH", path, #"{"metadata":{"public":"\#(value)"}}"#, headers: owner + [("content-type", "application/json")])
      #expect(patched.status == 200)
      #expect(h.call("GET", path).status == expected, "public=\(value)")
    }
    // Overwritten by an upload: a new generation, without the custom key.
    #expect(h.call("POST", "/v0/b/demo/o?name=flag.txt", "y", headers: owner).status == 200)
    #expect(h.call("GET", path).status == 403)
  }
}

