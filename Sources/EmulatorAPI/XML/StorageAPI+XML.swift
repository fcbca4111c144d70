import EmulatorHTTP
import EmulatorStorage
import Foundation

/// The XML API (PROTOCOL.md, "XML API"): objects at `/<bucket>/<object>` or on a virtual host,
/// answered with GCS's headers and XML documents. It shares the store, limits and name rules of
/// the JSON surfaces; its errors are `<Error><Code>…` documents.
extension StorageAPI {
  /// The XML route of a request, if it is one: the virtual host first, then a path no JSON
  /// surface has (see `XMLRoute`).
  func xmlRoute(_ head: HTTPRequestHead) -> Result<XMLRoute, XMLError>? {
    let virtualHost = limits.xmlVirtualHost
    // Every JSON-surface request passes here: its first segment is reserved (so `XMLRoute.match`
    // would refuse it too), and the cheap byte check comes before the Host is parsed.
    if XMLRoute.startsWithReservedSegment(head.rawPath),
      XMLRoute.bucket(fromHost: head.headers["host"], suffix: virtualHost) == nil
    {
      return nil
    }
    do {
      guard let route = try XMLRoute.match(head, virtualHost: virtualHost) else { return nil }
      return .success(route)
    } catch {
      return .failure(XMLError(error))
    }
  }

  /// Answers an XML request. `xmlGate`, when set (signed URLs), sees the request first.
  func xml(_ request: HTTPRequest, _ route: XMLRoute) -> HTTPResponse {
    // Signed URLs (StorageAPI+SignedURLs.swift), answered with GCS's XML error documents.
    if let failure = signedURLFailure(request, xml: true) { return failure }
    do throws(XMLError) {
      if let gate = xmlGate {
        do {
          try gate(request, route)
        } catch {
          throw XMLError(error)
        }
      }
      let query: QueryParameters
      do {
        query = try QueryParameters(request.head.rawQuery)
      } catch {
        throw XMLError(400, "InvalidArgument", error.message)
      }
      return try xmlDispatch(request, route, query)
    } catch {
      return error.response
    }
  }

  private func xmlDispatch(_ request: HTTPRequest, _ route: XMLRoute, _ query: QueryParameters) throws(XMLError)
    -> HTTPResponse
  {
    let method = request.method
    if let name = Self.subresources.first(where: { query[$0] != nil }) {
      // Never taken for the plain request: a PUT ?acl must not overwrite the object.
      throw XMLError(501, "NotImplemented", "The ?\(name) subresource is not emulated.")
    }
    guard let bucket = route.bucket else {
      guard method == "GET" || method == "HEAD" else { throw Self.xmlNotAllowed(method, "GET, HEAD") }
      return xmlListBuckets()
    }
    guard let name = route.name else {
      switch method {
      case "GET", "HEAD":
        return try xmlList(bucket: bucket, query: query)
      case "PUT":
        try xml { () throws(StorageError) in _ = try store.createBucket(bucket) }
        return HTTPResponse(status: 200)
      case "DELETE":
        try xml { () throws(StorageError) in try store.deleteBucket(bucket) }
        return HTTPResponse(status: 204)
      default: throw Self.xmlNotAllowed(method, "GET, HEAD, PUT, DELETE")
      }
    }
    try xml { () throws(StorageError) in try Naming.validateObjectName(name) }
    if query["uploads"] != nil || query["uploadId"] != nil {
      return try xmlMultipart(request, query, bucket: bucket, name: name)
    }
    switch method {
    case "GET", "HEAD": return try xmlGet(request, query, bucket: bucket, name: name)
    case "PUT":
      if request.headers["x-goog-copy-source"] != nil { return try xmlCopy(request, bucket: bucket, name: name) }
      return try xmlPut(request, bucket: bucket, name: name)
    case "POST" where request.headers["x-goog-resumable"]?.lowercased() == "start":
      do {
        return try xmlResumableStart(request, bucket: bucket, name: name)
      } catch {
        throw XMLError(error)
      }
    case "DELETE":
      var conditions = try Self.xmlConditions(request.headers, prefix: "x-goog-if-")
      conditions.generation = try Self.xmlInt(query["generation"], "generation")
      try xml { () throws(StorageError) in try store.delete(bucket: bucket, name: name, conditions: conditions) }
      return HTTPResponse(status: 204)
    default: throw Self.xmlNotAllowed(method, "GET, HEAD, PUT, DELETE")
    }
  }

