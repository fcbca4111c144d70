import Crypto
import EmulatorStorage
import EmulatorSupport
import _CryptoExtras

/// The keys signed URLs and POST policies are verified with: RSA public keys (V4
/// `GOOG4-RSA-SHA256`, V2, RSA-signed policies) and HMAC secrets (`GOOG4-HMAC-SHA256`). With
/// none, signatures are not checked (expiry and shape still are).
public struct SigningKeys: Sendable {
  public struct RSAKey: Sendable {
    /// The service account's email when it is known (from a service-account JSON): a URL whose
    /// credential names another account is not verified with this key.
    public var email: String?
    public var key: _RSA.Signing.PublicKey
  }

  public private(set) var rsa: [RSAKey] = []
  /// Access ID → secret (the secret's text, as GCS derives the signing key from it).
  public private(set) var hmac: [String: [UInt8]] = [:]

  public init() {}

  public var isEmpty: Bool { rsa.isEmpty && hmac.isEmpty }

  /// Adds the key in `text`: a PEM public key (`PUBLIC KEY` or `RSA PUBLIC KEY`), a PEM X.509
  /// `CERTIFICATE` (its subject public key), or a service-account JSON key file (the public half
  /// of its `private_key`, with its `client_email`). `source` names it in errors.
  public mutating func addRSA(_ text: String, source: String) throws(SigningKeyError) {
    let trimmed = text.trimmingWhitespaceAndNewlines()
    if trimmed.hasPrefix("{") {
      guard let object = try? JSONValue.parse(Array(trimmed.utf8)), let pem = object["private_key"]?.stringValue
      else {
        throw SigningKeyError("\(source): a JSON key must be a service-account key file with a 'private_key'.")
      }
      do {
        let key = try _RSA.Signing.PrivateKey(pemRepresentation: pem)
        rsa.append(RSAKey(email: object["client_email"]?.stringValue, key: key.publicKey))
      } catch {
        throw SigningKeyError("\(source): its private_key is not an RSA key of 2048 bits or more (\(error)).")
      }
      return
    }
    if trimmed.contains("-----BEGIN CERTIFICATE-----") {
      guard let der = Self.pemBody(trimmed, label: "CERTIFICATE"),
        let spki = DER.subjectPublicKeyInfo(ofCertificate: der)
      else {
        throw SigningKeyError("\(source): the certificate could not be read (expected PEM X.509).")
      }
      do {
        rsa.append(RSAKey(email: nil, key: try _RSA.Signing.PublicKey(derRepresentation: spki)))
      } catch {
        throw SigningKeyError("\(source): the certificate's key is not an RSA key of 2048 bits or more.")
      }
      return
    }
    do {
      rsa.append(RSAKey(email: nil, key: try _RSA.Signing.PublicKey(pemRepresentation: trimmed)))
    } catch {
      throw SigningKeyError(
        "\(source): not a PEM RSA public key (2048 bits or more), certificate or service-account JSON.")
    }
  }

  /// Adds `ACCESS_ID:SECRET`.
  public mutating func addHMAC(_ spec: String) throws(SigningKeyError) {
    guard let colon = spec.firstIndex(of: ":"), colon != spec.startIndex, spec.index(after: colon) != spec.endIndex
    else {
      throw SigningKeyError("an HMAC key must be given as ACCESS_ID:SECRET")
    }
    hmac[String(spec[..<colon])] = Array(spec[spec.index(after: colon)...].utf8)
  }

  static func pemBody(_ text: String, label: String) -> [UInt8]? {
    guard let begin = text.firstRange(of: "-----BEGIN \(label)-----"),
      let end = text[begin.upperBound...].firstRange(of: "-----END \(label)-----")
    else { return nil }
    let base64 = text[begin.upperBound..<end.lowerBound].filter { !$0.isWhitespace }
    return Data(base64Encoded: String(base64)).map { Array($0) }
  }
}

public struct SigningKeyError: Error, Sendable, Equatable {
  public var message: String
  public init(_ message: String) { self.message = message }
}

/// Just enough DER (X.690) to find a certificate's SubjectPublicKeyInfo.
enum DER {
  /// The element at `offset`: its tag, where its content starts, and where it ends. Nil for a
  /// truncated element, an indefinite or over-long length.
  static func element(_ bytes: [UInt8], at offset: Int, limit: Int) -> (tag: UInt8, content: Int, end: Int)? {
    guard offset + 2 <= limit else { return nil }
    let tag = bytes[offset]
    let first = Int(bytes[offset + 1])
    var content = offset + 2
    var length = first
    if first & 0x80 != 0 {
      let count = first & 0x7F
      guard count >= 1, count <= 4, content + count <= limit else { return nil }
      length = 0
      for index in 0..<count { length = length << 8 | Int(bytes[content + index]) }
      content += count
    }
    guard length <= limit - content else { return nil }
    return (tag, content, content + length)
  }

  /// Certificate ::= SEQUENCE { tbsCertificate SEQUENCE { [0] version OPTIONAL, serialNumber,
  /// signature, issuer, validity, subject, subjectPublicKeyInfo, ... }, ... } (RFC 5280 §4.1).
  static func subjectPublicKeyInfo(ofCertificate der: [UInt8]) -> [UInt8]? {
    guard let certificate = element(der, at: 0, limit: der.count), certificate.tag == 0x30,
      let tbs = element(der, at: certificate.content, limit: certificate.end), tbs.tag == 0x30
    else { return nil }
    var offset = tbs.content
    var index = 0
    while offset < tbs.end {
      guard let child = element(der, at: offset, limit: tbs.end) else { return nil }
      if !(index == 0 && child.tag == 0xA0) {
        if index == 5 { return child.tag == 0x30 ? Array(der[offset..<child.end]) : nil }
        index += 1
      }
      offset = child.end
    }
    return nil
  }
}
