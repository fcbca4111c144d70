import Crypto
import EmulatorHTTP
import EmulatorStorage
import Foundation
import Testing
import _CryptoExtras

@testable import EmulatorAPI

/// Signed URLs and POST policies through the API, without sockets. URLs are signed here with a key
/// made at test time and the verifier's own canonical forms (which SignedURLVerifierTests pins to
/// google-cloud-storage's); scripts/suites/signed-urls drives the same routes with Google's code.
@Suite struct SignedURLRouteTests {
  static let email = "route-test@example.iam.gserviceaccount.com"
  let privateKey: _RSA.Signing.PrivateKey
  let api: StorageAPI

  /// One key for the suite: generating a 2048-bit key takes a while.
  static let sharedKey = Result { try _RSA.Signing.PrivateKey(keySize: .bits2048) }

  init() throws {
    privateKey = try Self.sharedKey.get()
    var keys = SigningKeys()
    try keys.addRSA(privateKey.publicKey.pemRepresentation, source: "test")
    let store = try ObjectStore(backend: MemoryBackend(), options: .init(strictBuckets: false))
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("se-signed-\(UUID().uuidString)")
    api = StorageAPI(
      store: store, sessions: try UploadSessions(directory: folder), signing: SignedURLVerifier(keys: keys))
    _ = try store.createBucket("signed-bucket")
    _ = try store.insert(bucket: "signed-bucket", name: "a b/c.txt", data: Array("hello".utf8))
  }

  func call(
    _ method: String, _ target: String, headers: [(String, String)] = [], body: [UInt8] = [],
    host: String = "127.0.0.1:9199"
  ) -> HTTPResponse {
    var head = HTTPRequestHead(method: method, target: target, headers: ["host": host])
    for (name, value) in headers { head.headers.add(name, value) }
    return api.answer(HTTPRequest(head: head, body: body))
  }

  static func stamp(_ seconds: Int64) -> String {
    let formatter = DateFormatter()
    formatter.locale = Locale(identifier: "en_US_POSIX")
    formatter.timeZone = TimeZone(identifier: "UTC")
    formatter.dateFormat = "yyyyMMdd'T'HHmmss'Z'"
    return formatter.string(from: Date(timeIntervalSince1970: TimeInterval(seconds)))
  }

  /// A V4 RSA URL target (path and query) for `method` on `path`, signed at `signedAt`.
  func signedTarget(_ method: String, _ path: String, query: [(String, String)] = [], signedAt: Int64? = nil) throws
    -> String
  {
    let date = Self.stamp(signedAt ?? Int64(Date().timeIntervalSince1970))
    let params =
      query + [
        ("X-Goog-Algorithm", "GOOG4-RSA-SHA256"),
        ("X-Goog-Credential", "\(Self.email)/\(date.prefix(8))/auto/storage/goog4_request"),
        ("X-Goog-Date", date), ("X-Goog-Expires", "600"), ("X-Goog-SignedHeaders", "host"),
      ]
    let rawQuery = params.map {
      SignedURLVerifier.encode($0.0, keepSlash: false) + "=" + SignedURLVerifier.encode($0.1, keepSlash: false)
    }.joined(separator: "&")
    let pairs = try QueryPairs(Substring(rawQuery))
    let canonical = SignedURLVerifier.canonicalRequestV4(
      method: method, path: path, query: pairs, signedHeaders: ["host"], headers: ["host": "127.0.0.1:9199"])
    let stringToSign = SignedURLVerifier.stringToSignV4(
      algorithm: "GOOG4-RSA-SHA256", date: date, scope: "\(date.prefix(8))/auto/storage/goog4_request",
      canonicalRequest: canonical)
    let signature = try privateKey.signature(for: Array(stringToSign.utf8), padding: .insecurePKCS1v1_5)
    let hex = signature.rawRepresentation.map { SignedURLVerifier.hexDigit($0) }.joined()
    return "\(path)?\(rawQuery)&X-Goog-Signature=\(hex)"
  }

  static func reason(_ response: HTTPResponse) -> String? {
    guard case .array(let items) = (try? JSONValue.parse(response.body))?["error"]?["errors"] ?? .null else {
      return nil
    }
    return items.first?["reason"]?.stringValue
  }

  static func xmlCode(_ response: HTTPResponse) -> String? {
    let text = String(decoding: response.body, as: UTF8.self)
    guard let start = text.range(of: "<Code>"), let end = text.range(of: "</Code>") else { return nil }
    return String(text[start.upperBound..<end.lowerBound])
  }

