/// What can go wrong in the storage domain. The API module turns these into HTTP statuses; this
/// module knows nothing of HTTP.
public enum StorageError: Error, Sendable, Equatable {
  case bucketNotFound(bucket: String)
  case objectNotFound(bucket: String, name: String)
  /// An argument breaks a rule; the message names the rule.
  case invalid(String)
  /// A required argument is missing.
  case required(String)
  /// A write precondition (`ifGenerationMatch`…) failed.
  case conditionNotMet(String)
  /// A read's `…NotMatch` condition or `If-None-Match` held: the client's copy is current.
  case notModified
  case bucketExists(bucket: String)
  case bucketNotEmpty(bucket: String)
  /// Given md5Hash/crc32c do not match the bytes.
  case checksumMismatch(String)
  case tooLarge(String)
  /// The disk is full (or over quota): nothing was changed.
  case insufficientStorage(String)
  /// A file-system failure other than a full disk: nothing was changed.
  case io(String)
  /// No resumable upload session has this id.
  case uploadNotFound(String)
  /// A chunk did not start where the session's data ends.
  case uploadOffsetMismatch(expected: Int64, received: Int64)
  /// The session was finalized or cancelled.
  case uploadNotActive(String)
  /// `limit` resumable sessions are open already; one may free up in `retryAfterSeconds`.
  case tooManyUploadSessions(limit: Int, retryAfterSeconds: Int)
}
