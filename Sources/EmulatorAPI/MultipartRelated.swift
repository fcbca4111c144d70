import EmulatorHTTP
import EmulatorSupport

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// A `multipart/related` body (RFC 2387) as upload clients send it: CRLF or bare-LF line
/// breaks, quoted or unquoted boundary, with or without a trailing line break.
struct MultipartRelated {
  struct Part {
    /// Header names lower-cased.
    var headers: [String: String]
    /// Where the part's body lies in the parsed bytes.
    var range: Range<Int>
  }

  /// The boundary of a `multipart/related` Content-Type, through the one header-parameter parser
  /// (quoted or not, any parameter order, RFC 2046 §5.1.1 characters and length); a malformed
  /// header is a 400 that says what is wrong with it.
  static func boundary(from contentType: String) throws(APIError) -> String {
    do throws(HeaderParameterError) {
      let header = try HeaderParameters(parsing: contentType)
      guard header.value.utf8.count >= 10, header.value.utf8.prefix(10).elementsEqual("multipart/".utf8, by: Self.sameIgnoringASCIICase) else {
        throw HeaderParameterError(
          "A multipart upload needs Content-Type: multipart/related; boundary=…, got '\(header.value)'.")
      }
      return try header.multipartBoundary()
    } catch {
      throw APIError(400, .invalid, "Bad multipart Content-Type: \(error.message)")
    }
  }

  private static func sameIgnoringASCIICase(_ byte: UInt8, _ lower: UInt8) -> Bool {
    byte == lower || (byte &- UInt8(ascii: "A") < 26 && byte | 0x20 == lower)
  }

  /// Bounds on the work a body may cause, whatever its size.
  struct Limits {
    /// The first part (the JSON metadata). Larger: 413, found within this many bytes of its
    /// start, so a huge body is never searched for it.
    var maxFirstPartBytes = 1 << 20
    /// Parts in one body (an upload needs two). More: 400.
    var maxParts = 8
    /// One part's header block. Larger: 400.
    var maxPartHeaderBytes = 8 * 1024
    /// RFC 2046 §5.1.1 allows 1–70 characters. Longer: 400.
    static let maxBoundaryBytes = 70
  }

  /// The delimiter the body actually uses. apitools (gcloud, gsutil) writes the boundary with
  /// Python's `%r`, so the header says `boundary='===…=='` while the body's lines are `--===…==`:
  /// `'` is a legal boundary character, so when the body never uses the quoted form and does
  /// use the unquoted one, the quotes were the client's, not the boundary's (GCS accepts it).
  static func effectiveBoundary(_ boundary: String, in body: UnsafeBufferPointer<UInt8>) -> String {
    let quote = UInt8(ascii: "'")
    let bytes = Array(boundary.utf8)
    guard bytes.count > 2, bytes.first == quote, bytes.last == quote,
      find(Array(("--" + boundary).utf8), in: body, from: 0, within: body.count) == nil
    else { return boundary }
    let inner = String(decoding: bytes.dropFirst().dropLast(), as: UTF8.self)
    return find(Array(("--" + inner).utf8), in: body, from: 0, within: body.count) == nil ? boundary : inner
  }

  /// Splits `body`; each part's body is a range of `body` (nothing is copied).
  static func parse(_ body: [UInt8], boundary: String, limits: Limits = Limits()) throws(APIError) -> [Part] {
    let result = body.withUnsafeBufferPointer { buffer in
      Result { () throws(APIError) in try parse(buffer, boundary: boundary, limits: limits) }
    }
    return try result.get()
  }