  /// Query keys that name a bucket or object subresource the emulator does not serve.
  static let subresources = [
    "acl", "cors", "lifecycle", "logging", "website", "tagging", "versioning", "billing", "encryption",
    "encryptionConfig", "iam", "storageClass", "retention", "legal-hold", "policy", "notification", "location",
    "requestPayment", "object-lock", "websiteConfig",
  ]

  /// Runs a store call, turning its error into an XML one.
  func xml<T>(_ body: () throws(StorageError) -> T) throws(XMLError) -> T {
    do {
      return try body()
    } catch {
      throw XMLError(error)
    }
  }

  static func xmlNotAllowed(_ method: String, _ allow: String) -> XMLError {
    var error = XMLError(
      405, "MethodNotAllowed", "The specified method \(method) is not allowed here; allowed: \(allow).")
    error.headers.set("allow", allow)
    return error
  }

  static func xmlInt(_ text: String?, _ name: String) throws(XMLError) -> Int64? {
    guard let text else { return nil }
    guard let value = Int64(text.trimmingASCIIWhitespace()) else {
      throw XMLError(400, "InvalidArgument", "Invalid value for \(name): '\(text)' is not a 64-bit integer.")
    }
    return value
  }

  /// `x-goog-if-generation-match` and `x-goog-if-metageneration-match` (or the
  /// `x-goog-copy-source-if-…` ones with that prefix).
  static func xmlConditions(_ headers: HTTPHeaders, prefix: String) throws(XMLError) -> Preconditions {
    var conditions = Preconditions()
    conditions.ifGenerationMatch = try xmlInt(headers[prefix + "generation-match"], prefix + "generation-match")
    conditions.ifMetagenerationMatch = try xmlInt(
      headers[prefix + "metageneration-match"], prefix + "metageneration-match")
    return conditions
  }

  /// The XML API's ETag: the quoted hex MD5, or for a composite (no MD5) the CRC32C and the
  /// component count.
  static func xmlETag(_ object: ObjectMetadata) -> String {
    if let md5 = object.md5 { return "\"" + hex(md5) + "\"" }
    return "\"" + String(format: "%08x", object.crc32c) + "-\(object.componentCount ?? 1)\""
  }

  static func hex(_ bytes: [UInt8]) -> String {
    let digits = Array("0123456789abcdef".utf8)
    var out: [UInt8] = []
    out.reserveCapacity(bytes.count * 2)
    for byte in bytes {
      out.append(digits[Int(byte >> 4)])
      out.append(digits[Int(byte & 15)])
    }
    return String(decoding: out, as: UTF8.self)
  }

  /// Whether an `If-Match` / `If-None-Match` list names this object: its XML ETag, its JSON
  /// ETag, or `*`. Weak tags compare by their value.
  static func xmlTagsMatch(_ header: String, _ object: ObjectMetadata) -> Bool {
    let xmlTag = xmlETag(object)
    let bareXML = String(xmlTag.dropFirst().dropLast())
    for part in header.split(separator: ",") {
      var tag = String(part).trimmingASCIIWhitespace()
      if tag.hasPrefix("W/") { tag = String(tag.dropFirst(2)) }
      if tag == "*" || tag == xmlTag || tag == bareXML || tag == object.etag || tag == "\"\(object.etag)\"" {
        return true
      }
    }
    return false
  }

  private func xmlGet(_ request: HTTPRequest, _ query: QueryParameters, bucket: String, name: String) throws(XMLError)
    -> HTTPResponse
  {
    let headers = request.headers
    var conditions = try Self.xmlConditions(headers, prefix: "x-goog-if-")
    conditions.generation = try Self.xmlInt(query["generation"], "generation")
    let (object, data) = try xml { () throws(StorageError) in
      try store.open(bucket: bucket, name: name, conditions: conditions)
    }
    let lastModified = object.updated / 1000
    if let header = headers["if-match"], !Self.xmlTagsMatch(header, object) {
      throw XMLError(412, "PreconditionFailed", "At least one of the pre-conditions you specified did not hold.")
    }
    if let header = headers["if-unmodified-since"], let since = HTTPDate.parse(header), lastModified > since {
      throw XMLError(412, "PreconditionFailed", "At least one of the pre-conditions you specified did not hold.")
    }
    var notModified = false
    if let header = headers["if-none-match"] {
      notModified = Self.xmlTagsMatch(header, object)
    } else if let header = headers["if-modified-since"], let since = HTTPDate.parse(header) {
      notModified = lastModified <= since
    }
    if notModified {
      var error = XMLError(304, "NotModified", "Not Modified")
      error.headers.set("etag", Self.xmlETag(object))
      error.headers.set("last-modified", Self.httpDate(milliseconds: object.updated))
      throw error
    }
    var response: HTTPResponse
    do {
      response = try media(object, data, requestHeaders: headers)
    } catch {
      throw XMLError(error)
    }
    response.headers.set("etag", Self.xmlETag(object))
    return response
  }

