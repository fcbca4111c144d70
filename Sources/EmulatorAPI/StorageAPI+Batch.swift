import EmulatorHTTP
import EmulatorStorage

/// `POST /batch/storage/v1`: a `multipart/mixed` body whose parts are each an `application/http`
/// request (what the Python and Go clients send for bulk deletes and patches). Every part is run
/// in order through this API's own handling (routing, query rules, signed URLs, body limits),
/// and the answer is a `multipart/mixed` of the parts' responses, each with the part's
/// `Content-ID` as `response-<id>`. A malformed part gets its own 400; the batch as a whole
/// fails only when its envelope is unreadable or has more than `maxBatchParts` parts.
extension StorageAPI {
  static let batchPath = "/batch/storage/v1"
  /// At most this many requests in one batch (GCS's limit).
  static let maxBatchParts = 100
  /// One part's request line and headers.
  static let maxBatchPartHeadBytes = 16 * 1024
  /// Headers in one part's request.
  static let maxBatchPartHeaders = 64

  static func isBatch(_ head: HTTPRequestHead) -> Bool { head.rawPath.utf8.elementsEqual(batchPath.utf8) }

  /// Answers a batch request (the whole body is within `maxMetadataBytes`, as `BodyLimits` gives).
  func batch(_ request: HTTPRequest) -> HTTPResponse {
    guard request.method == "POST" else {
      return Self.notAllowed(request.method, "POST").response(.gcs)
    }
    let body = request.bodyBytes()
    let parts: [MultipartRelated.Part]
    do {
      let boundary = try MultipartRelated.boundary(from: request.headers["content-type"] ?? "")
      parts = try MultipartRelated.parse(
        body, boundary: boundary,
        limits: .init(maxFirstPartBytes: limits.maxMetadataBytes, maxParts: Self.maxBatchParts, maxPartHeaderBytes: 8 * 1024))
    } catch {
      return error.response(.gcs)
    }
    guard !parts.isEmpty else {
      return APIError(400, .invalid, "A batch request needs at least one part.").response(.gcs)
    }
    let boundary = "batch_" + String(UInt64.random(in: 0...UInt64.max), radix: 36)
    var out: [UInt8] = []
    for part in parts {
      let response = batchPart(Array(body[part.range]), host: request.headers["host"])
      out.append(contentsOf: "--\(boundary)\r\ncontent-type: application/http\r\n".utf8)
      if let id = part.headers["content-id"] {
        let inner = id.hasPrefix("<") && id.hasSuffix(">") ? String(id.dropFirst().dropLast()) : id
        out.append(contentsOf: "content-id: <response-\(inner)>\r\n".utf8)
      }
      out.append(contentsOf: "\r\n".utf8)
      out.append(contentsOf: response.encoded(includeBody: true))
      out.append(contentsOf: "\r\n".utf8)
    }
    out.append(contentsOf: "--\(boundary)--\r\n".utf8)
    return HTTPResponse(status: 200, headers: ["content-type": "multipart/mixed; boundary=\(boundary)"], body: out)
  }

  /// Runs one part; its faults are its own 400.
  private func batchPart(_ bytes: [UInt8], host: String?) -> HTTPResponse {
    let request: HTTPRequest
    do {
      request = try Self.batchRequest(bytes, host: host)
    } catch {
      return error.response(.gcs)
    }
    if Self.isBatch(request.head) {
      return APIError(400, .invalid, "A batch part cannot itself be a batch.").response(.gcs)
    }
    let path = request.head.rawPath
    let media =
      ["/download/", "/upload/", "/resumable/"].contains { path.utf8.starts(with: $0.utf8) }
      || (try? QueryParameters(request.head.rawQuery))?["alt"] == "media"
    guard !media, path.utf8.starts(with: "/storage/v1/".utf8) || path.utf8.starts(with: "/b/".utf8) else {
      return APIError(
        400, .invalid, "A batch part must be a JSON API call (/storage/v1/…); media uploads and downloads go one by one."
      ).response(.gcs)
    }
    guard request.body.count <= bodyLimit(for: request.head) else {
      return APIError(413, .uploadTooLarge, "The part's body is larger than this request may send.")
        .response(.gcs)
    }
    return answer(request)
  }

  /// Reads an `application/http` part: request line (origin- or absolute-form target), headers,
  /// blank line, body (the rest of the part, cut to `Content-Length` when one is given).
  static func batchRequest(_ bytes: [UInt8], host: String?) throws(APIError) -> HTTPRequest {
    var lines: [String] = []
    var position = 0
    var bodyStart: Int?
    while position < bytes.count {
      var end = position
      while end < bytes.count && bytes[end] != 10 { end += 1 }
      guard end <= maxBatchPartHeadBytes else {
        throw APIError(400, .invalid, "A batch part's request head is longer than \(maxBatchPartHeadBytes) bytes.")
      }
      var line = bytes[position..<end]
      if line.last == 13 { line = line.dropLast() }
      position = min(end + 1, bytes.count)
      if line.isEmpty {
        if lines.isEmpty { continue }  // blank lines before the request line
        bodyStart = position
        break
      }
      guard lines.count <= maxBatchPartHeaders else {
        throw APIError(400, .invalid, "A batch part's request has more than \(maxBatchPartHeaders) headers.")
      }
      lines.append(String(decoding: line, as: UTF8.self))
    }
    guard let requestLine = lines.first else { throw APIError(400, .invalid, "A batch part holds no request.") }
    let words = requestLine.split(separator: " ")
    guard words.count == 3, words[2] == "HTTP/1.1" || words[2] == "HTTP/1.0",
      words[0].utf8.allSatisfy({ (0x41...0x5A).contains($0) })
    else {
      throw APIError(400, .invalid, "A batch part must start with a request line such as 'DELETE /storage/v1/b/… HTTP/1.1'.")
    }
    var target = String(words[1])
    var headers = HTTPHeaders()
    if let scheme = ["http://", "https://"].first(where: { target.hasPrefix($0) }) {
      // Absolute form (what the Python client writes): the path and query; the authority is the Host.
      let rest = target.dropFirst(scheme.count)
      let slash = rest.firstIndex(of: "/") ?? rest.endIndex
      headers.add("host", String(rest[..<slash]))
      target = slash == rest.endIndex ? "/" : String(rest[slash...])
    }
    guard target.hasPrefix("/"), target.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else {
      throw APIError(400, .invalid, "A batch part's request target must be a path (or an absolute URL).")
    }
    for line in lines.dropFirst() {
      guard let colon = line.firstIndex(of: ":"), colon != line.startIndex else {
        throw APIError(400, .invalid, "A batch part has a malformed header line.")
      }
      let name = line[..<colon].lowercased()
      guard name.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else {
        throw APIError(400, .invalid, "A batch part has a malformed header name.")
      }
      if name == "host" && headers["host"] != nil { continue }
      headers.add(name, String(line[line.index(after: colon)...]).trimmingASCIIWhitespace())
    }
    if headers["host"] == nil, let host { headers.add("host", host) }
    var body = bodyStart.map { Array(bytes[$0...]) } ?? []
    if let lengthText = headers["content-length"] {
      guard let length = Int(lengthText), length >= 0, length <= body.count else {
        throw APIError(400, .invalid, "A batch part's Content-Length does not match its body.")
      }
      body = Array(body.prefix(length))
    }
    return HTTPRequest(head: HTTPRequestHead(method: String(words[0]), target: target, headers: headers), body: body)
  }
}