  @Test(arguments: [
    "/download/storage/v1/b/signed-bucket/o/a%20b%2Fc.txt", "/storage/v1/b/signed-bucket/o/a%20b%2Fc.txt",
  ])
  func signedDownloadIsServed(_ path: String) throws {
    let query = path.hasPrefix("/storage") ? [("alt", "media")] : []
    let response = call("GET", try signedTarget("GET", path, query: query))
    #expect(response.status == 200)
    #expect(response.body == Array("hello".utf8))
  }

  @Test func tamperedSignedDownloadIsJSON403() throws {
    let target = try signedTarget("GET", "/download/storage/v1/b/signed-bucket/o/a%20b%2Fc.txt")
    let tampered = String(target.dropLast()) + (target.last == "0" ? "1" : "0")
    let response = call("GET", tampered)
    #expect(response.status == 403)
    #expect(Self.reason(response) == "SignatureDoesNotMatch")
    #expect(response.headers["content-type"]?.hasPrefix("application/json") == true)
  }

  @Test func expiredSignedDownloadIsJSON400ExpiredToken() throws {
    let target = try signedTarget(
      "GET", "/download/storage/v1/b/signed-bucket/o/a%20b%2Fc.txt",
      signedAt: Int64(Date().timeIntervalSince1970) - 3600)
    let response = call("GET", target)
    #expect(response.status == 400)
    #expect(Self.reason(response) == "ExpiredToken")
  }

  @Test func signedURLForADownloadDoesNotAllowADelete() throws {
    let target = try signedTarget("GET", "/storage/v1/b/signed-bucket/o/a%20b%2Fc.txt")
    #expect(call("DELETE", target).status == 403)
    #expect(call("GET", "/storage/v1/b/signed-bucket/o/a%20b%2Fc.txt").status == 200)
  }

  @Test func unsignedRequestsAreServedAsBefore() {
    #expect(call("GET", "/download/storage/v1/b/signed-bucket/o/a%20b%2Fc.txt").status == 200)
  }

  // MARK: POST policy

  struct Form {
    var fields: [(String, String)]
    var file: [UInt8] = Array("form body".utf8)
    var fileName = "photo.txt"
    var boundary = "----suite-boundary"

    func body() -> [UInt8] {
      var out = ""
      for (name, value) in fields {
        out += "--\(boundary)\r\nContent-Disposition: form-data; name=\"\(name)\"\r\n\r\n\(value)\r\n"
      }
      var bytes = Array(out.utf8)
      bytes += Array(
        "--\(boundary)\r\nContent-Disposition: form-data; name=\"file\"; filename=\"\(fileName)\"\r\nContent-Type: text/plain\r\n\r\n"
          .utf8)
      bytes += file
      bytes += Array("\r\n--\(boundary)--\r\n".utf8)
      return bytes
    }
  }

  /// A signed form: `conditions` plus the ones google-cloud-storage adds, with `extra` fields.
  func form(
    key: String = "uploads/${filename}", conditions: [String] = [], extra: [(String, String)] = [],
    expiresIn: Int64 = 600, bucket: String = "signed-bucket"
  ) throws -> Form {
    let now = Int64(Date().timeIntervalSince1970)
    let date = Self.stamp(now)
    let credential = "\(Self.email)/\(date.prefix(8))/auto/storage/goog4_request"
    let expiration = Timestamp.format(milliseconds: (now + expiresIn) * 1000)
    let required = [
      "{\"bucket\":\"\(bucket)\"}", "{\"key\":\"\(key)\"}", "{\"x-goog-date\":\"\(date)\"}",
      "{\"x-goog-credential\":\"\(credential)\"}", "{\"x-goog-algorithm\":\"GOOG4-RSA-SHA256\"}",
    ]
    let document =
      "{\"conditions\":[\((conditions + required).joined(separator: ","))],\"expiration\":\"\(expiration)\"}"
    let policy = Data(document.utf8).base64EncodedString()
    let signature = try privateKey.signature(for: Array(policy.utf8), padding: .insecurePKCS1v1_5)
    let hex = signature.rawRepresentation.map { SignedURLVerifier.hexDigit($0) }.joined()
    return Form(
      fields: extra + [
        ("key", key), ("x-goog-algorithm", "GOOG4-RSA-SHA256"), ("x-goog-credential", credential),
        ("x-goog-date", date), ("x-goog-signature", hex), ("policy", policy),
      ])
  }

