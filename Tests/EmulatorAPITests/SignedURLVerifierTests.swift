import EmulatorHTTP
import EmulatorStorage
import Foundation
import Testing
import _CryptoExtras

@testable import EmulatorAPI

/// The verifier against URLs google-cloud-storage signed (SignedURLVectors.swift, made by
/// scripts/make-signed-url-vectors): the canonical request and string-to-sign rebuilt from the
/// request alone must be byte for byte what the library signed.
@Suite struct SignedURLVerifierTests {
  typealias Vector = SignedURLVectors.Vector

  static func request(_ vector: Vector, url: String? = nil) -> SignedURLVerifier.Request {
    let text = url ?? vector.url
    let afterScheme = text.range(of: "://")!.upperBound
    let pathStart = text[afterScheme...].firstIndex(of: "/")!
    let target = Substring(text[pathStart...])
    let question = target.firstIndex(of: "?") ?? target.endIndex
    var headers = HTTPHeaders()
    for (name, value) in vector.headers { headers.add(name, value) }
    return SignedURLVerifier.Request(
      method: vector.method, rawPath: target[..<question],
      rawQuery: question < target.endIndex ? target[target.index(after: question)...] : "", headers: headers)
  }

  static func keys(rsa: Bool = true, hmac: Bool = true) throws -> SigningKeys {
    var keys = SigningKeys()
    if rsa { try keys.addRSA(SignedURLVectors.publicKeyPEM, source: "test") }
    if hmac { try keys.addHMAC("\(SignedURLVectors.hmacAccessID):\(SignedURLVectors.hmacSecret)") }
    return keys
  }

  static func failure(_ body: () throws(SignedURLError) -> Void) -> SignedURLError? {
    do {
      try body()
      return nil
    } catch {
      return error
    }
  }

  static let v4Vectors = [SignedURLVectors.v4Download, SignedURLVectors.v4ResumableStart, SignedURLVectors.v4HMAC]

  @Test(arguments: v4Vectors)
  func canonicalRequestAndStringToSignMatchWhatGoogleSigned(_ vector: Vector) throws {
    let request = Self.request(vector)
    let query = try QueryPairs(request.rawQuery)
    let signed = query.first("x-goog-signedheaders")!.split(separator: ";").map(String.init)
    let canonical = SignedURLVerifier.canonicalRequestV4(
      method: request.method, path: String(request.rawPath), query: query, signedHeaders: signed,
      headers: request.headers)
    #expect(canonical == vector.canonicalRequest)
    let stringToSign = SignedURLVerifier.stringToSignV4(
      algorithm: query.first("x-goog-algorithm")!, date: query.first("x-goog-date")!,
      scope: "20261125/auto/storage/goog4_request", canonicalRequest: canonical)
    #expect(stringToSign == vector.stringToSign)
  }

  @Test func v2StringToSignMatchesWhatGoogleSigned() throws {
    let vector = SignedURLVectors.v2Download
    let request = Self.request(vector)
    let query = try QueryPairs(request.rawQuery)
    let candidates = SignedURLVerifier.resourceCandidatesV2(request.rawPath, query).map {
      SignedURLVerifier.stringToSignV2(
        method: "GET", expires: query.first("expires")!, headers: request.headers, resource: $0)
    }
    #expect(candidates.contains(vector.stringToSign))
  }

