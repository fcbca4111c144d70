import Crypto
import EmulatorHTTP
import EmulatorStorage
import EmulatorSupport
import _CryptoExtras

/// Checks GCS signed URLs: V4 (`X-Goog-Algorithm` `GOOG4-RSA-SHA256` or `GOOG4-HMAC-SHA256`) and V2
/// (`GoogleAccessId`, `Expires`, `Signature`). Expiry and the shape of the parameters are always
/// checked; the signature is verified against `keys` when any are configured, by rebuilding the
/// canonical request and string-to-sign exactly as GCS documents them.
public struct SignedURLVerifier: Sendable {
  public let keys: SigningKeys
  /// HMAC keys made through the JSON API (`hmacKeys`); an ACTIVE one verifies like a configured one.
  public let madeKeys: HMACKeyRing

  public init(keys: SigningKeys = SigningKeys(), madeKeys: HMACKeyRing = HMACKeyRing()) {
    self.keys = keys
    self.madeKeys = madeKeys
  }

  /// The parts of a request a signature covers.
  public struct Request: Sendable {
    public var method: String
    public var rawPath: Substring
    public var rawQuery: Substring
    public var headers: HTTPHeaders

    public init(method: String, rawPath: Substring, rawQuery: Substring, headers: HTTPHeaders) {
      self.method = method
      self.rawPath = rawPath
      self.rawQuery = rawQuery
      self.headers = headers
    }
  }

  /// Whether the query carries signed-URL parameters: a parameter named `X-Goog-Signature` or
  /// `X-Goog-Algorithm` (V4, any case), or both `GoogleAccessId` and `Signature` (V2). Names are
  /// compared as sent, so an escaped `=` inside another parameter's value never counts. One pass
  /// over the query's bytes: this runs for every GCS request with a query.
  public static func isSigned(rawQuery: Substring) -> Bool {
    guard !rawQuery.isEmpty else { return false }
    var query = rawQuery
    return query.withUTF8 { bytes in
      var accessID = false
      var signature = false
      var start = 0
      while start < bytes.count {
        var end = start
        while end < bytes.count && bytes[end] != UInt8(ascii: "&") { end += 1 }
        var nameEnd = start
        while nameEnd < end && bytes[nameEnd] != UInt8(ascii: "=") { nameEnd += 1 }
        let name = UnsafeBufferPointer(rebasing: bytes[start..<nameEnd])
        if same(name, "x-goog-signature", ignoringCase: true) || same(name, "x-goog-algorithm", ignoringCase: true) {
          return true
        }
        if same(name, "GoogleAccessId", ignoringCase: false) { accessID = true }
        if same(name, "Signature", ignoringCase: false) { signature = true }
        start = end + 1
      }
      return accessID && signature
    }
  }

  /// Whether `bytes` spell `word` (ASCII; with `ignoringCase`, `word` is lower case).
  private static func same(_ bytes: UnsafeBufferPointer<UInt8>, _ word: StaticString, ignoringCase: Bool) -> Bool {
    guard bytes.count == word.utf8CodeUnitCount else { return false }
    let wanted = UnsafeBufferPointer(start: word.utf8Start, count: word.utf8CodeUnitCount)
    for index in 0..<bytes.count {
      var byte = bytes[index]
      if ignoringCase && byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") { byte += 32 }
      if byte != wanted[index] { return false }
    }
    return true
  }

  /// Throws the error GCS answers for a bad signed URL; returns for a good one.
  /// - Parameter now: seconds since the epoch.
  public func verify(_ request: Request, now: Int64) throws(SignedURLError) {
    let query = try QueryPairs(request.rawQuery)
    if query.first("x-goog-algorithm") != nil || query.first("x-goog-signature") != nil {
      try verifyV4(request, query, now: now)
    } else {
      try verifyV2(request, query, now: now)
    }
  }

  // MARK: V4

  /// The fields of a V4 credential, `ID/DATE/LOCATION/storage/goog4_request`.
  struct Credential: Equatable {
    var id: String
    var date: String
    var location: String

    init(_ text: String) throws(SignedURLError) {
      let parts = text.split(separator: "/", omittingEmptySubsequences: false)
      guard parts.count >= 5, parts[parts.count - 2] == "storage", parts[parts.count - 1] == "goog4_request",
        parts[parts.count - 4].count == 8, parts[parts.count - 4].allSatisfy(\.isASCIIDigit),
        !parts[parts.count - 3].isEmpty
      else {
        throw .invalid("X-Goog-Credential must be ID/YYYYMMDD/LOCATION/storage/goog4_request, got '\(text)'.")
      }
      id = parts.dropLast(4).joined(separator: "/")
      date = String(parts[parts.count - 4])
      location = String(parts[parts.count - 3])
      guard !id.isEmpty else { throw .invalid("X-Goog-Credential names no account or access ID.") }
    }