  func post(_ form: Form, path: String = "/signed-bucket/", contentType: String? = nil) -> HTTPResponse {
    call(
      "POST", path, headers: [("content-type", contentType ?? "multipart/form-data; boundary=\(form.boundary)")],
      body: form.body())
  }

  @Test func formUploadStoresTheObjectWithItsFields() throws {
    let form = try form(
      conditions: [
        "[\"content-length-range\",1,100]", "[\"starts-with\",\"$Content-Type\",\"text/\"]",
        "{\"x-goog-meta-team\":\"web\"}", "{\"content-type\":\"text/markdown\"}",
      ],
      extra: [("Content-Type", "text/markdown"), ("x-goog-meta-team", "web")])
    let response = post(form)
    #expect(response.status == 204)
    let object = try api.store.metadata(bucket: "signed-bucket", name: "uploads/photo.txt")
    #expect(object.size == 9)
    #expect(object.contentType == "text/markdown")
    #expect(object.custom["team"] == "web")
  }

  @Test(arguments: ["/signed-bucket", "/signed-bucket/"])
  func formUploadAnswers201WithAPostResponse(_ path: String) throws {
    var form = try form(conditions: ["{\"success_action_status\":\"201\"}"])
    form.fields.append(("success_action_status", "201"))
    let response = post(form, path: path)
    #expect(response.status == 201)
    let text = String(decoding: response.body, as: UTF8.self)
    #expect(text.contains("<Bucket>signed-bucket</Bucket><Key>uploads/photo.txt</Key>"))
  }

