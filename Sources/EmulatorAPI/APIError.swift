import EmulatorHTTP
import EmulatorStorage

/// An error answer: status, GCS `reason`, and a message that says what was wrong.
public struct APIError: Error, Sendable, Equatable {
  public enum Reason: String, Sendable {
    case invalid, required, notFound, conditionNotMet, conflict, forbidden, badRequest, uploadTooLarge
    case notModified, methodNotAllowed, internalError, insufficientStorage, rangeNotSatisfiable
    case rateLimitExceeded
  }

  public var status: Int
  public var reason: Reason
  public var message: String
  public var headers: HTTPHeaders = [:]

  public init(_ status: Int, _ reason: Reason, _ message: String, headers: HTTPHeaders = [:]) {
    self.status = status
    self.reason = reason
    self.message = message
    self.headers = headers
  }

  public static func == (lhs: APIError, rhs: APIError) -> Bool {
    lhs.status == rhs.status && lhs.reason == rhs.reason && lhs.message == rhs.message
  }

  /// The one place where domain errors become HTTP statuses.
  public init(_ error: StorageError) {
    switch error {
    case .bucketNotFound(let bucket):
      self.init(404, .notFound, "The specified bucket does not exist: \(bucket)")
    case .objectNotFound(let bucket, let name):
      self.init(404, .notFound, "No such object: \(bucket)/\(name)")
    case .invalid(let message), .checksumMismatch(let message):
      self.init(400, .invalid, message)
    case .required(let message):
      self.init(400, .required, message)
    case .conditionNotMet(let message):
      self.init(412, .conditionNotMet, "At least one of the pre-conditions you specified did not hold. \(message)")
    case .notModified:
      self.init(304, .notModified, "Not Modified")
    case .bucketExists(let bucket):
      self.init(409, .conflict, "The bucket '\(bucket)' already exists.")
    case .bucketNotEmpty(let bucket):
      self.init(409, .conflict, "The bucket you tried to delete is not empty: \(bucket)")
    case .tooLarge(let message):
      self.init(413, .uploadTooLarge, message)
    case .insufficientStorage(let message):
      self.init(507, .insufficientStorage, message)
    case .io(let message):
      self.init(500, .internalError, "Storage error: \(message)")
    case .uploadNotFound(let id):
      self.init(404, .notFound, "No such upload session: \(id)")
    case .uploadOffsetMismatch(let expected, let received):
      self.init(
        400, .invalid,
        "The chunk starts at byte \(expected) but \(received) bytes have been received; resume from \(received).")
    case .uploadNotActive(let id):
      self.init(400, .invalid, "The upload session \(id) is no longer active (it was finalized or cancelled).")
    case .tooManyUploadSessions(let limit, let retryAfter):
      // 429, not 503: the cap is reached by the client's own unfinished sessions, and 503 would
      // make the Apple SDK retry silently for up to 10 minutes (429 is GCS's rate-limit status).
      self.init(
        429, .rateLimitExceeded,
        "Too many resumable upload sessions are open (the limit is \(limit)); finish or cancel one, or wait for one to expire.",
        headers: ["retry-after": String(retryAfter)])
    }
  }

  /// The error body in the surface's flavour: GCS `{"error":{"code","message","errors":[…]}}`,
  /// Firebase `{"error":{"code","message"}}`. 304 has no body.
  public func response(firebase: Bool) -> HTTPResponse { response(firebase ? .firebase : .gcs) }

  /// The error body in a flavour (see `response(firebase:)`).
  public func response(_ flavour: Flavour) -> HTTPResponse {
    var headers = self.headers
    if status == 304 { return HTTPResponse(.notModified, headers: headers) }
    var json = JSONWriter(capacity: 256)
    json.beginObject()
    json.objectKey("error")
    json.raw("code", String(status))
    json.string("message", message)
    if flavour.errorsHaveDetails {
      json.beginArray("errors")
      json.beginObject()
      json.string("domain", "global")
      json.string("reason", reason.rawValue)
      json.string("message", message)
      json.endObject()
      json.endArray()
    }
    json.endObject()
    json.endObject()
    headers.set("content-type", "application/json; charset=UTF-8")
    return HTTPResponse(status: status, headers: headers, body: json.bytes)
  }
}