    var scope: String { "\(date)/\(location)/storage/goog4_request" }
  }

  private func verifyV4(_ request: Request, _ query: QueryPairs, now: Int64) throws(SignedURLError) {
    let algorithm = try query.required("X-Goog-Algorithm")
    guard algorithm == "GOOG4-RSA-SHA256" || algorithm == "GOOG4-HMAC-SHA256" else {
      throw .invalid("Unsupported X-Goog-Algorithm '\(algorithm)'; use GOOG4-RSA-SHA256 or GOOG4-HMAC-SHA256.")
    }
    let credential = try Credential(try query.required("X-Goog-Credential"))
    let dateText = try query.required("X-Goog-Date")
    guard let signedAt = Self.parseV4Date(dateText) else {
      throw .invalid("X-Goog-Date must be YYYYMMDD'T'HHMMSS'Z', got '\(dateText)'.")
    }
    guard dateText.hasPrefix(credential.date) else {
      throw .invalid("The date of X-Goog-Credential (\(credential.date)) is not that of X-Goog-Date (\(dateText)).")
    }
    let expiresText = try query.required("X-Goog-Expires")
    guard let expires = Int64(expiresText), expires >= 1, expires <= 604_800 else {
      throw .invalid("X-Goog-Expires must be 1 to 604800 seconds (seven days), got '\(expiresText)'.")
    }
    if now > signedAt + expires {
      throw .expired("Request has expired: the URL was valid for \(expires) s from \(dateText).")
    }
    let signedHeaders = try query.required("X-Goog-SignedHeaders")
    let headerNames = signedHeaders.split(separator: ";", omittingEmptySubsequences: false).map(String.init)
    guard headerNames.contains("host"), headerNames.allSatisfy({ !$0.isEmpty && $0 == $0.lowercased() }) else {
      throw .invalid("X-Goog-SignedHeaders must be lower-case names separated by ';' and include host.")
    }
    let signatureText = try query.required("X-Goog-Signature")
    guard let signature = Hex.decode(signatureText) else {
      throw .invalid("X-Goog-Signature must be hexadecimal.")
    }
    let madeKey = algorithm == "GOOG4-HMAC-SHA256" && madeKeys.activeSecret(credential.id) != nil
    guard !keys.isEmpty || madeKey else { return }

    var failure: SignedURLError?
    for path in Self.pathCandidates(request.rawPath) {
      let canonical = Self.canonicalRequestV4(
        method: request.method, path: path, query: query, signedHeaders: headerNames, headers: request.headers)
      let stringToSign = Self.stringToSignV4(
        algorithm: algorithm, date: dateText, scope: credential.scope, canonicalRequest: canonical)
      if try check(
        algorithm: algorithm, credential: credential, message: Array(stringToSign.utf8), signature: signature)
      {
        return
      }
      if failure == nil {
        failure = .mismatch(
          "No configured key verifies this signature.", stringToSign: stringToSign, canonicalRequest: canonical)
      }
    }
    throw failure ?? .mismatch("No configured key verifies this signature.")
  }

  /// Whether a configured key of the algorithm's kind verifies `signature` over `message`.
  /// Throws when no key of that kind is configured (while another kind is).
  func check(algorithm: String, credential: Credential, message: [UInt8], signature: [UInt8]) throws(SignedURLError)
    -> Bool
  {
    if algorithm == "GOOG4-HMAC-SHA256" {
      guard let secret = keys.hmac[credential.id] ?? madeKeys.activeSecret(credential.id) else {
        throw .mismatch("No HMAC key with access ID '\(credential.id)' is configured.")
      }
      let key = Self.hmacSigningKey(secret: secret, date: credential.date, location: credential.location)
      return HMAC<SHA256>.isValidAuthenticationCode(signature, authenticating: message, using: key)
    }
    return try checkRSA(id: credential.id, message: message, signature: signature)
  }

  func checkRSA(id: String, message: [UInt8], signature: [UInt8]) throws(SignedURLError) -> Bool {
    let candidates = keys.rsa.filter { $0.email == nil || $0.email == id }
    guard !candidates.isEmpty else {
      throw .mismatch("No RSA key (--signing-key) is configured for '\(id)'.")
    }
    let rsaSignature = _RSA.Signing.RSASignature(rawRepresentation: signature)
    return candidates.contains {
      $0.key.isValidSignature(rsaSignature, for: SHA256.hash(data: message), padding: .insecurePKCS1v1_5)
    }
  }