  @Test func formUploadRedirectsWhenAsked() throws {
    var form = try form(conditions: ["[\"starts-with\",\"$success_action_redirect\",\"https://app.example/\"]"])
    form.fields.append(("success_action_redirect", "https://app.example/done"))
    let response = post(form)
    #expect(response.status == 303)
    #expect(
      response.headers["location"]?.hasPrefix(
        "https://app.example/done?bucket=signed-bucket&key=uploads%2Fphoto.txt&etag=") == true)
  }

  @Test func fileOverContentLengthRangeIsEntityTooLarge() throws {
    var form = try form(conditions: ["[\"content-length-range\",0,4]"])
    form.file = Array("12345".utf8)
    let response = post(form)
    #expect(response.status == 400)
    #expect(Self.xmlCode(response) == "EntityTooLarge")
    #expect((try? api.store.metadata(bucket: "signed-bucket", name: "uploads/photo.txt")) == nil)
  }

  @Test func fileUnderContentLengthRangeIsEntityTooSmall() throws {
    let response = post(try form(conditions: ["[\"content-length-range\",100,200]"]))
    #expect(Self.xmlCode(response) == "EntityTooSmall")
  }

  @Test func keyOutsideItsStartsWithIsAccessDenied() throws {
    var form = try form(key: "uploads/x", conditions: ["[\"starts-with\",\"$key\",\"uploads/\"]"])
    // The key field differs from the signed {"key": …} condition.
    form.fields = form.fields.map { $0.0 == "key" ? ("key", "../elsewhere") : $0 }
    let response = post(form)
    #expect(response.status == 403)
    #expect(Self.xmlCode(response) == "AccessDenied")
  }

  @Test func fieldThePolicyDoesNotNameIsAccessDenied() throws {
    let response = post(try form(extra: [("x-goog-meta-owner", "mallory")]))
    #expect(response.status == 403)
    #expect(String(decoding: response.body, as: UTF8.self).contains("x-goog-meta-owner"))
  }

  @Test func expiredPolicyIsExpiredToken() throws {
    let response = post(try form(expiresIn: -5))
    #expect(response.status == 400)
    #expect(Self.xmlCode(response) == "ExpiredToken")
  }

  @Test func forgedPolicyIsSignatureDoesNotMatch() throws {
    var form = try form()
    // A policy of the attacker's own, with the original signature.
    let forged = Data("{\"conditions\":[],\"expiration\":\"2099-01-01T00:00:00Z\"}".utf8).base64EncodedString()
    form.fields = form.fields.map { $0.0 == "policy" ? ("policy", forged) : $0 }
    let response = post(form)
    #expect(response.status == 403)
    #expect(Self.xmlCode(response) == "SignatureDoesNotMatch")
  }

  @Test func smugglingAttemptWithADuplicateKeyFieldIsRefused() throws {
    var form = try form()
    form.fields.append(("key", "other-name"))
    let response = post(form)
    #expect(response.status == 400)
    #expect(Self.xmlCode(response) == "InvalidArgument")
  }

  @Test func smugglingAttemptWithTwoBoundariesIsRefused() throws {
    let form = try form()
    let response = post(form, contentType: "multipart/form-data; boundary=\(form.boundary); boundary=other")
    #expect(response.status == 400)
  }

  @Test func formWithTooManyFieldsIsRefusedBeforeItsPolicyIsRead() throws {
    var form = try form()
    form.fields = (0...PostPolicyForm.maxFields).map { ("x-ignore-\($0)", "v") } + form.fields
    let response = post(form)
    #expect(response.status == 400)
    #expect(String(decoding: response.body, as: UTF8.self).contains("more than"))
  }

  @Test func oversizedFormFieldIsRefused() throws {
    var form = try form()
    form.fields.insert(("x-ignore-big", String(repeating: "a", count: PostPolicyForm.maxFieldBytes + 1)), at: 0)
    #expect(post(form).status == 400)
  }

  @Test func fieldAfterTheFileIsRefused() throws {
    var form = try form()
    let body = form.body().dropLast(Array("--\(form.boundary)--\r\n".utf8).count)
    let tail =
      "--\(form.boundary)\r\nContent-Disposition: form-data; name=\"key\"\r\n\r\nlate\r\n--\(form.boundary)--\r\n"
    form.fileName = "x"
    let response = call(
      "POST", "/signed-bucket", headers: [("content-type", "multipart/form-data; boundary=\(form.boundary)")],
      body: Array(body) + Array(tail.utf8))
    #expect(response.status == 400)
  }

  @Test(arguments: [
    "not base64!", Data("[1,2".utf8).base64EncodedString(), Data("{\"conditions\":[]}".utf8).base64EncodedString(),
  ])
  func malformedPolicyIsRefused(_ policy: String) throws {
    var form = try form()
    form.fields = form.fields.map { $0.0 == "policy" ? ("policy", policy) : $0 }
    let status = post(form).status
    #expect(status == 400 || status == 403)
  }

  @Test func unknownConditionIsInvalidPolicyDocument() throws {
    let response = post(try form(conditions: ["[\"regex\",\"$key\",\".*\"]"]))
    #expect(response.status == 400)
    #expect(Self.xmlCode(response) == "InvalidPolicyDocument")
  }

  @Test func formOnTheVirtualHostStyleIsServed() throws {
    let form = try form()
    let response = call(
      "POST", "/", headers: [("content-type", "multipart/form-data; boundary=\(form.boundary)")], body: form.body(),
      host: "signed-bucket.localhost:9199")
    #expect(response.status == 204)
    #expect(try api.store.metadata(bucket: "signed-bucket", name: "uploads/photo.txt").size == 9)
  }

  @Test func formToAnotherBucketThanItsPolicyIsAccessDenied() throws {
    let response = post(try form(), path: "/other-bucket/")
    #expect(response.status == 403)
    #expect(Self.xmlCode(response) == "AccessDenied")
  }

  @Test func formWithABadObjectNameIsInvalidArgument() throws {
    let response = post(try form(key: ".."))
    #expect(response.status == 400)
    #expect(Self.xmlCode(response) == "InvalidArgument")
  }

  @Test func hmacSignedPolicyIsVerifiedWithItsAccessID() throws {
    var keys = SigningKeys()
    try keys.addHMAC("GOOGFORMID:form-secret")
    let hmacAPI = StorageAPI(
      store: api.store, sessions: api.sessions, signing: SignedURLVerifier(keys: keys))
    var form = try form()
    let date = form.fields.first { $0.0 == "x-goog-date" }!.1
    let credential = "GOOGFORMID/\(date.prefix(8))/auto/storage/goog4_request"
    let policyText = form.fields.first { $0.0 == "policy" }!.1
    var document = String(decoding: Data(base64Encoded: policyText)!, as: UTF8.self)
    document = document.replacingOccurrences(of: "\(Self.email)/", with: "GOOGFORMID/")
      .replacingOccurrences(of: "GOOG4-RSA-SHA256", with: "GOOG4-HMAC-SHA256")
    let policy = Data(document.utf8).base64EncodedString()
    func sign(_ secret: String) -> String {
      let key = SignedURLVerifier.hmacSigningKey(
        secret: Array(secret.utf8), date: String(date.prefix(8)), location: "auto")
      return HMAC<SHA256>.authenticationCode(for: Array(policy.utf8), using: key).map { SignedURLVerifier.hexDigit($0) }
        .joined()
    }
    for (secret, status) in [("wrong-secret", 403), ("form-secret", 204)] {
      form.fields = form.fields.map { field -> (String, String) in
        switch field.0 {
        case "x-goog-credential": ("x-goog-credential", credential)
        case "x-goog-algorithm": ("x-goog-algorithm", "GOOG4-HMAC-SHA256")
        case "policy": ("policy", policy)
        case "x-goog-signature": ("x-goog-signature", sign(secret))
        default: field
        }
      }
      var head = HTTPRequestHead(
        method: "POST", target: "/signed-bucket", headers: ["host": "127.0.0.1:9199"])
      head.headers.add("content-type", "multipart/form-data; boundary=\(form.boundary)")
      #expect(hmacAPI.answer(HTTPRequest(head: head, body: form.body())).status == status)
    }
  }

  @Test func bucketCollectionPostsAreNotPolicyUploads() {
    let head = HTTPRequestHead(method: "POST", target: "/b", headers: [:])
    #expect(StorageAPI.postPolicyBucket(head) == nil)
    #expect(StorageAPI.postPolicyBucket(HTTPRequestHead(method: "POST", target: "/storage/v1/b")) == nil)
    #expect(StorageAPI.postPolicyBucket(HTTPRequestHead(method: "GET", target: "/my-bucket")) == nil)
    #expect(StorageAPI.postPolicyBucket(HTTPRequestHead(method: "POST", target: "/my-bucket/")) == "my-bucket")
    #expect(StorageAPI.postPolicyBucket(HTTPRequestHead(method: "POST", target: "/my-bucket/obj")) == nil)
    #expect(StorageAPI.postPolicyBucket(HTTPRequestHead(method: "POST", target: "/storage/")) == nil)
    let hosted = HTTPRequestHead(method: "POST", target: "/", headers: ["host": "my-bucket.localhost:9199"])
    #expect(StorageAPI.postPolicyBucket(hosted, virtualHost: "localhost") == "my-bucket")
    #expect(StorageAPI.postPolicyBucket(hosted) == nil)
    #expect(StorageAPI.postPolicyBucket(HTTPRequestHead(method: "POST", target: "/"), virtualHost: "localhost") == nil)
    #expect(api.bodyLimit(for: HTTPRequestHead(method: "POST", target: "/my-bucket")) == api.limits.maxUploadBytes)
  }
}