  @Test(arguments: v4Vectors + [SignedURLVectors.v2Download])
  func googleSignedURLsVerify(_ vector: Vector) throws {
    let verifier = SignedURLVerifier(keys: try Self.keys())
    #expect(
      Self.failure { () throws(SignedURLError) in try verifier.verify(Self.request(vector), now: vector.now) } == nil)
  }

  @Test(arguments: v4Vectors)
  func tamperedSignatureIsSignatureDoesNotMatch(_ vector: Vector) throws {
    let verifier = SignedURLVerifier(keys: try Self.keys())
    let last = vector.url.last!
    let tampered = String(vector.url.dropLast()) + (last == "0" ? "1" : "0")
    let error = Self.failure { () throws(SignedURLError) in
      try verifier.verify(Self.request(vector, url: tampered), now: vector.now)
    }
    #expect(error?.status == 403)
    #expect(error?.code == "SignatureDoesNotMatch")
    #expect(error?.stringToSign == vector.stringToSign)
  }

  @Test func urlReplayedOnAnotherObjectIsSignatureDoesNotMatch() throws {
    let vector = SignedURLVectors.v4Download
    let verifier = SignedURLVerifier(keys: try Self.keys())
    let other = vector.url.replacingOccurrences(of: "a%20b%2Bc.txt", with: "secret.txt")
    let error = Self.failure { () throws(SignedURLError) in
      try verifier.verify(Self.request(vector, url: other), now: vector.now)
    }
    #expect(error?.code == "SignatureDoesNotMatch")
  }

  @Test func urlUsedWithAnotherMethodOrHostIsSignatureDoesNotMatch() throws {
    let verifier = SignedURLVerifier(keys: try Self.keys())
    var vector = SignedURLVectors.v4Download
    vector.method = "DELETE"
    #expect(
      Self.failure { () throws(SignedURLError) in try verifier.verify(Self.request(vector), now: vector.now) }?.code
        == "SignatureDoesNotMatch")
    vector = SignedURLVectors.v4Download
    vector.headers = [("host", "evil.example:9199")]
    #expect(
      Self.failure { () throws(SignedURLError) in try verifier.verify(Self.request(vector), now: vector.now) }?.code
        == "SignatureDoesNotMatch")
  }

  @Test func resumableStartWithoutItsSignedHeaderIsRefused() throws {
    let verifier = SignedURLVerifier(keys: try Self.keys())
    var vector = SignedURLVectors.v4ResumableStart
    vector.headers.removeAll { $0.0 == "x-goog-resumable" }
    #expect(
      Self.failure { () throws(SignedURLError) in try verifier.verify(Self.request(vector), now: vector.now) }?.code
        == "SignatureDoesNotMatch")
  }

  @Test(arguments: v4Vectors + [SignedURLVectors.v2Download])
  func expiredURLIsExpiredToken(_ vector: Vector) throws {
    for keys in [try Self.keys(), SigningKeys()] {
      let verifier = SignedURLVerifier(keys: keys)
      let error = Self.failure { () throws(SignedURLError) in
        try verifier.verify(Self.request(vector), now: vector.now + 7 * 86_400)
      }
      #expect(error?.status == 400)
      #expect(error?.code == "ExpiredToken")
    }
  }

  @Test func withoutKeysATamperedSignatureIsAcceptedAsDocumented() throws {
    let vector = SignedURLVectors.v4Download
    let tampered = String(vector.url.dropLast(4)) + "abcd"
    let verifier = SignedURLVerifier()
    #expect(
      Self.failure { () throws(SignedURLError) in
        try verifier.verify(Self.request(vector, url: tampered), now: vector.now)
      }
        == nil)
  }

  @Test(arguments: [
    ("X-Goog-Expires=900", "X-Goog-Expires=604801"),
    ("X-Goog-Expires=900", "X-Goog-Expires=-1"),
    ("X-Goog-Expires=900", "X-Goog-Expires=9999999999999999999999"),
    ("X-Goog-Date=20261125T120000Z", "X-Goog-Date=20261125T12000Z"),
    ("X-Goog-Date=20261125T120000Z", "X-Goog-Date=20261126T120000Z"),
    ("%2F20261125%2Fauto%2Fstorage%2Fgoog4_request", "%2F20261125%2Fauto%2Fs3%2Fgoog4_request"),
    ("X-Goog-SignedHeaders=host", "X-Goog-SignedHeaders=user-agent"),
    ("X-Goog-Algorithm=GOOG4-RSA-SHA256", "X-Goog-Algorithm=AWS4-HMAC-SHA256"),
    ("X-Goog-Signature=", "X-Goog-Signature=zz"),
    ("X-Goog-Signature=", "X-Goog-Signature=00&X-Goog-Signature="),
    ("X-Goog-Date=20261125T120000Z", "X-Goog-Date=%ZZ"),
  ])
  func malformedSignedURLIsInvalidArgument(_ from: String, _ to: String) throws {
    let vector = SignedURLVectors.v4Download
    let url = vector.url.replacingOccurrences(of: from, with: to)
    #expect(url != vector.url)
    for keys in [try Self.keys(), SigningKeys()] {
      let error = Self.failure { () throws(SignedURLError) in
        try SignedURLVerifier(keys: keys).verify(Self.request(vector, url: url), now: vector.now)
      }
      #expect(error?.status == 400)
      #expect(error?.code == "InvalidArgument")
    }
  }

  @Test func rsaURLWithOnlyAnHMACKeyConfiguredIsRefused() throws {
    let verifier = SignedURLVerifier(keys: try Self.keys(rsa: false))
    let vector = SignedURLVectors.v4Download
    #expect(
      Self.failure { () throws(SignedURLError) in try verifier.verify(Self.request(vector), now: vector.now) }?.code
        == "SignatureDoesNotMatch")
  }

  @Test func hmacURLWithAnotherSecretOrAccessIDIsRefused() throws {
    let vector = SignedURLVectors.v4HMAC
    var keys = SigningKeys()
    try keys.addHMAC("\(SignedURLVectors.hmacAccessID):another-secret")
    #expect(
      Self.failure { () throws(SignedURLError) in
        try SignedURLVerifier(keys: keys).verify(Self.request(vector), now: vector.now)
      }?.code == "SignatureDoesNotMatch")
    keys = SigningKeys()
    try keys.addHMAC("OTHERID:\(SignedURLVectors.hmacSecret)")
    #expect(
      Self.failure { () throws(SignedURLError) in
        try SignedURLVerifier(keys: keys).verify(Self.request(vector), now: vector.now)
      }?.code == "SignatureDoesNotMatch")
  }

  @Test func certificateKeyVerifiesAsThePublicKeyDoes() throws {
    var keys = SigningKeys()
    try keys.addRSA(SignedURLVectors.certificatePEM, source: "cert")
    let vector = SignedURLVectors.v4Download
    #expect(
      Self.failure { () throws(SignedURLError) in
        try SignedURLVerifier(keys: keys).verify(Self.request(vector), now: vector.now)
      } == nil)
  }

  @Test func serviceAccountJSONKeyIsCheckedAgainstItsEmail() throws {
    let privateKey = try _RSA.Signing.PrivateKey(keySize: .bits2048)
    let json = try JSONSerialization.data(withJSONObject: [
      "type": "service_account", "client_email": "someone-else@example.iam.gserviceaccount.com",
      "private_key": privateKey.pemRepresentation,
    ])
    var keys = SigningKeys()
    try keys.addRSA(String(decoding: json, as: UTF8.self), source: "sa.json")
    #expect(keys.rsa.first?.email == "someone-else@example.iam.gserviceaccount.com")
    // The vectors' credential names another account: no key applies.
    let vector = SignedURLVectors.v4Download
    let error = Self.failure { () throws(SignedURLError) in
      try SignedURLVerifier(keys: keys).verify(Self.request(vector), now: vector.now)
    }
    #expect(error?.code == "SignatureDoesNotMatch")
  }

  @Test(arguments: [
    "", "not a key", "-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----", "{\"private_key\": 5}",
    "-----BEGIN CERTIFICATE-----\nMAA=\n-----END CERTIFICATE-----",
  ])
  func malformedKeyIsAnErrorNamingItsSource(_ text: String) {
    var keys = SigningKeys()
    #expect(throws: SigningKeyError.self) { try keys.addRSA(text, source: "bad.pem") }
  }

  @Test(arguments: ["", "nocolon", ":secret", "id:"])
  func malformedHMACKeyIsAnError(_ spec: String) {
    var keys = SigningKeys()
    #expect(throws: SigningKeyError.self) { try keys.addHMAC(spec) }
  }

  @Test func derLengthsPastTheEndAreRefused() {
    #expect(DER.element([0x30, 0x84, 0xFF, 0xFF, 0xFF, 0xFF], at: 0, limit: 6) == nil)
    #expect(DER.element([0x30, 0x85, 1, 1, 1, 1, 1], at: 0, limit: 7) == nil)
    #expect(DER.subjectPublicKeyInfo(ofCertificate: [0x30, 0x03, 0x30, 0x01]) == nil)
  }

  @Test func onlyParameterNamesMakeARequestSigned() {
    #expect(SignedURLVerifier.isSigned(rawQuery: "alt=media&x-goog-signature=00"))
    #expect(SignedURLVerifier.isSigned(rawQuery: "X-Goog-Algorithm=GOOG4-RSA-SHA256"))
    #expect(SignedURLVerifier.isSigned(rawQuery: "GoogleAccessId=a&Expires=1&Signature=b"))
    #expect(!SignedURLVerifier.isSigned(rawQuery: ""))
    #expect(!SignedURLVerifier.isSigned(rawQuery: "name=x-goog-signature%3D1"))
    #expect(!SignedURLVerifier.isSigned(rawQuery: "name=a%26X-Goog-Algorithm%3Dx"))
    #expect(!SignedURLVerifier.isSigned(rawQuery: "GoogleAccessId=a&name=Signature"))
  }

  @Test func errorShapes() throws {
    let error = SignedURLError.mismatch("d<&>", stringToSign: "a\nb")
    let xml = String(decoding: error.response(xml: true).body, as: UTF8.self)
    #expect(xml.hasPrefix("<?xml version='1.0' encoding='UTF-8'?><Error><Code>SignatureDoesNotMatch</Code>"))
    #expect(xml.contains("<Details>d&lt;&amp;&gt;</Details><StringToSign>a\nb</StringToSign>"))
    let json = error.response(xml: false)
    #expect(json.status == 403)
    let reason = try JSONValue.parse(json.body)["error"]?["errors"]
    guard case .array(let items) = reason ?? .null else { Issue.record("no errors array"); return }
    #expect(items.first?["reason"]?.stringValue == "SignatureDoesNotMatch")
  }
}
