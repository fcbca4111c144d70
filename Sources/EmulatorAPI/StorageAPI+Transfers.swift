import EmulatorHTTP
import EmulatorStorage
import EmulatorSupport

extension StorageAPI {
  // MARK: Downloads

  /// `?alt=media` and `/download/...`: the stored bytes with their hashes and stored headers; a
  /// single `Range` gives 206 (416 when unsatisfiable). Nothing is compressed on the fly. An
  /// object stored with `contentEncoding: gzip` is sent as stored only to a client whose
  /// `Accept-Encoding` explicitly allows gzip; others get it decompressed (no Content-Length,
  /// Range ignored, `X-Goog-Hash` still describing the stored bytes), as GCS does.
  func download(_ context: RequestContext) throws -> HTTPResponse {
    let (bucket, name) = (context.bucket, context.name)
    try Self.validate(name)
    try authorizeRead(context, bucket: bucket, name: name)
    let headers = context.request.headers
    let conditions = try RequestOptions.preconditions(context.query, headers, read: true)
    let (object, data) = try store.open(bucket: bucket, name: name, conditions: conditions)
    if context.flavour.usesDownloadTokens, let token = context.query["token"], !object.downloadTokens.contains(token) {
      throw APIError(403, .forbidden, "Permission denied: the download token does not match this object.")
    }
    return try media(object, data, requestHeaders: headers)
  }

  /// An object's bytes as GCS serves them (JSON media download and XML GET alike): its headers,
  /// a `Range`, gzip transcoding.
  func media(_ object: ObjectMetadata, _ data: ObjectData, requestHeaders headers: HTTPHeaders) throws
    -> HTTPResponse
  {
    var response = HTTPHeaders()
    response.add("content-type", object.contentType ?? "application/octet-stream")
    response.add("etag", object.etag)
    response.add("last-modified", Self.httpDate(milliseconds: object.updated))
    var hash = "crc32c=\(object.crc32cBase64)"
    if let md5 = object.md5Base64 { hash += ",md5=\(md5)" }
    response.add("x-goog-hash", hash)
    response.add("x-goog-generation", String(object.generation))
    response.add("x-goog-metageneration", String(object.metageneration))
    response.add("x-goog-storage-class", object.storageClass ?? "STANDARD")
    response.add("x-goog-stored-content-encoding", object.contentEncoding ?? "identity")
    response.add("x-goog-stored-content-length", String(object.size))
    if let value = object.cacheControl { response.add("cache-control", value) }
    if let value = object.contentDisposition { response.add("content-disposition", value) }
    if let value = object.contentLanguage { response.add("content-language", value) }
    for (key, value) in object.sortedCustom where Self.isHeaderToken(key) {
      response.add("x-goog-meta-" + key, value)
    }
    let gzipStored = object.contentEncoding?.lowercased() == "gzip"
    let noTransform = object.cacheControl?.lowercased().contains("no-transform") ?? false
    if gzipStored && !noTransform && !Self.acceptsGzip(headers["accept-encoding"]) {
      var transcoded = HTTPResponse(.ok, headers: response)
      transcoded.bodyStream = GzipInflateStream(data)
      return transcoded
    }
    if let value = object.contentEncoding { response.add("content-encoding", value) }
    response.add("accept-ranges", "bytes")
    let size = Int(object.size)
    var first = 0
    var last = size - 1
    var status = 200
    if let rangeHeader = headers["range"], let range = ByteRange.parse(rangeHeader) {
      guard let (start, end) = range.resolve(size: object.size).map({ (Int($0.first), Int($0.last)) }) else {
        response.set("content-range", "bytes */\(size)")
        throw APIError(
          416, .rangeNotSatisfiable, "The requested range '\(rangeHeader)' is not satisfiable for \(size) bytes.",
          headers: response)
      }
      response.add("content-range", "bytes \(start)-\(end)/\(size)")
      (first, last, status) = (start, end, 206)
    }
    var reply = HTTPResponse(status: status, headers: response)
    switch data {
    case .bytes(let bytes):
      reply.body = size == 0 ? [] : Array(bytes[first...last])
    case .file(let file):
      reply.bodyFile = FileRegion(fd: file.fd, offset: first, length: max(0, last - first + 1), owner: file)
    }
    return reply
  }

  /// Whether `Accept-Encoding` names gzip with a non-zero quality (`*` does not count).
  static func acceptsGzip(_ header: String?) -> Bool {
    guard let header else { return false }
    for item in header.split(separator: ",") {
      let parts = item.split(separator: ";").map { $0.trimmingWhitespace().lowercased() }
      guard let coding = parts.first, coding == "gzip" || coding == "x-gzip" else { continue }
      let quality = parts.dropFirst().first { $0.hasPrefix("q=") }.flatMap { Double($0.dropFirst(2)) } ?? 1
      return quality > 0
    }
    return false
  }

  static func isHeaderToken(_ key: String) -> Bool {
    !key.isEmpty
      && key.utf8.allSatisfy { byte in
        (48...57).contains(byte) || (65...90).contains(byte) || (97...122).contains(byte)
          || "!#$%&'*+-.^_`|~".utf8.contains(byte)
      }
  }

  /// IMF-fixdate (RFC 9110 §5.6.7), e.g. `Sun, 06 Nov 1994 08:49:37 GMT`.
  static func httpDate(milliseconds: Int64) -> String {
    let iso = Timestamp.format(milliseconds: milliseconds)  // YYYY-MM-DDTHH:MM:SS.sssZ
    let days = Int((milliseconds >= 0 ? milliseconds : milliseconds - 86_399_999) / 86_400_000)
    let weekday = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"][((days % 7) + 7) % 7]
    let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
    let parts = Array(iso.utf8)
    let year = String(decoding: parts[0..<4], as: UTF8.self)
    let month = months[Int(String(decoding: parts[5..<7], as: UTF8.self))! - 1]
    let day = String(decoding: parts[8..<10], as: UTF8.self)
    let time = String(decoding: parts[11..<19], as: UTF8.self)
    return "\(weekday), \(day) \(month) \(year) \(time) GMT"
  }
}
