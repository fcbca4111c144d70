import EmulatorHTTP
import EmulatorStorage

/// XML listings (ListObjectsV2 and V1, ListBuckets) and copy.
extension StorageAPI {
  func xmlListBuckets(_: XMLContext) -> HTTPResponse {
    var xml = XMLWriter()
    xml.open("ListAllMyBucketsResult", attributes: "xmlns=\"http://doc.s3.amazonaws.com/2006-03-01\"")
    xml.open("Owner")
    xml.element("ID", "storage-emulator")
    xml.close("Owner")
    xml.open("Buckets")
    for bucket in store.listBuckets() {
      xml.open("Bucket")
      xml.element("Name", bucket.name)
      xml.element("CreationDate", Timestamp.format(milliseconds: bucket.timeCreated))
      xml.close("Bucket")
    }
    xml.close("Buckets")
    xml.close("ListAllMyBucketsResult")
    return xml.response()
  }

  /// ListObjectsV2 (`list-type=2`: continuation-token, start-after, KeyCount) and V1 (marker).
  /// Continuation tokens are the JSON API's page tokens; a start-after or marker that ends with
  /// the delimiter skips everything under that common prefix.
  func xmlList(_ context: XMLContext) throws -> HTTPResponse {
    let (bucket, query) = (context.bucket, context.query)
    let v2 = query["list-type"] == "2"
    let urlEncoded = query["encoding-type"]?.lowercased() == "url"
    if let type = query["encoding-type"], type.lowercased() != "url" {
      throw XMLError(400, "InvalidArgument", "Invalid encoding-type '\(type)'; only 'url' is supported.")
    }
    var maxKeys = 1000
    if let text = query["max-keys"] {
      guard let value = Int(text), value >= 0 else {
        throw XMLError(400, "InvalidArgument", "Invalid max-keys '\(text)': not a non-negative integer.")
      }
      maxKeys = min(value, 1000)
    }
    var list = ListQuery()
    list.prefix = query["prefix"].flatMap { $0.isEmpty ? nil : $0 }
    list.delimiter = query["delimiter"].flatMap { $0.isEmpty ? nil : $0 }
    list.maxResults = max(maxKeys, 1)
    let after = v2 ? query["start-after"] : query["marker"]
    if v2, let token = query["continuation-token"], !token.isEmpty {
      list.pageToken = token
    } else if let after, !after.isEmpty {
      list.startOffset = Self.successor(after, delimiter: list.delimiter)
    }
    let page: ListPage
    if maxKeys == 0 {
      // Existence of the bucket still matters.
      _ = try store.bucket(bucket)
      page = ListPage()
    } else {
      page = try store.list(bucket: bucket, query: list)
    }
    func text(_ value: String) -> String { urlEncoded ? URLCoding.encodeComponent(value) : value }
    var xml = XMLWriter()
    xml.open("ListBucketResult", attributes: "xmlns=\"http://doc.s3.amazonaws.com/2006-03-01\"")
    xml.element("Name", bucket)
    xml.element("Prefix", text(list.prefix ?? ""))
    if let delimiter = list.delimiter { xml.element("Delimiter", text(delimiter)) }
    if urlEncoded { xml.element("EncodingType", "url") }
    xml.element("MaxKeys", String(maxKeys))
    let truncated = page.nextPageToken != nil
    if v2 {
      if let token = query["continuation-token"] { xml.element("ContinuationToken", token) }
      if let after = query["start-after"] { xml.element("StartAfter", text(after)) }
      xml.element("KeyCount", String(page.items.count + page.prefixes.count))
      if let next = page.nextPageToken { xml.element("NextContinuationToken", next) }
    } else {
      xml.element("Marker", text(query["marker"] ?? ""))
      if truncated {
        let lastKey = page.items.last?.name ?? ""
        let lastPrefix = page.prefixes.last ?? ""
        let last = lastKey.utf8.lexicographicallyPrecedes(lastPrefix.utf8) ? lastPrefix : lastKey
        xml.element("NextMarker", text(last))
      }
    }
    xml.element("IsTruncated", truncated ? "true" : "false")
    for object in page.items {
      xml.open("Contents")
      xml.element("Key", text(object.name))
      xml.element("Generation", String(object.generation))
      xml.element("MetaGeneration", String(object.metageneration))
      xml.element("LastModified", Timestamp.format(milliseconds: object.updated))
      xml.element("ETag", Self.xmlETag(object))
      xml.element("Size", String(object.size))
      xml.element("StorageClass", "STANDARD")
      xml.close("Contents")
    }
    for prefix in page.prefixes {
      xml.open("CommonPrefixes")
      xml.element("Prefix", text(prefix))
      xml.close("CommonPrefixes")
    }
    xml.close("ListBucketResult")
    return xml.response()
  }

