import EmulatorSupport

/// A resumable upload in progress (GCS `uploadType=resumable` or Firebase X-Goog-Upload).
public struct UploadSession: Sendable, Equatable {
  public enum State: String, Sendable {
    case active, final, cancelled
  }

  public var id = ""
  public var bucket: String
  public var name: String
  /// The metadata document sent when the session started, applied when it completes.
  public var metadata: [UInt8]
  public var conditions: Preconditions
  /// The total size announced at the start, if any.
  public var expectedSize: Int64?
  /// Content type announced at the start (`X-Upload-Content-Type` and the like).
  public var contentType: String?
  /// Started on the Firebase surface (answers in its flavour, creates a download token).
  public var firebase: Bool
  public var state: State = .active
  /// Bytes received so far.
  public var received: Int64 = 0
  /// The object's generation once the upload completed.
  public var generation: Int64?
  /// Milliseconds since the epoch.
  public var created: Int64 = Timestamp.nowMilliseconds()
  /// When it was last started, sent bytes or finished (milliseconds since the epoch); it
  /// expires `UploadSessions.Options.ttlSeconds` after that. Not stored: at start-up, the newest
  /// of `created` and its files' modification times.
  public var touched: Int64 = Timestamp.nowMilliseconds()
  /// The `Authorization` header of the start request: security rules are checked at finalize
  /// with it (the Firebase SDKs send no credentials with the chunks).
  public var authorization: String?
  /// Finalize was refused by security rules: the session is over and answers 403 again.
  public var denied = false

  public init(
    bucket: String, name: String, metadata: [UInt8], conditions: Preconditions, expectedSize: Int64?,
    contentType: String?, firebase: Bool
  ) {
    self.bucket = bucket
    self.name = name
    self.metadata = metadata
    self.conditions = conditions
    self.expectedSize = expectedSize
    self.contentType = contentType
    self.firebase = firebase
  }
}

extension UploadSession {
  /// The session record (`<id>.json`).
  var record: [UInt8] {
    let session = self
    var json = JSONWriter()
    json.beginObject()
    json.string("id", session.id)
    json.string("bucket", session.bucket)
    json.string("name", session.name)
    json.string("metadata", String(decoding: session.metadata, as: UTF8.self))
    json.objectKey("conditions")
    let c = session.conditions
    for (key, value) in [
      ("generation", c.generation), ("ifGenerationMatch", c.ifGenerationMatch),
      ("ifGenerationNotMatch", c.ifGenerationNotMatch), ("ifMetagenerationMatch", c.ifMetagenerationMatch),
      ("ifMetagenerationNotMatch", c.ifMetagenerationNotMatch),
    ] {
      if let value { json.string(key, String(value)) }
    }
    json.endObject()
    if let size = session.expectedSize { json.string("expectedSize", String(size)) }
    json.optionalString("contentType", session.contentType)
    json.bool("firebase", session.firebase)
    json.string("state", session.state.rawValue)
    if let generation = session.generation { json.string("generation", String(generation)) }
    json.string("created", String(session.created))
    json.optionalString("authorization", session.authorization)
    if session.denied { json.bool("denied", true) }
    json.endObject()
    return json.bytes
  }

  /// A session from its record; nil when it is damaged.
  init?(record bytes: [UInt8]) {
    guard let json = try? JSONValue.parse(bytes), let id = json["id"]?.stringValue,
      let bucket = json["bucket"]?.stringValue, let name = json["name"]?.stringValue,
      let metadata = json["metadata"]?.stringValue, let stateText = json["state"]?.stringValue,
      let state = UploadSession.State(rawValue: stateText),
      let created = json["created"]?.stringValue.flatMap({ Int64($0) })
    else { return nil }
    func int(_ key: String) -> Int64? { json["conditions"]?[key]?.stringValue.flatMap { Int64($0) } }
    var session = UploadSession(
      bucket: bucket, name: name, metadata: Array(metadata.utf8),
      conditions: Preconditions(
        generation: int("generation"), ifGenerationMatch: int("ifGenerationMatch"),
        ifGenerationNotMatch: int("ifGenerationNotMatch"), ifMetagenerationMatch: int("ifMetagenerationMatch"),
        ifMetagenerationNotMatch: int("ifMetagenerationNotMatch")),
      expectedSize: json["expectedSize"]?.stringValue.flatMap { Int64($0) },
      contentType: json["contentType"]?.stringValue, firebase: json["firebase"] == .bool(true))
    session.id = id
    session.state = state
    session.generation = json["generation"]?.stringValue.flatMap { Int64($0) }
    session.created = created
    session.touched = created
    session.authorization = json["authorization"]?.stringValue
    session.denied = json["denied"] == .bool(true)
    self = session
  }
}