  /// GCS's V4 HMAC signing key: HMAC-SHA256 chained over the date, location, `storage` and
  /// `goog4_request`, starting from `GOOG4` + the secret.
  static func hmacSigningKey(secret: [UInt8], date: String, location: String) -> SymmetricKey {
    var key = SymmetricKey(data: Array("GOOG4".utf8) + secret)
    for part in [date, location, "storage", "goog4_request"] {
      key = SymmetricKey(data: Array(HMAC<SHA256>.authenticationCode(for: Array(part.utf8), using: key)))
    }
    return key
  }

  /// METHOD, path, sorted encoded query (without `X-Goog-Signature`), `name:value` lines of the
  /// signed headers, the signed-header list, and the payload hash, joined by line feeds.
  static func canonicalRequestV4(
    method: String, path: String, query: QueryPairs, signedHeaders: [String], headers: HTTPHeaders
  ) -> String {
    let canonicalQuery = query.pairs.filter { $0.name != "X-Goog-Signature" }
      .map { encode($0.name, keepSlash: false) + "=" + encode($0.value, keepSlash: false) }
      .sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
      .joined(separator: "&")
    var headerLines = ""
    for name in signedHeaders {
      let values = headers.values(name).map {
        $0.split(whereSeparator: { $0 == " " || $0 == "\t" }).joined(separator: " ")
      }
      headerLines += name + ":" + values.joined(separator: ",") + "\n"
    }
    let payload =
      signedHeaders.contains("x-goog-content-sha256")
      ? (headers["x-goog-content-sha256"] ?? "") : "UNSIGNED-PAYLOAD"
    return [method, path, canonicalQuery, headerLines, signedHeaders.joined(separator: ";"), payload]
      .joined(separator: "\n")
  }

  static func stringToSignV4(algorithm: String, date: String, scope: String, canonicalRequest: String) -> String {
    let hash = SHA256.hash(data: Array(canonicalRequest.utf8)).map { hexDigit($0) }.joined()
    return [algorithm, date, scope, hash].joined(separator: "\n")
  }

  // MARK: V2

  private func verifyV2(_ request: Request, _ query: QueryPairs, now: Int64) throws(SignedURLError) {
    let accessID = try query.required("GoogleAccessId")
    let expiresText = try query.required("Expires")
    guard let expires = Int64(expiresText), expires >= 0 else {
      throw .invalid("Expires must be a time in seconds since the epoch, got '\(expiresText)'.")
    }
    if now > expires { throw .expired("Request has expired: the URL expired at \(expiresText) (seconds since 1970).") }
    // A `+` of the base64 signature may arrive unescaped and so be read as a space.
    let signatureText = try query.required("Signature").replacing(" ", with: "+")
    guard let signature = Data(base64Encoded: signatureText) else {
      throw .invalid("Signature must be base64.")
    }
    guard !keys.isEmpty else { return }
    var failure: SignedURLError?
    for resource in Self.resourceCandidatesV2(request.rawPath, query) {
      let stringToSign = Self.stringToSignV2(
        method: request.method, expires: expiresText, headers: request.headers, resource: resource)
      if try checkRSA(id: accessID, message: Array(stringToSign.utf8), signature: Array(signature)) { return }
      if failure == nil {
        failure = .mismatch("No configured key verifies this signature.", stringToSign: stringToSign)
      }
    }
    throw failure ?? .mismatch("No configured key verifies this signature.")
  }

  /// METHOD, Content-MD5, Content-Type, Expires, the `x-goog-*` headers as `name:value` lines
  /// (sorted, lower-case, encryption keys left out), and the resource, joined by line feeds.
  static func stringToSignV2(method: String, expires: String, headers: HTTPHeaders, resource: String) -> String {
    var extension_: [String: [String]] = [:]
    for (name, value) in headers {
      let lower = name.lowercased()
      guard lower.hasPrefix("x-goog-"), lower != "x-goog-encryption-key", lower != "x-goog-encryption-key-sha256"
      else { continue }
      extension_[lower, default: []].append(
        value.split(whereSeparator: { $0 == " " || $0 == "\t" }).joined(separator: " "))
    }
    let lines = extension_.keys.sorted().map { "\($0):\(extension_[$0]!.joined(separator: ","))" }
    return ([method, headers["content-md5"] ?? "", headers["content-type"] ?? "", expires] + lines + [resource])
      .joined(separator: "\n")
  }

