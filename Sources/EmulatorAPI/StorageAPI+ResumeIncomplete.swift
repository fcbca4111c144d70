import EmulatorHTTP

extension StorageAPI {
  /// "Resume incomplete": a bare 308, or, for a request with `X-GUploader-No-308: yes` (the Go
  /// clients' gensupport, whose HTTP stack would take 308 for a redirect), a 200 with
  /// `X-HTTP-Status-Code-Override: 308`, as GCS answers it.
  static func resumeIncomplete(_ requestHeaders: HTTPHeaders, _ headers: HTTPHeaders) -> HTTPResponse {
    var headers = headers
    guard requestHeaders["x-guploader-no-308"]?.trimmingASCIIWhitespace().lowercased() == "yes" else {
      return HTTPResponse(.permanentRedirect, headers: headers)
    }
    headers.set("x-http-status-code-override", "308")
    return HTTPResponse(.ok, headers: headers)
  }
}
