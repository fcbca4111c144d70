import EmulatorHTTP

/// Which limit a request's body gets, decided from its head before a byte of the body is read:
/// only requests whose body is object data (media, multipart and raw uploads, resumable
/// chunks) may send up to `maxUploadBytes`; every body that is a JSON document (PATCH/PUT
/// metadata, the start of a resumable upload, compose, copy, rewrite, bucket create, Firebase
/// token commands) stops at `maxMetadataBytes`. Past the limit the HTTP layer answers 413 from
/// the announced Content-Length, or as soon as a chunked body passes it.
enum BodyLimits {
  static func limit(for head: HTTPRequestHead, _ limits: APILimits) -> Int {
    carriesObjectData(head) ? limits.maxUploadBytes : limits.maxMetadataBytes
  }

  static func carriesObjectData(_ head: HTTPRequestHead) -> Bool {
    let method = head.method
    guard method == "POST" || method == "PUT" else { return false }
    let path = head.rawPath.utf8
    let firebase = path.starts(with: "/v0/".utf8)
    // `/resumable/upload/…` is where apitools (gcloud) starts resumable uploads.
    let uploadPath = path.starts(with: "/upload/".utf8) || path.starts(with: "/resumable/".utf8)
    guard firebase || uploadPath || head.rawQuery.utf8Range(of: "uploadType=") != nil else {
      return false
    }
    // An unparsable query is refused later with a 400; the smaller limit is the safe one.
    guard let query = try? QueryParameters(head.rawQuery) else { return false }
    if query["upload_id"] != nil { return true }  // a resumable session's chunk
    if let override = head.headers["x-http-method-override"]?.trimmingASCIIWhitespace().uppercased(),
      ["PATCH", "PUT", "DELETE", "GET"].contains(override)
    {
      return false  // a metadata update sent as POST
    }
    if firebase {
      if query["create_token"] != nil || query["delete_token"] != nil { return false }
      // The X-Goog-Upload `start` request's body is the metadata document.
      let commands = (head.headers["x-goog-upload-command"] ?? "").lowercased()
      if commands.split(separator: ",").contains(where: { String($0).trimmingASCIIWhitespace() == "start" }) {
        return false
      }
      return true
    }
    // The start of a GCS resumable upload carries the metadata document.
    return query["uploadType"] != "resumable"
  }
}