  /// The path alone, and with the query parameters a client signed along (google-cloud-storage's
  /// `query_parameters`: every parameter but the signing ones and those it adds unsigned).
  static func resourceCandidatesV2(_ rawPath: Substring, _ query: QueryPairs) -> [String] {
    let unsigned: Set<String> = [
      "GoogleAccessId", "Expires", "Signature", "generation", "response-content-type", "response-content-disposition",
    ]
    let rest = query.pairs.filter { !unsigned.contains($0.name) }
      .map { (name: $0.name.lowercased(), value: $0.value.trimmingWhitespace()) }
      .sorted { ($0.name, $0.value) < ($1.name, $1.value) }
      .map { formEncode($0.name) + "=" + formEncode($0.value) }
      .joined(separator: "&")
    var out: [String] = []
    for path in pathCandidates(rawPath) {
      out.append(path)
      if !rest.isEmpty { out.append(path + "?" + rest) }
    }
    return out
  }

  // MARK: Encoding

  /// The path as the client sent it, and re-encoded the way google-cloud-storage encodes names
  /// (everything but unreserved characters and `/`), which differs when a client escaped more or
  /// less than that.
  static func pathCandidates(_ rawPath: Substring) -> [String] {
    let raw = String(rawPath)
    guard let decoded = URLCoding.percentDecodeBytes(rawPath) else { return [raw] }
    let canonical = encode(decoded, keepSlash: true)
    return canonical == raw ? [raw] : [raw, canonical]
  }

  /// RFC 3986 percent-encoding of everything but unreserved characters (and `/` when kept): Python's
  /// `urllib.parse.quote(text, safe="~")` (or `safe="/~"`).
  static func encode(_ text: String, keepSlash: Bool) -> String { encode(Array(text.utf8), keepSlash: keepSlash) }

  static func encode(_ bytes: [UInt8], keepSlash: Bool) -> String {
    var out = ""
    out.reserveCapacity(bytes.count)
    for byte in bytes {
      switch byte {
      case 48...57, 65...90, 97...122, UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
        out.unicodeScalars.append(Unicode.Scalar(byte))
      case UInt8(ascii: "/") where keepSlash:
        out.append("/")
      default:
        out += "%" + hexDigit(byte).uppercased()
      }
    }
    return out
  }

  /// `application/x-www-form-urlencoded` as Python's `urlencode` writes it (`quote_plus`).
  static func formEncode(_ text: String) -> String {
    encode(text, keepSlash: false).replacing("%20", with: "+")
  }

  static func hexDigit(_ byte: UInt8) -> String {
    let digits = Array("0123456789abcdef")
    return String([digits[Int(byte >> 4)], digits[Int(byte & 15)]])
  }

  /// `YYYYMMDDTHHMMSSZ` as seconds since the epoch.
  static func parseV4Date(_ text: String) -> Int64? {
    let b = Array(text.utf8)
    guard b.count == 16, b[8] == UInt8(ascii: "T"), b[15] == UInt8(ascii: "Z"),
      b[0..<8].allSatisfy({ $0 >= 48 && $0 <= 57 }), b[9..<15].allSatisfy({ $0 >= 48 && $0 <= 57 })
    else { return nil }
    let s = { (range: Range<Int>) in String(decoding: b[range], as: UTF8.self) }
    let rfc3339 = "\(s(0..<4))-\(s(4..<6))-\(s(6..<8))T\(s(9..<11)):\(s(11..<13)):\(s(13..<15))Z"
    return Timestamp.parse(rfc3339).map { $0 / 1000 }
  }
}

/// The query's parameters in order, each name and value percent-decoded once (`+` is a space),
/// as signatures see them. A malformed escape is a 400; so is a signing parameter given twice.
struct QueryPairs: Sendable {
  var pairs: [(name: String, value: String)] = []

  init(_ raw: Substring) throws(SignedURLError) {
    for piece in raw.split(separator: "&", omittingEmptySubsequences: true) {
      let equals = piece.firstIndex(of: "=")
      let rawName = equals.map { piece[..<$0] } ?? piece
      let rawValue = equals.map { piece[piece.index(after: $0)...] } ?? ""
      guard let name = URLCoding.percentDecode(rawName, plusIsSpace: true),
        let value = URLCoding.percentDecode(rawValue, plusIsSpace: true)
      else { throw .invalid("The query string has a malformed percent-escape.") }
      pairs.append((name, value))
    }
  }

  /// The value of a parameter (case-insensitive name); nil when absent.
  func first(_ name: String) -> String? {
    pairs.first { $0.name.lowercased() == name }?.value
  }

  func required(_ name: String) throws(SignedURLError) -> String {
    let matches = pairs.filter { $0.name.lowercased() == name.lowercased() }
    guard let match = matches.first, !match.value.isEmpty else {
      throw .invalid("The signed URL has no \(name) parameter.")
    }
    guard matches.count == 1 else { throw .invalid("The signed URL gives \(name) more than once.") }
    return match.value
  }
}

extension Character {
  fileprivate var isASCIIDigit: Bool { isASCII && isNumber }
}