  private func xmlPut(_ request: HTTPRequest, bucket: String, name: String) throws(XMLError) -> HTTPResponse {
    let headers = request.headers
    let patch = try Self.xmlPatch(headers)
    var hashes: (md5: [UInt8]?, crc: UInt32?)
    do {
      hashes = try Self.expectedHashes(document: nil, header: headers["x-goog-hash"])
    } catch {
      throw XMLError(400, "InvalidDigest", error.message)
    }
    if let text = headers["content-md5"] {
      guard let data = Data(base64Encoded: text.trimmingASCIIWhitespace()), data.count == 16 else {
        throw XMLError(400, "InvalidDigest", "The Content-MD5 you specified is not valid.")
      }
      if let other = hashes.md5, other != Array(data) {
        throw XMLError(400, "InvalidDigest", "Content-MD5 and the x-goog-hash md5 differ.")
      }
      hashes.md5 = Array(data)
    }
    let conditions = try Self.xmlConditions(headers, prefix: "x-goog-if-")
    let upload = ObjectStore.Upload(
      patch: patch, expectedMD5: hashes.md5, expectedCRC32C: hashes.crc, createsBucket: limits.lenientBuckets)
    let object = try xml { () throws(StorageError) in
      try store.insert(bucket: bucket, name: name, source: Self.source(request), upload: upload, conditions: conditions)
    }
    return HTTPResponse(status: 200, headers: Self.xmlObjectHeaders(object))
  }

  /// Metadata from an XML request's headers: Content-Type, Cache-Control, Content-Disposition,
  /// Content-Encoding, Content-Language and `x-goog-meta-*`.
  static func xmlPatch(_ headers: HTTPHeaders) throws(XMLError) -> MetadataPatch {
    var patch = MetadataPatch()
    let fields: [(String, WritableField)] = [
      ("content-type", .contentType), ("cache-control", .cacheControl), ("content-disposition", .contentDisposition),
      ("content-encoding", .contentEncoding), ("content-language", .contentLanguage),
    ]
    for (header, field) in fields {
      guard let value = headers[header], !value.isEmpty else { continue }
      if field == .contentType || field == .contentDisposition {
        do {
          try checkParameters(value, header)
        } catch {
          throw XMLError(400, "InvalidArgument", error.message)
        }
      }
      patch.fields[field] = .set(value)
    }
    for (key, value) in headers where key.hasPrefix("x-goog-meta-") && key.count > 12 {
      patch.customUpdates[String(key.dropFirst(12))] = .some(value)
    }
    try xmlAccess(headers, into: &patch)
    return patch
  }

  /// The headers GCS sends with an object on the XML API (PUT, copy, HEAD share them).
  static func xmlObjectHeaders(_ object: ObjectMetadata) -> HTTPHeaders {
    var headers = HTTPHeaders()
    headers.add("etag", xmlETag(object))
    headers.add("last-modified", httpDate(milliseconds: object.updated))
    var hash = "crc32c=\(object.crc32cBase64)"
    if let md5 = object.md5Base64 { hash += ",md5=\(md5)" }
    headers.add("x-goog-hash", hash)
    headers.add("x-goog-generation", String(object.generation))
    headers.add("x-goog-metageneration", String(object.metageneration))
    headers.add("x-goog-stored-content-length", String(object.size))
    headers.add("x-goog-stored-content-encoding", object.contentEncoding ?? "identity")
    headers.add("x-goog-storage-class", object.storageClass ?? "STANDARD")
    return headers
  }
}
