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
  /// Written as bytes from the civil date (every download sends `Last-Modified`).
  static func httpDate(milliseconds: Int64) -> String {
    let days = CivilDate.floorDivide(milliseconds, 86_400_000)
    let msOfDay = milliseconds - days * 86_400_000
    let (year, month, day) = CivilDate.civil(days: days)
    var out: [UInt8] = []
    out.reserveCapacity(29)
    func digits(_ value: Int64, _ width: Int) {
      var divisor: Int64 = 1
      for _ in 1..<width { divisor *= 10 }
      while value / divisor >= 10 { divisor *= 10 }
      while divisor > 0 {
        out.append(UInt8(truncatingIfNeeded: 48 + value / divisor % 10))
        divisor /= 10
      }
    }
    // Day 0 (1970-01-01) was a Thursday.
    out.append(contentsOf: Self.weekdays[Int((days % 7 + 7) % 7)])
    out.append(contentsOf: ", ".utf8)
    digits(day, 2)
    out.append(32)
    out.append(contentsOf: Self.months[Int(month - 1)])
    out.append(32)
    digits(max(year, 0), 4)
    out.append(32)
    digits(msOfDay / 3_600_000, 2)
    out.append(UInt8(ascii: ":"))
    digits(msOfDay / 60_000 % 60, 2)
    out.append(UInt8(ascii: ":"))
    digits(msOfDay / 1000 % 60, 2)
    out.append(contentsOf: " GMT".utf8)
    return String(decoding: out, as: UTF8.self)
  }

  private static let weekdays = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"].map { Array($0.utf8) }
  private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
    .map { Array($0.utf8) }
}
