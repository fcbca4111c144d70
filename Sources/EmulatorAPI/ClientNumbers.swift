import EmulatorHTTP
import EmulatorStorage

/// Numbers from headers, query parameters and JSON bodies, each read with `DecimalInteger`
/// (overflow-checked) and refused with the status GCS gives that field: 400 for a malformed or
/// out-of-range value, 413 for a size past the upload limit. SECURITY.md lists every caller.
extension RequestOptions {
  /// A byte count or offset header (`X-Upload-Content-Length`, `X-Goog-Upload-Offset`…): digits
  /// only, at most `limit`.
  static func byteCount(_ text: String, header: String, limit: Int) throws(APIError) -> Int64 {
    switch DecimalInteger.parse(text.trimmingASCIIWhitespace()) {
    case .success(let value) where value <= Int64(limit):
      return value
    case .success:
      throw APIError(
        413, .uploadTooLarge, "\(header) '\(text)' is larger than the \(limit)-byte upload limit.")
    case .failure(.outOfRange):
      throw APIError(400, .invalid, "\(header) '\(text)' is out of range for a byte count.")
    case .failure(.malformed):
      throw APIError(400, .invalid, "\(header) '\(text)' is not a byte count (decimal digits only).")
    }
  }

  /// A resumable chunk's `Content-Range`.
  static func contentRange(_ header: String) throws(APIError) -> ContentRange {
    switch ContentRange.parse(header) {
    case .success(let range): return range
    case .failure(.outOfRange):
      throw APIError(400, .invalid, "Content-Range '\(header)' has a number beyond any byte offset.")
    case .failure(.malformed):
      throw APIError(400, .invalid, "Content-Range '\(header)' is not 'bytes first-last/total' (or 'bytes */total').")
    }
  }

  /// A generation in a JSON body (compose `sourceObjects[].generation`…): a number or a string
  /// of digits, or null.
  static func generation(_ value: JSONValue?, field: String) throws(APIError) -> Int64? {
    switch value {
    case nil, .null?: return nil
    case .string(let text)?, .number(let text)?:
      return try integer(text, field: field)
    default:
      throw APIError(
        400, .invalid, "Invalid value for '\(field)': a generation must be a number or a string of digits.")
    }
  }

  /// A signed 64-bit integer named `field` (a query parameter, a JSON member).
  static func integer(_ text: String, field: String) throws(APIError) -> Int64 {
    switch DecimalInteger.parse(text, allowNegative: true) {
    case .success(let number): return number
    case .failure(.outOfRange):
      throw APIError(400, .invalid, "Invalid value for '\(field)': '\(text)' is out of range for a 64-bit integer.")
    case .failure(.malformed):
      throw APIError(400, .invalid, "Invalid value for '\(field)': '\(text)' is not an integer.")
    }
  }
}
