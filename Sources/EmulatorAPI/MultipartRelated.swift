import Foundation

/// A `multipart/related` body (RFC 2387) as upload clients send it: CRLF or bare-LF line
/// breaks, quoted or unquoted boundary, with or without a trailing line break.
struct MultipartRelated {
  struct Part {
    /// Header names lower-cased.
    var headers: [String: String]
    var body: [UInt8]
  }

  /// The `boundary` parameter of a Content-Type.
  static func boundary(from contentType: String) -> String? {
    for parameter in contentType.split(separator: ";").dropFirst() {
      let pair = parameter.split(separator: "=", maxSplits: 1)
      guard pair.count == 2, pair[0].trimmingCharacters(in: .whitespaces).lowercased() == "boundary" else { continue }
      var value = pair[1].trimmingCharacters(in: .whitespaces)
      if value.count >= 2 && value.hasPrefix("\"") && value.hasSuffix("\"") {
        value = String(value.dropFirst().dropLast())
      }
      return value.isEmpty ? nil : value
    }
    return nil
  }

  static func parse(_ body: [UInt8], boundary: String) throws(APIError) -> [Part] {
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
