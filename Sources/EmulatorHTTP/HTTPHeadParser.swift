/// The request head's syntax (RFC 9112 §3, §5): request line, version and header fields, from
/// bytes already known to hold the whole head. Used by `HTTPRequestDecoder` for heads and trailers.
enum HTTPHeadParser {
  static func decodeHead(
    _ bytes: UnsafeBufferPointer<UInt8>, limits: HTTPLimits
  ) throws(HTTPParseError) -> HTTPRequestHead {
    var lines: [UnsafeBufferPointer<UInt8>] = []
    var lineStart = 0
    var index = 0
    while index < bytes.count {
      if bytes[index] == 13 && index + 1 < bytes.count && bytes[index + 1] == 10 {
        lines.append(UnsafeBufferPointer(rebasing: bytes[lineStart..<index]))
        index += 2
        lineStart = index
      } else {
        index += 1
      }
    }
    lines.append(UnsafeBufferPointer(rebasing: bytes[lineStart..<bytes.count]))
    let requestLine = lines[0]
    if requestLine.count > limits.maxRequestLineBytes {
      throw HTTPParseError(414, "The request line is longer than \(limits.maxRequestLineBytes) bytes.")
    }
    if lines.count - 1 > limits.maxHeaderCount {
      throw HTTPParseError(431, "More than \(limits.maxHeaderCount) header fields.")
    }
    var head = try decodeRequestLine(requestLine)
    for line in lines.dropFirst() {
      let (name, value) = try parseField(line)
      head.headers.add(name, value)
    }
    if head.version == .http11 && head.headers.values("host").count != 1 {
      throw HTTPParseError(400, "An HTTP/1.1 request must carry exactly one Host header.")
    }
    return head
  }

  static func decodeRequestLine(_ line: UnsafeBufferPointer<UInt8>) throws(HTTPParseError) -> HTTPRequestHead {
    let parts = line.split(separator: 32, maxSplits: 2, omittingEmptySubsequences: false)
    guard parts.count == 3, !parts[0].isEmpty, !parts[1].isEmpty else {
      throw HTTPParseError(400, "The request line must be: METHOD SP target SP HTTP-version.")
    }
    guard parts[0].allSatisfy(HTTPSyntax.isToken) else {
      throw HTTPParseError(400, "The method is not a valid token.")
    }
    guard parts[1].allSatisfy({ $0 > 32 && $0 < 127 }) else {
      throw HTTPParseError(400, "The request target contains a byte that must be percent-encoded.")
    }
    let version = try decodeVersion(parts[2])
    let method = String(decoding: parts[0], as: UTF8.self)
    var target = String(decoding: parts[1], as: UTF8.self)
    if target.utf8.first == UInt8(ascii: "/") {
      // origin-form
    } else if target == "*" && method == "OPTIONS" {
      // asterisk-form
    } else if let rest = Self.afterScheme(target) {
      // absolute-form (RFC 9112 §3.2.2): keep path and query.
      if let slash = rest.firstIndex(where: { $0 == "/" || $0 == "?" }) {
        target = rest[slash] == "/" ? String(rest[slash...]) : "/" + rest[slash...]
      } else {
        target = "/"
      }
    } else {
      throw HTTPParseError(400, "The request target must start with '/'.")
    }
    return HTTPRequestHead(method: method, target: target, version: version)
  }

  /// The part of an absolute-form target after `http://` or `https://`.
  static func afterScheme(_ target: String) -> Substring? {
    let lower = target.lowercased()
    for scheme in ["http://", "https://"] where lower.hasPrefix(scheme) {
      return target.dropFirst(scheme.count)
    }
    return nil
  }

  static func decodeVersion(_ bytes: Slice<UnsafeBufferPointer<UInt8>>) throws(HTTPParseError) -> HTTPVersion {
    let text = Array(bytes)
    guard text.count == 8, text.starts(with: Array("HTTP/".utf8)), text[6] == UInt8(ascii: "."),
      HTTPSyntax.isDigit(text[5]), HTTPSyntax.isDigit(text[7])
    else {
      throw HTTPParseError(400, "The HTTP version is malformed.")
    }
    switch (text[5], text[7]) {
    case (UInt8(ascii: "1"), UInt8(ascii: "0")): return .http10
    case (UInt8(ascii: "1"), _): return .http11
    default:
      throw HTTPParseError(505, "Only HTTP/1.0 and HTTP/1.1 are supported.")
    }
  }

  static func parseField(_ line: UnsafeBufferPointer<UInt8>) throws(HTTPParseError) -> (String, String) {
    guard let first = line.first else { throw HTTPParseError(400, "Empty header line.") }
    if first == 32 || first == 9 {
      throw HTTPParseError(400, "Obsolete line folding (obs-fold) is not accepted.")
    }
    guard let colon = line.firstIndex(of: UInt8(ascii: ":")) else {
      throw HTTPParseError(400, "A header line has no colon.")
    }
    let name = line[..<colon]
    guard !name.isEmpty, name.allSatisfy(HTTPSyntax.isToken) else {
      throw HTTPParseError(400, "A header name is not a valid token (or has whitespace before the colon).")
    }
    var valueStart = colon + 1
    var valueEnd = line.count
    while valueStart < valueEnd, line[valueStart] == 32 || line[valueStart] == 9 { valueStart += 1 }
    while valueEnd > valueStart, line[valueEnd - 1] == 32 || line[valueEnd - 1] == 9 { valueEnd -= 1 }
    let value = line[valueStart..<valueEnd]
    guard value.allSatisfy({ $0 == 9 || $0 >= 32 && $0 != 127 }) else {
      throw HTTPParseError(400, "A header value contains a control character (NUL, CR or LF).")
    }
    // Lower-cased while copied (a token is ASCII): no second pass through `String.lowercased()`.
    let lowerName = String(unsafeUninitializedCapacity: name.count) { buffer in
      for (offset, byte) in name.enumerated() {
        buffer[offset] = byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? byte + 32 : byte
      }
      return name.count
    }
    return (lowerName, String(decoding: value, as: UTF8.self))
  }
}