  /// The least name listed after `key`: everything under `key` too when it ends with the
  /// delimiter (a common prefix already returned), else `key` + NUL.
  static func successor(_ key: String, delimiter: String?) -> String {
    if let delimiter, key.hasSuffix(delimiter), var last = key.utf8.last, last < 0x7F {
      last += 1
      var bytes = Array(key.utf8.dropLast())
      bytes.append(last)
      return String(decoding: bytes, as: UTF8.self)
    }
    return key + "\u{0}"
  }

  /// `PUT` with `x-goog-copy-source: /bucket/object` (percent-encoded; `?generation=` allowed):
  /// a server-side copy. `x-goog-metadata-directive: REPLACE` takes the request's headers as the
  /// metadata, `COPY` (the default) keeps the source's.
  func xmlCopy(_ context: XMLContext) throws -> HTTPResponse {
    let (request, bucket, name) = (context.request, context.bucket, context.name)
    let headers = request.headers
    let raw = (headers["x-goog-copy-source"] ?? "").trimmingASCIIWhitespace()
    var path = Substring(raw)
    var generation: Int64?
    if let question = path.firstIndex(of: "?") {
      let query = path[path.index(after: question)...]
      path = path[..<question]
      for item in query.split(separator: "&") where item.hasPrefix("generation=") {
        generation = try Self.xmlInt(String(item.dropFirst(11)), "x-goog-copy-source generation")
      }
    }
    if path.hasPrefix("/") { path = path.dropFirst() }
    guard let slash = path.firstIndex(of: "/"),
      let sourceBucket = URLCoding.percentDecode(path[..<slash]),
      let sourceName = URLCoding.percentDecode(path[path.index(after: slash)...]),
      !sourceBucket.isEmpty, !sourceName.isEmpty
    else {
      throw XMLError(400, "InvalidArgument", "x-goog-copy-source must be /bucket/object, got '\(raw)'.")
    }
    var sourceConditions = try Self.xmlConditions(headers, prefix: "x-goog-copy-source-if-")
    sourceConditions.generation =
      try Self.xmlInt(headers["x-goog-copy-source-generation"], "x-goog-copy-source-generation") ?? generation
    let conditions = try Self.xmlConditions(headers, prefix: "x-goog-if-")
    if let tag = headers["x-goog-copy-source-if-match"] ?? headers["x-goog-copy-source-if-none-match"] {
      let source = try store.metadata(bucket: sourceBucket, name: sourceName, conditions: sourceConditions)
      let wantMatch = headers["x-goog-copy-source-if-match"] != nil
      if Self.xmlTagsMatch(tag, source) != wantMatch {
        throw XMLError(412, "PreconditionFailed", "At least one of the pre-conditions you specified did not hold.")
      }
    }
    var patch = MetadataPatch()
    if headers["x-goog-metadata-directive"]?.uppercased() == "REPLACE" {
      patch = try Self.xmlPatch(headers)
      patch.clearCustom = true
      for field in [WritableField.contentType, .cacheControl, .contentDisposition, .contentEncoding, .contentLanguage]
      where patch.fields[field] == nil {
        patch.fields[field] = .remove
      }
    } else {
      try Self.xmlAccess(headers, into: &patch)
    }
    let object = try store.copy(
      from: sourceBucket, sourceName, sourceConditions: sourceConditions, to: bucket, name,
      upload: ObjectStore.Upload(patch: patch, createsBucket: limits.lenientBuckets), conditions: conditions)
    var xml = XMLWriter()
    xml.open("CopyObjectResult")
    xml.element("LastModified", Timestamp.format(milliseconds: object.updated))
    xml.element("ETag", Self.xmlETag(object))
    xml.close("CopyObjectResult")
    return xml.response(headers: Self.xmlObjectHeaders(object))
  }
}

/// IMF-fixdate parsing (`Sun, 06 Nov 1994 08:49:37 GMT`) for If-Modified-Since and friends.
enum HTTPDate {
  /// Seconds since the epoch, or nil for anything else (an unparsable date is ignored, as
  /// HTTP says).
  static func parse(_ text: String) -> Int64? {
    let parts = text.split(separator: " ")
    guard parts.count == 6, parts[5] == "GMT", parts[1].count == 2, parts[3].count == 4, parts[4].count == 8 else {
      return nil
    }
    let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
    guard let month = months.firstIndex(of: String(parts[2])) else { return nil }
    let iso = "\(parts[3])-\(month < 9 ? "0" : "")\(month + 1)-\(parts[1])T\(parts[4])Z"
    guard let milliseconds = Timestamp.parse(iso) else { return nil }
    return milliseconds / 1000
  }
}
