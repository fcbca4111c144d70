import EmulatorHTTP
import EmulatorStorage
import EmulatorSupport

/// Signed URLs and V4 POST policy form uploads (docs/PROTOCOL.md "Signed URLs").
extension StorageAPI {
  /// The signed-URL check. Nil when the request carries no signed-URL parameters, or carries them
  /// and they hold (not expired, well formed, and — with keys configured — a valid signature);
  /// otherwise GCS's error, as an XML document when `xml` (the XML API) or as JSON.
  ///
  /// The JSON surfaces call it in `prepare`; the XML API calls it before its handler runs.
  public func signedURLFailure(_ request: HTTPRequest, xml: Bool) -> HTTPResponse? {
    let head = request.head
    guard SignedURLVerifier.isSigned(rawQuery: head.rawQuery) else { return nil }
    do {
      try signing.verify(
        SignedURLVerifier.Request(
          method: head.method, rawPath: head.rawPath, rawQuery: head.rawQuery, headers: head.headers),
        now: Timestamp.nowMilliseconds() / 1000)
      return nil
    } catch {
      return error.response(xml: xml)
    }
  }

  /// The bucket of a POST policy upload: `POST /<bucket>` or `POST /<bucket>/` (path style, a path
  /// no other route serves: bucket names never contain `/`, and the emulator's own first segments
  /// are not buckets), or `POST /` with `Host: <bucket>.<virtualHost>` (virtual-host style).
  static func postPolicyBucket(_ head: HTTPRequestHead, virtualHost: String = "") -> String? {
    guard head.method.sameUTF8("POST") else { return nil }
    // Every other POST (uploads above all) has a second `/` inside its path: found on the bytes,
    // before the string work below (which cost ~1,500 instructions on every upload).
    let oneSegment = head.rawPath.withUTF8Bytes { bytes in
      guard bytes.first == UInt8(ascii: "/") else { return false }
      let end = bytes.count > 1 && bytes[bytes.count - 1] == UInt8(ascii: "/") ? bytes.count - 1 : bytes.count
      return !UnsafeBufferPointer(rebasing: bytes[1..<end]).contains(UInt8(ascii: "/"))
    }
    guard oneSegment else { return nil }
    if head.rawPath.utf8Equals("/") {
      guard let bucket = XMLRoute.bucket(fromHost: head.headers["host"], suffix: virtualHost),
        (try? Naming.validateBucketName(bucket)) != nil
      else { return nil }
      return bucket
    }
    var path = head.rawPath
    guard path.utf8.first == UInt8(ascii: "/") else { return nil }
    path = path.dropFirst()
    if path.utf8.last == UInt8(ascii: "/") { path = path.dropLast() }
    guard !path.isEmpty, !path.utf8.contains(UInt8(ascii: "/")),
      (try? Route.match(rawPath: head.rawPath)) == nil,
      let bucket = URLCoding.percentDecode(path), !XMLRoute.reserved.contains(bucket),
      (try? Naming.validateBucketName(bucket)) != nil
    else { return nil }
    return bucket
  }

