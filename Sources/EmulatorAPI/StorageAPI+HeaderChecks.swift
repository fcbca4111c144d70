import EmulatorHTTP

extension StorageAPI {
  /// Checks a header that carries parameters (a Content-Type or Content-Disposition an upload
  /// stores or relies on) with the one parser: a malformed one (unterminated quote, a parameter
  /// without a value or given twice, text after a value) is a 400 naming the header, never stored.
  static func checkParameters(_ value: String, _ header: String) throws(APIError) {
    if HeaderParameters.isPlainValue(value) { return }
    do {
      _ = try HeaderParameters(parsing: value)
    } catch {
      throw APIError(400, .invalid, "Bad \(header): \(error.message)")
    }
  }

  /// A header's value to store as the object's content type (checked; empty means none).
  static func contentTypeHeader(_ headers: HTTPHeaders, _ name: String) throws(APIError) -> String? {
    guard let value = headers[name], !value.isEmpty else { return nil }
    try checkParameters(value, name)
    return value
  }
}
