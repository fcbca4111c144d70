import EmulatorHTTP
import EmulatorStorage

/// A refused signed URL or POST policy, answered as GCS does: an XML `<Error>` document on the
/// XML surface, the JSON error shape on the JSON surfaces, with the `Code` as the reason.
public struct SignedURLError: Error, Sendable, Equatable {
  public var status: Int
  /// GCS's XML error code: `SignatureDoesNotMatch`, `ExpiredToken`, `InvalidArgument`,
  /// `AccessDenied`, `EntityTooLarge`, `EntityTooSmall`, `InvalidPolicyDocument`.
  public var code: String
  public var message: String
  public var details: String
  /// For `SignatureDoesNotMatch` on a V4 URL, what the emulator signed (GCS shows both too).
  public var stringToSign: String?
  public var canonicalRequest: String?

  public init(_ status: Int, _ code: String, _ message: String, details: String = "") {
    self.status = status
    self.code = code
    self.message = message
    self.details = details
  }

  static func invalid(_ details: String) -> SignedURLError {
    SignedURLError(400, "InvalidArgument", "Invalid argument.", details: details)
  }

  static func mismatch(_ details: String, stringToSign: String? = nil, canonicalRequest: String? = nil)
    -> SignedURLError
  {
    var error = SignedURLError(
      403, "SignatureDoesNotMatch",
      "The request signature we calculated does not match the signature you provided. Check your Google secret key and signing method.",
      details: details)
    error.stringToSign = stringToSign
    error.canonicalRequest = canonicalRequest
    return error
  }

  static func expired(_ details: String) -> SignedURLError {
    SignedURLError(400, "ExpiredToken", "Invalid argument.", details: details)
  }

  public func response(xml: Bool) -> HTTPResponse {
    if xml {
      var text = "<?xml version='1.0' encoding='UTF-8'?><Error><Code>\(Self.escape(code))</Code>"
      text += "<Message>\(Self.escape(message))</Message>"
      if !details.isEmpty { text += "<Details>\(Self.escape(details))</Details>" }
      if let stringToSign { text += "<StringToSign>\(Self.escape(stringToSign))</StringToSign>" }
      if let canonicalRequest { text += "<CanonicalRequest>\(Self.escape(canonicalRequest))</CanonicalRequest>" }
      text += "</Error>"
      return HTTPResponse(
        status: status, headers: ["content-type": "application/xml; charset=UTF-8"], body: Array(text.utf8))
    }
    let full = details.isEmpty ? message : "\(message) \(details)"
    var json = JSONWriter(capacity: 256)
    json.beginObject()
    json.objectKey("error")
    json.raw("code", String(status))
    json.string("message", full)
    json.beginArray("errors")
    json.beginObject()
    json.string("domain", "global")
    json.string("reason", code)
    json.string("message", full)
    json.endObject()
    json.endArray()
    json.endObject()
    json.endObject()
    return HTTPResponse(status: status, headers: ["content-type": "application/json; charset=UTF-8"], body: json.bytes)
  }

  static func escape(_ text: String) -> String { XMLWriter.escape(text) }
}
