import EmulatorHTTP
import Foundation

/// A `multipart/related` body (RFC 2387) as upload clients send it: CRLF or bare-LF line
/// breaks, quoted or unquoted boundary, with or without a trailing line break.
struct MultipartRelated {
  struct Part {
    /// Header names lower-cased.
    var headers: [String: String]
    var body: [UInt8]
  }

  /// The boundary of a `multipart/related` Content-Type, through the one header-parameter parser
  /// (quoted or not, any parameter order, RFC 2046 §5.1.1 characters and length); a malformed
  /// header is a 400 that says what is wrong with it.
  static func boundary(from contentType: String) throws(APIError) -> String {
    do throws(HeaderParameterError) {
      let header = try HeaderParameters(parsing: contentType)
      guard header.value.lowercased().hasPrefix("multipart/") else {
        throw HeaderParameterError(
          "A multipart upload needs Content-Type: multipart/related; boundary=…, got '\(header.value)'.")
      }
      return try header.multipartBoundary()
    } catch {
      throw APIError(400, .invalid, "Bad multipart Content-Type: \(error.message)")
    }
  }

  /// The delimiter the body actually uses. apitools (gcloud, gsutil) writes the boundary with
  /// Python's `%r`, so the header says `boundary='===…=='` while the body's lines are `--===…==`:
  /// `'` is a legal boundary character, so when the body never uses the quoted form and does
  /// use the unquoted one, the quotes were the client's, not the boundary's (GCS accepts it).
  static func effectiveBoundary(_ boundary: String, in body: [UInt8]) -> String {
    let quote = UInt8(ascii: "'")
    let bytes = Array(boundary.utf8)
    guard bytes.count > 2, bytes.first == quote, bytes.last == quote,
      find(Array(("--" + boundary).utf8), in: body, from: 0, atLineStart: true) == nil
    else { return boundary }
    let inner = String(decoding: bytes.dropFirst().dropLast(), as: UTF8.self)
    return find(Array(("--" + inner).utf8), in: body, from: 0, atLineStart: true) == nil ? boundary : inner
  }

  static func parse(_ body: [UInt8], boundary declared: String) throws(APIError) -> [Part] {
    let boundary = effectiveBoundary(declared, in: body)
    let delimiter = Array(("--" + boundary).utf8)
    guard var position = find(delimiter, in: body, from: 0, atLineStart: true) else {
      throw APIError(400, .invalid, "The multipart body does not contain its boundary '\(boundary)'.")
    }
    var parts: [Part] = []
    while true {
      position += delimiter.count
      if body.count - position >= 2 && body[position] == 45 && body[position + 1] == 45 { return parts }
      // Rest of the delimiter line.
      while position < body.count && (body[position] == 32 || body[position] == 9) { position += 1 }
      position = try skipLineBreak(body, position)
      var headers: [String: String] = [:]
      while true {
        guard position < body.count else {
          throw APIError(400, .invalid, "A multipart part ends inside its headers.")
        }
        if body[position] == 10 || body[position] == 13 {
          position = try skipLineBreak(body, position)
          break
        }
        var end = position
        while end < body.count && body[end] != 10 { end += 1 }
        var line = body[position..<end]
        if line.last == 13 { line = line.dropLast() }
        let text = String(decoding: line, as: UTF8.self)
        if let colon = text.firstIndex(of: ":") {
          headers[text[..<colon].lowercased().trimmingCharacters(in: .whitespaces)] =
            text[text.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        position = min(end + 1, body.count)
      }
      guard let next = find(delimiter, in: body, from: position, atLineStart: true) else {
        throw APIError(400, .invalid, "The multipart body is not closed by '--\(boundary)--'.")
      }
      var end = next - 1  // the LF before the delimiter
      if end > position && body[end - 1] == 13 { end -= 1 }
      parts.append(Part(headers: headers, body: Array(body[position..<max(position, end)])))
      position = next
    }
  }

  private static func skipLineBreak(_ body: [UInt8], _ position: Int) throws(APIError) -> Int {
    if position < body.count && body[position] == 13 && position + 1 < body.count && body[position + 1] == 10 {
      return position + 2
    }
    if position < body.count && body[position] == 10 { return position + 1 }
    throw APIError(400, .invalid, "Malformed multipart body: a line break is missing.")
  }

  /// Finds `needle` at the start of the body or right after a LF.
  private static func find(_ needle: [UInt8], in haystack: [UInt8], from start: Int, atLineStart: Bool) -> Int? {
    guard haystack.count >= needle.count else { return nil }
    var index = start
    let first = needle[0]
    while index <= haystack.count - needle.count {
      if haystack[index] == first && (index == 0 || haystack[index - 1] == 10)
        && haystack[index..<(index + needle.count)].elementsEqual(needle)
      {
        return index
      }
      index += 1
    }
    return nil
  }
}