  /// `parse` on bytes anywhere in memory (a spooled upload is mapped, not read onto the heap).
  static func parse(
    _ body: UnsafeBufferPointer<UInt8>, boundary declared: String, limits: Limits = Limits()
  ) throws(APIError) -> [Part] {
    let boundary = effectiveBoundary(declared, in: body)
    guard boundary.utf8.count <= Limits.maxBoundaryBytes else {
      throw APIError(
        400, .invalid, "The multipart boundary is longer than \(Limits.maxBoundaryBytes) characters (RFC 2046).")
    }
    let delimiter = Array(("--" + boundary).utf8)
    guard var position = find(delimiter, in: body, from: 0, within: body.count) else {
      throw APIError(400, .invalid, "The multipart body does not contain its boundary '\(boundary)'.")
    }
    var parts: [Part] = []
    while true {
      position += delimiter.count
      if body.count - position >= 2 && body[position] == 45 && body[position + 1] == 45 { return parts }
      guard parts.count < limits.maxParts else {
        throw APIError(400, .invalid, "The multipart body has more than \(limits.maxParts) parts.")
      }
      // Rest of the delimiter line.
      while position < body.count && (body[position] == 32 || body[position] == 9) { position += 1 }
      position = try skipLineBreak(body, position)
      let headersStart = position
      // Room for a part's usual two or three fields without regrowing the table.
      var headers = [String: String](minimumCapacity: 4)
      while true {
        guard position < body.count else {
          throw APIError(400, .invalid, "A multipart part ends inside its headers.")
        }
        if body[position] == 10 || body[position] == 13 {
          position = try skipLineBreak(body, position)
          break
        }
        var end = position
        let lineLimit = min(body.count, headersStart + limits.maxPartHeaderBytes)
        while end < lineLimit && body[end] != 10 { end += 1 }
        guard end < lineLimit || end == body.count else {
          throw APIError(
            400, .invalid, "A multipart part's headers are longer than \(limits.maxPartHeaderBytes) bytes.")
        }
        var line = body[position..<end]
        if line.last == 13 { line = line.dropLast() }
        if let colon = line.firstIndex(of: UInt8(ascii: ":")) {
          headers[headerText(line[..<colon], lowercased: true)] = headerText(line[(colon + 1)...], lowercased: false)
        }
        position = min(end + 1, body.count)
      }
      // The metadata part is looked for only within its limit (plus the line break and
      // delimiter that close it).
      let window = parts.isEmpty ? limits.maxFirstPartBytes + 2 + delimiter.count : body.count
      guard let next = find(delimiter, in: body, from: position, within: window) else {
        if parts.isEmpty && body.count - position > window {
          throw APIError(
            413, .uploadTooLarge,
            "Metadata part is too large: the multipart metadata part may be at most \(limits.maxFirstPartBytes) bytes.")
        }
        throw APIError(400, .invalid, "The multipart body is not closed by '--\(boundary)--'.")
      }
      var end = next - 1  // the LF before the delimiter
      if end > position && body[end - 1] == 13 { end -= 1 }
      if parts.isEmpty && end - position > limits.maxFirstPartBytes {
        // Found in the window, but closed by a bare LF: one byte longer than allowed.
        throw APIError(
          413, .uploadTooLarge,
          "Metadata part is too large: the multipart metadata part may be at most \(limits.maxFirstPartBytes) bytes.")
      }
      parts.append(Part(headers: headers, range: position..<max(position, end)))
      position = next
    }
  }

  /// A part header's name or value without the spaces and tabs around it (RFC 9110's optional
  /// white space), a name with ASCII letters lower-cased (names are tokens; other bytes stay).
  private static func headerText(_ bytes: Slice<UnsafeBufferPointer<UInt8>>, lowercased: Bool) -> String {
    var start = bytes.startIndex
    var end = bytes.endIndex
    while start < end && (bytes[start] == 32 || bytes[start] == 9) { start += 1 }
    while end > start && (bytes[end - 1] == 32 || bytes[end - 1] == 9) { end -= 1 }
    let text = UnsafeBufferPointer(rebasing: bytes[start..<end])
    guard lowercased, text.contains(where: { $0 >= 65 && $0 <= 90 }) else {
      return String(decoding: text, as: UTF8.self)
    }
    return String(decoding: text.map { $0 >= 65 && $0 <= 90 ? $0 | 0x20 : $0 }, as: UTF8.self)
  }

  private static func skipLineBreak(_ body: UnsafeBufferPointer<UInt8>, _ position: Int) throws(APIError) -> Int {
    if position < body.count && body[position] == 13 && position + 1 < body.count && body[position + 1] == 10 {
      return position + 2
    }
    if position < body.count && body[position] == 10 { return position + 1 }
    throw APIError(400, .invalid, "Malformed multipart body: a line break is missing.")
  }

  /// Finds `needle` at the start of the body or right after a LF, starting in the `within`
  /// bytes from `start`. Linear: `memchr` jumps from one LF to the next (a boundary holds none),
  /// and only the bytes after each are compared with the needle.
  private static func find(
    _ needle: [UInt8], in haystack: UnsafeBufferPointer<UInt8>, from start: Int, within: Int
  ) -> Int? {
    guard haystack.count >= needle.count, !needle.isEmpty, let base = haystack.baseAddress else { return nil }
    let lastStart = min(haystack.count - needle.count, start + max(0, within - needle.count))
    guard start >= 0, start <= lastStart else { return nil }
    /// The position after the first LF in `from..<lastStart` (past `lastStart` when there is none).
    func afterNextLineFeed(_ from: Int) -> Int {
      guard from < lastStart, let found = memchr(base + from, 10, lastStart - from) else { return lastStart + 1 }
      return base.distance(to: found.assumingMemoryBound(to: UInt8.self)) + 1
    }
    var candidate = start == 0 || haystack[start - 1] == 10 ? start : afterNextLineFeed(start)
    while candidate <= lastStart {
      if needle.withUnsafeBufferPointer({ memcmp(base + candidate, $0.baseAddress!, $0.count) }) == 0 {
        return candidate
      }
      candidate = afterNextLineFeed(candidate)
    }
    return nil
  }
}
