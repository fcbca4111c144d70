#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// The request head's syntax (RFC 9112 §3, §5): request line, version and header fields, from
/// bytes already known to hold the whole head. Used by `HTTPRequestDecoder` for heads and trailers.
enum HTTPHeadParser {
  /// One pass to count the lines (the limits are judged before any field is parsed, as the
  /// whole head is), one to parse them: no array of lines, no copies of the request line.
  static func decodeHead(
    _ bytes: UnsafeBufferPointer<UInt8>, limits: HTTPLimits
  ) throws(HTTPParseError) -> HTTPRequestHead {
    var requestLineEnd = -1
    var fieldCount = 0
    var index = 0
    while let crlf = nextCRLF(bytes, from: index) {
      if requestLineEnd < 0 { requestLineEnd = crlf }
      fieldCount += 1
      index = crlf + 2
    }
    if requestLineEnd < 0 { requestLineEnd = bytes.count }
    if requestLineEnd > limits.maxRequestLineBytes {
      throw HTTPParseError(414, "The request line is longer than \(limits.maxRequestLineBytes) bytes.")
    }
    if fieldCount > limits.maxHeaderCount {
      throw HTTPParseError(431, "More than \(limits.maxHeaderCount) header fields.")
    }
    var head = try decodeRequestLine(UnsafeBufferPointer(rebasing: bytes[0..<requestLineEnd]))
    head.headers.reserveCapacity(fieldCount)
    var hosts = 0
    var lineStart = requestLineEnd + 2
    while lineStart <= bytes.count && fieldCount > 0 {
      // The end of this line: the next CRLF, or the end of the head.
      let lineEnd = nextCRLF(bytes, from: lineStart) ?? bytes.count
      let (name, value) = try parseField(UnsafeBufferPointer(rebasing: bytes[lineStart..<lineEnd]))
      if name == "host" { hosts += 1 }
      head.headers.appendLowercased(name, value)
      lineStart = lineEnd + 2
      fieldCount -= 1
    }
    if head.version == .http11 && hosts != 1 {
      throw HTTPParseError(400, "An HTTP/1.1 request must carry exactly one Host header.")
    }
    return head
  }

  /// Where the next CR LF starts at or after `from`, or nil: `memchr` finds each CR (a line is
  /// tens of bytes; the per-byte loop it replaces cost about seven instructions a byte).
  static func nextCRLF(_ bytes: UnsafeBufferPointer<UInt8>, from: Int) -> Int? {
    guard let base = bytes.baseAddress else { return nil }
    var index = from
    while index + 1 < bytes.count {
      guard let found = memchr(base + index, 13, bytes.count - 1 - index) else { return nil }
      let cr = base.distance(to: found.assumingMemoryBound(to: UInt8.self))
      if bytes[cr + 1] == 10 { return cr }
      index = cr + 1
    }
    return nil
  }

  /// `METHOD SP request-target SP HTTP-version`, split at its first two spaces.
  static func decodeRequestLine(_ line: UnsafeBufferPointer<UInt8>) throws(HTTPParseError) -> HTTPRequestHead {
    let firstSpace = line.firstIndex(of: 32) ?? line.count
    var secondSpace = line.count
    if firstSpace < line.count {
      secondSpace = UnsafeBufferPointer(rebasing: line[(firstSpace + 1)...]).firstIndex(of: 32).map {
        $0 + firstSpace + 1
      } ?? line.count
    }
    guard secondSpace < line.count, firstSpace > 0, secondSpace > firstSpace + 1 else {
      throw HTTPParseError(400, "The request line must be: METHOD SP target SP HTTP-version.")
    }
    let methodBytes = line[0..<firstSpace]
    let targetBytes = line[(firstSpace + 1)..<secondSpace]
    guard methodBytes.allSatisfy(HTTPSyntax.isToken) else {
      throw HTTPParseError(400, "The method is not a valid token.")
    }
    guard targetBytes.allSatisfy({ $0 > 32 && $0 < 127 }) else {
      throw HTTPParseError(400, "The request target contains a byte that must be percent-encoded.")
    }
    let version = try decodeVersion(line[(secondSpace + 1)...])
    let method = String(decoding: methodBytes, as: UTF8.self)
    var target = String(decoding: targetBytes, as: UTF8.self)
    if targetBytes.first == UInt8(ascii: "/") {
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
    let text = UnsafeBufferPointer(rebasing: bytes)
    guard text.count == 8, text[0] == UInt8(ascii: "H"), text[1] == UInt8(ascii: "T"), text[2] == UInt8(ascii: "T"),
      text[3] == UInt8(ascii: "P"), text[4] == UInt8(ascii: "/"), text[6] == UInt8(ascii: "."),
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
