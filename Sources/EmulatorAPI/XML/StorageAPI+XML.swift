import EmulatorHTTP
import EmulatorStorage
import EmulatorSupport

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

  /// Answers an XML request with its entry from `table`. Signed URLs and `xmlGate` (when set)
  /// see the request first; subresources the emulator does not serve are refused before any
  /// entry (a PUT ?acl must not overwrite the object).
  func xml(_ request: HTTPRequest, _ route: XMLRoute, in table: RouteTable) -> HTTPResponse {
    // Signed URLs (StorageAPI+SignedURLs.swift), answered with GCS's XML error documents.
    if let failure = signedURLFailure(request, xml: true) { return failure }
    do {
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
      if let name = Self.subresources.first(where: { query[$0] != nil }) {
        throw XMLError(501, "NotImplemented", "The ?\(name) subresource is not emulated.")
      }
      if let name = route.name { try Naming.validateObjectName(name) }
      let candidates = table.xmlEntries(Self.level(route))
      let flags = Self.xmlFlags(request.head, query)
      guard let entry = table.first(candidates, method: request.method, flags: flags),
        case .xml(let handler) = entry.handler
      else {
        let allowed = table.methods(xmlPathEntries(request.head, route, in: table), flags: flags)
        throw Self.xmlNotAllowed(request.method, allowed.joined(separator: ", "))
      }
      return try handler(self)(XMLContext(request: request, route: route, query: query))
    } catch {
      return XMLError(mapping: error).response
    }
  }

  func xmlCreateBucket(_ context: XMLContext) throws -> HTTPResponse {
    _ = try store.createBucket(context.bucket)
    return HTTPResponse(.ok)
  }

  func xmlDeleteBucket(_ context: XMLContext) throws -> HTTPResponse {
    try store.deleteBucket(context.bucket)
    return HTTPResponse(.noContent)
  }

  func xmlDelete(_ context: XMLContext) throws -> HTTPResponse {
    var conditions = try Self.xmlConditions(context.request.headers, prefix: "x-goog-if-")
    conditions.generation = try Self.xmlInt(context.query["generation"], "generation")
    try store.delete(bucket: context.bucket, name: context.name, conditions: conditions)
    return HTTPResponse(.noContent)
  }

  /// Query keys that name a bucket or object subresource the emulator does not serve.
  static let subresources = [
    "acl", "cors", "lifecycle", "logging", "website", "tagging", "versioning", "billing", "encryption",
    "encryptionConfig", "iam", "storageClass", "retention", "legal-hold", "policy", "notification", "location",
    "requestPayment", "object-lock", "websiteConfig",
  ]

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
    if let md5 = object.md5 { return "\"" + Hex.encode(md5) + "\"" }
    return "\"" + Hex.padded(object.crc32c, width: 8) + "-\(object.componentCount ?? 1)\""
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

  func xmlGet(_ context: XMLContext) throws -> HTTPResponse {
    let (request, query, bucket, name) = (context.request, context.query, context.bucket, context.name)
    let headers = request.headers
    var conditions = try Self.xmlConditions(headers, prefix: "x-goog-if-")
    conditions.generation = try Self.xmlInt(query["generation"], "generation")
    let (object, data) = try store.open(bucket: bucket, name: name, conditions: conditions)
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
      throw XMLError(mapping: error)
    }
    response.headers.set("etag", Self.xmlETag(object))
    return response
  }

  func xmlPut(_ context: XMLContext) throws -> HTTPResponse {
    let (request, bucket, name) = (context.request, context.bucket, context.name)
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
    let object = try store.insert(bucket: bucket, name: name, source: Self.source(request), upload: upload, conditions: conditions)
    return HTTPResponse(.ok, headers: Self.xmlObjectHeaders(object))
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