  /// A browser form upload with a V4 POST policy (`multipart/form-data` with `key`, `policy`,
  /// `x-goog-algorithm`, `x-goog-credential`, `x-goog-date`, `x-goog-signature`, then `file`).
  func postPolicyUpload(_ request: HTTPRequest) -> HTTPResponse {
    guard let bucket = Self.postPolicyBucket(request.head, virtualHost: limits.xmlVirtualHost) else {
      return APIError(404, .notFound, "No bucket for this POST policy upload.").response(.gcs)
    }
    do throws(SignedURLError) {
      let form = try PostPolicyForm(contentType: request.headers["content-type"] ?? "", body: request.bodyBytes())
      let name = try form.objectName()
      let policyText = try form.required("policy")
      guard let decoded = Data(base64Encoded: policyText), let policy = try? JSONValue.parse(Array(decoded)) else {
        throw SignedURLError(
          400, "InvalidPolicyDocument", "The policy document is not valid.",
          details: "The policy field must be base64 of a JSON document.")
      }
      let algorithm = try form.required("x-goog-algorithm")
      guard algorithm == "GOOG4-RSA-SHA256" || algorithm == "GOOG4-HMAC-SHA256" else {
        throw .invalid("Unsupported x-goog-algorithm '\(algorithm)'; use GOOG4-RSA-SHA256 or GOOG4-HMAC-SHA256.")
      }
      let credential = try SignedURLVerifier.Credential(try form.required("x-goog-credential"))
      let date = try form.required("x-goog-date")
      guard SignedURLVerifier.parseV4Date(date) != nil, date.hasPrefix(credential.date) else {
        throw .invalid("x-goog-date must be YYYYMMDD'T'HHMMSS'Z' on the credential's date, got '\(date)'.")
      }
      guard let signature = Hex.decode(try form.required("x-goog-signature")) else {
        throw .invalid("x-goog-signature must be hexadecimal.")
      }
      if !signing.keys.isEmpty {
        // The signature covers the policy field exactly as sent (base64 text).
        guard
          try signing.check(
            algorithm: algorithm, credential: credential, message: Array(policyText.utf8), signature: signature)
        else {
          throw .mismatch("No configured key verifies the policy's signature.", stringToSign: policyText)
        }
      }
      try form.check(policy: policy, bucket: bucket, now: Timestamp.nowMilliseconds() / 1000)
      let object: ObjectMetadata
      do {
        object = try store.insert(
          bucket: bucket, name: name, source: .bytes(form.file), upload: ObjectStore.Upload(patch: form.metadataPatch())
        )
      } catch {
        throw Self.xmlError(error)
      }
      return Self.postPolicyResponse(form, object: object, host: request.headers["host"] ?? "127.0.0.1")
    } catch {
      return error.response(xml: true)
    }
  }

  /// `success_action_redirect` (303 to it, with bucket, key and etag), or `success_action_status`
  /// 200, 201 (a `PostResponse` document) or 204 (the default).
  static func postPolicyResponse(_ form: PostPolicyForm, object: ObjectMetadata, host: String) -> HTTPResponse {
    let etag = "\"" + (object.md5 ?? []).map { SignedURLVerifier.hexDigit($0) }.joined() + "\""
    if let redirect = form.fields["success_action_redirect"], !redirect.isEmpty {
      let query =
        "bucket=\(URLCoding.encodeComponent(object.bucket))&key=\(URLCoding.encodeComponent(object.name))&etag=\(URLCoding.encodeComponent(etag))"
      let location = redirect + (redirect.contains("?") ? "&" : "?") + query
      return HTTPResponse(.seeOther, headers: ["location": location, "etag": etag])
    }
    switch form.fields["success_action_status"] {
    case "200": return HTTPResponse(.ok, headers: ["etag": etag])
    case "201":
      let location =
        "http://\(host)/\(URLCoding.encodeComponent(object.bucket))/\(SignedURLVerifier.encode(object.name, keepSlash: true))"
      let body =
        "<?xml version='1.0' encoding='UTF-8'?><PostResponse><Location>\(SignedURLError.escape(location))</Location><Bucket>\(SignedURLError.escape(object.bucket))</Bucket><Key>\(SignedURLError.escape(object.name))</Key><ETag>\(SignedURLError.escape(etag))</ETag></PostResponse>"
      return HTTPResponse(
        .created, headers: ["etag": etag, "content-type": "application/xml; charset=UTF-8"], body: Array(body.utf8))
    default: return HTTPResponse(.noContent, headers: ["etag": etag])
    }
  }

  /// A storage error as the XML API names it.
  static func xmlError(_ error: StorageError) -> SignedURLError {
    let api = APIError(error)
    let code =
      switch error {
      case .bucketNotFound: "NoSuchBucket"
      case .tooLarge: "EntityTooLarge"
      case .conditionNotMet: "PreconditionFailed"
      case .insufficientStorage: "InsufficientStorage"
      case .io: "InternalError"
      default: "InvalidArgument"
      }
    return SignedURLError(api.status, code, api.message)
  }
}