/// The XML resumable start, called directly until the XML API routes to it.
@Suite struct XMLResumableStartTests {
  @Test func startAnswers201WithASessionThatTakesTheData() throws {
    let store = try ObjectStore(backend: MemoryBackend(), options: .init(strictBuckets: false))
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("se-xmlres-\(UUID().uuidString)")
    let api = StorageAPI(store: store, sessions: try UploadSessions(directory: folder))
    _ = try store.createBucket("xml-bucket")
    var head = HTTPRequestHead(method: "POST", target: "/xml-bucket/dir/a.txt", headers: ["host": "127.0.0.1:9199"])
    head.headers.add("x-goog-resumable", "start")
    head.headers.add("content-type", "text/plain")
    head.headers.add("x-goog-meta-owner", "me")
    let start = try api.xmlResumableStart(HTTPRequest(head: head), bucket: "xml-bucket", name: "dir/a.txt")
    #expect(start.status == 201)
    let location = try #require(start.headers["location"])
    #expect(location.hasPrefix("http://127.0.0.1:9199/upload/storage/v1/b/xml-bucket/o?"))
    let target = String(location.dropFirst("http://127.0.0.1:9199".count))
    let put = api.answer(
      HTTPRequest(
        head: HTTPRequestHead(method: "PUT", target: target, headers: ["host": "127.0.0.1:9199"]),
        body: Array("resumed".utf8)))
    #expect(put.status == 200)
    let object = try store.metadata(bucket: "xml-bucket", name: "dir/a.txt")
    #expect(object.size == 7)
    #expect(object.contentType == "text/plain")
    #expect(object.custom["owner"] == "me")

    head.headers.set("x-goog-if-generation-match", "not-a-number")
    #expect(throws: APIError.self) {
      try api.xmlResumableStart(HTTPRequest(head: head), bucket: "xml-bucket", name: "b.txt")
    }
    head.headers.set("x-goog-if-generation-match", "0")
    // The store's precondition failure, as the edge (`APIError(mapping:)`) answers it: 412.
    do {
      _ = try api.xmlResumableStart(HTTPRequest(head: head), bucket: "xml-bucket", name: "dir/a.txt")
      Issue.record("ifGenerationMatch=0 on an existing object must be refused")
    } catch {
      #expect(APIError(mapping: error).status == 412)
    }
  }
}
