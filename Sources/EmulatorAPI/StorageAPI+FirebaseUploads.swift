import EmulatorHTTP
import EmulatorStorage
import EmulatorSupport

/// Firebase's resumable protocol (X-Goog-Upload `start`, `upload`, `finalize`, `query`,
/// `cancel`) and its download-token commands (PROTOCOL.md §6).
extension StorageAPI {
  // MARK: Firebase resumable (X-Goog-Upload)

  func startFirebaseResumable(_ context: RequestContext, bucket: String, pathName: String?) throws
    -> HTTPResponse
  {
    let headers = context.request.headers
    let commands = Self.commands(headers)
    guard commands.contains("start") else {
      throw APIError(400, .invalid, "A resumable upload starts with X-Goog-Upload-Command: start.")
    }
    let document = try RequestOptions.jsonObject(context.request.bodyBytes())
    guard let name = pathName ?? context.query["name"] ?? document["name"]?.stringValue else {
      throw APIError(400, .required, "Object name is required: give it in the path or as ?name=….")
    }
    try Self.validate(name)
    try MetadataPatch(json: document, options: patchOptions(context)).checkCustomMetadataSize()
    let conditions = try RequestOptions.preconditions(context.query, headers, read: false)
    try store.checkWrite(bucket: bucket, name: name, conditions: conditions)
    let lengthText = headers["x-goog-upload-header-content-length"] ?? headers["x-goog-upload-content-length"]
    var expected: Int64?
    if let lengthText, !lengthText.isEmpty {
      expected = try RequestOptions.byteCount(
        lengthText, header: "X-Goog-Upload-Content-Length", limit: limits.maxUploadBytes)
    }
    var type = try Self.contentTypeHeader(headers, "x-goog-upload-header-content-type")
    if type == nil { type = try Self.contentTypeHeader(headers, "x-goog-upload-content-type") }
    let session = try startSession(
      bucket: bucket, name: name, document: document, conditions: conditions, expectedSize: expected,
      contentType: type, firebase: true, authorization: headers["authorization"])
    let url =
      "\(context.json.baseURL)/v0/b/\(URLCoding.encodeComponent(bucket))/o?name=\(URLCoding.encodeComponent(name))&upload_id=\(session.id)&upload_protocol=resumable"
    return HTTPResponse(
      .ok,
      headers: [
        "x-goog-upload-status": "active", "x-goog-upload-url": url, "x-goog-upload-control-url": url,
        "x-goog-upload-chunk-granularity": "262144", "x-guploader-uploadid": session.id,
      ])
  }

  static func commands(_ headers: HTTPHeaders) -> [String] {
    (headers["x-goog-upload-command"] ?? "").split(separator: ",").map {
      $0.trimmingWhitespace().lowercased()
    }.filter { !$0.isEmpty }
  }

  /// A request to a Firebase upload URL: `upload`, `finalize` (combinable), `query`, `cancel`.
  func firebaseResumableCommand(_ context: RequestContext) throws -> HTTPResponse {
    let id = context.query["upload_id"] ?? ""
    let commands = Self.commands(context.request.headers)
    guard !commands.isEmpty else {
      throw APIError(400, .invalid, "X-Goog-Upload-Command is required (upload, finalize, query or cancel).")
    }
    var session = try sessions.session(id)
    func status(_ code: Int, _ state: UploadSession.State, _ received: Int64, _ extra: APIError? = nil) -> HTTPResponse
    {
      var headers: HTTPHeaders = [
        "x-goog-upload-status": state.rawValue, "x-goog-upload-size-received": String(received),
      ]
      if let extra {
        var response = extra.response(.firebase)
        for field in headers { response.headers.set(field.name, field.value) }
        return response
      }
      headers.add("content-type", "text/plain")
      return HTTPResponse(status: code, headers: headers)
    }
    if commands.contains("query") {
      return status(200, session.state, session.received)
    }
    if commands.contains("cancel") {
      try sessions.cancel(id)
      return status(200, .cancelled, session.received)
    }
    if session.state == .final { return try finishedSession(context, session) }
    if session.denied { throw Self.denied(.create, headers: ["x-goog-upload-status": "final"]) }
    guard session.state == .active else {
      return status(400, session.state, session.received, APIError(400, .invalid, "The upload was cancelled."))
    }
    if commands.contains("upload") {
      guard let offsetText = context.request.headers["x-goog-upload-offset"] else {
        return status(
          400, .active, session.received, APIError(400, .required, "X-Goog-Upload-Offset is required with 'upload'."))
      }
      let offset: Int64
      do throws(APIError) {
        offset = try RequestOptions.byteCount(offsetText, header: "X-Goog-Upload-Offset", limit: limits.maxUploadBytes)
        let (end, overflow) = offset.addingReportingOverflow(Int64(context.request.bodyCount))
        guard !overflow && end <= Int64(limits.maxUploadBytes) else {
          throw APIError(413, .uploadTooLarge, "The upload would grow past the \(limits.maxUploadBytes)-byte limit.")
        }
      } catch {
        return status(error.status, .active, session.received, error)
      }
      guard offset == session.received else {
        // Never appended blindly: the client queries and resumes from the true count.
        return status(
          400, .active, session.received,
          APIError(
            400, .invalid,
            "X-Goog-Upload-Offset is \(offset) but \(session.received) bytes have been received; resume from \(session.received)."
          ))
      }
      let request = context.request
      do throws(StorageError) {
        if let file = request.bodyFile {
          session = try sessions.append(id, at: offset, file: file.path, allowOverlap: false)
        } else {
          session = try sessions.append(id, at: offset, bytes: request.body, allowOverlap: false)
        }
      } catch {
        // Answered here, with the count the session really has, so the client can resume.
        let current = (try? sessions.session(id))?.received ?? session.received
        let refusal = APIError(error)
        return status(refusal.status, .active, current, refusal)
      }
    }
    guard commands.contains("finalize") else { return status(200, .active, session.received) }
    if let expected = session.expectedSize, expected != session.received {
      return status(
        400, .active, session.received,
        APIError(400, .invalid, "The upload announced \(expected) bytes but \(session.received) were received."))
    }
    return try completeSession(context, session, hashes: (nil, nil))
  }

  /// Renders a parsed JSON value back to text (session metadata is kept as JSON).
  static func write(_ value: JSONValue, into json: inout JSONWriter) {
    value.write(into: &json)
  }

  // MARK: Firebase download tokens

  /// `POST /v0/b/{b}/o/{name}?create_token=true` and `?delete_token=T`, for admin credentials
  /// (`Authorization: Bearer owner` or `Firebase owner`, the Firebase emulator's convention).
  func tokenCommand(_ context: RequestContext) throws -> HTTPResponse {
    let (bucket, name) = (context.bucket, context.name)
    let authorization = context.request.headers["authorization"] ?? ""
    guard authorization == "Bearer owner" || authorization == "Firebase owner" else {
      throw APIError(403, .forbidden, "Missing admin credentials: send Authorization: Bearer owner.")
    }
    if let create = context.query["create_token"] {
      guard create == "true" else {
        throw APIError(400, .invalid, "create_token must be 'true', got '\(create)'.")
      }
      let object = try store.updateTokens(bucket: bucket, name: name) { $0 + [ObjectStore.newDownloadToken()] }
      return context.object(object)
    }
    let token = context.query["delete_token"] ?? ""
    let object = try store.updateTokens(bucket: bucket, name: name) { tokens in
      let kept = tokens.filter { $0 != token }
      return kept.isEmpty ? [ObjectStore.newDownloadToken()] : kept
    }
    return context.object(object)
  }
}
