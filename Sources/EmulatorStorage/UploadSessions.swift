import Foundation

#if canImport(Glibc)
  import Glibc
#endif

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

/// Resumable upload sessions, kept in a folder so they survive a restart:
/// `<id>.json` (the session) and `<id>.part` (the bytes received, appended chunk by chunk; the
/// received count is its size). Sessions older than a week are dropped at start-up, as GCS
/// expires them.
public final class UploadSessions: Sendable {
  public let directory: String
  private let sessions = Locked<[String: UploadSession]>([:])
  private let locks: [NSLock] = (0..<64).map { _ in NSLock() }

  public init(directory: URL, log: @Sendable (String) -> Void = { _ in }) throws(StorageError) {
    self.directory = directory.standardizedFileURL.path
    do {
      try FileManager.default.createDirectory(atPath: self.directory, withIntermediateDirectories: true)
    } catch {
      throw StorageError.io("cannot create the upload sessions folder: \(error.localizedDescription)")
    }
    var loaded: [String: UploadSession] = [:]
    let weekAgo = Timestamp.nowMilliseconds() - 7 * 86_400_000
    for file in (try? FileManager.default.contentsOfDirectory(atPath: self.directory)) ?? [] {
      let path = self.directory + "/" + file
      guard file.hasSuffix(".json") else {
        if file.hasSuffix(".part"), !FileManager.default.fileExists(atPath: path.dropLast(5) + ".json") {
          unlink(path)
        }
        continue
      }
      guard let bytes = FileManager.default.contents(atPath: path), var session = Self.decode(Array(bytes)),
        session.created > weekAgo
      else {
        unlink(path)
        unlink(String(path.dropLast(5)) + ".part")
        log("uploads: removed the expired or damaged upload session \(file)")
        continue
      }
      var info = stat()
      session.received = stat(String(path.dropLast(5)) + ".part", &info) == 0 ? Int64(info.st_size) : 0
      loaded[session.id] = session
    }
    sessions.withLock { $0 = loaded }
  }

  private func lock(_ id: String) -> NSLock {
    var hasher = Hasher()
    hasher.combine(id)
    return locks[Int(UInt(bitPattern: hasher.finalize()) % UInt(locks.count))]
  }

  private func partPath(_ id: String) -> String { directory + "/" + id + ".part" }
  private func recordPath(_ id: String) -> String { directory + "/" + id + ".json" }

  /// Starts a session and returns it with its id.
  public func create(_ template: UploadSession) throws(StorageError) -> UploadSession {
    var session = template
    session.id = (0..<4).map { _ in String(format: "%08x", UInt32.random(in: 0...UInt32.max)) }.joined()
    session.state = .active
    session.received = 0
    let fd = open(partPath(session.id), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
    guard fd >= 0 else { throw FileBackend.error("start the upload", errno) }
    close(fd)
    try save(session)
    let stored = session
    sessions.withLock { $0[stored.id] = stored }
    return session
  }

  public func session(_ id: String) throws(StorageError) -> UploadSession {
    guard let session = sessions.withLock({ $0[id] }) else { throw StorageError.uploadNotFound(id) }
    return session
  }

  /// Appends bytes that must start at `offset` (the count received so far). Bytes before the
  /// received count are skipped (a retried chunk), so `offset` may be lower than `received` as
  /// long as the chunk reaches past it.
  @discardableResult
  public func append(
    _ id: String, at offset: Int64, bytes: [UInt8]? = nil, file: String? = nil, allowOverlap: Bool
  ) throws(StorageError) -> UploadSession {
    let lock = lock(id)
    lock.lock()
    defer { lock.unlock() }
    var session = try session(id)
    guard session.state == .active else { throw StorageError.uploadNotActive(id) }
    let length = Int64(bytes?.count ?? file.map { Self.size(of: $0) } ?? 0)
    guard offset == session.received || allowOverlap && offset < session.received else {
      throw StorageError.uploadOffsetMismatch(expected: offset, received: session.received)
    }
    let skip = session.received - offset
    guard skip < length || length == 0 else { return session }
    let out = open(partPath(id), O_WRONLY | O_APPEND | O_CLOEXEC)
    guard out >= 0 else { throw FileBackend.error("store the chunk", errno) }
    defer { close(out) }
    var written: Int64 = 0
    if let bytes {
      let code = bytes.withUnsafeBytes { Self.writeAll(out, UnsafeRawBufferPointer(rebasing: $0[Int(skip)...])) }
      if code != 0 { throw FileBackend.error("store the chunk", code) }
      written = length - skip
    } else if let file {
      let source = open(file, O_RDONLY | O_CLOEXEC)
      guard source >= 0 else { throw FileBackend.error("read the chunk", errno) }
      defer { close(source) }
      var buffer = [UInt8](repeating: 0, count: 1 << 20)
      var position = skip
      while true {
        let count = buffer.withUnsafeMutableBytes { pread(source, $0.baseAddress, $0.count, off_t(position)) }
        if count < 0 && errno == EINTR { continue }
        guard count >= 0 else { throw FileBackend.error("read the chunk", errno) }
        if count == 0 { break }
        let code = buffer.withUnsafeBytes { Self.writeAll(out, UnsafeRawBufferPointer(rebasing: $0[0..<count])) }
        if code != 0 { throw FileBackend.error("store the chunk", code) }
        position += Int64(count)
        written += Int64(count)
      }
    }
    session.received += written
    let updated = session
    sessions.withLock { $0[id] = updated }
    return updated
  }

  /// Hands the received bytes over for committing (the caller owns the returned file), and runs
  /// `commit` with it under the session's lock; on success the session becomes final.
  public func complete(
    _ id: String, commit: (String) throws(StorageError) -> ObjectMetadata
  ) throws(StorageError) -> ObjectMetadata {
    let lock = lock(id)
    lock.lock()
    defer { lock.unlock() }
    var session = try session(id)
    guard session.state == .active else { throw StorageError.uploadNotActive(id) }
    let handoff = directory + "/" + id + ".commit"
    guard rename(partPath(id), handoff) == 0 else { throw FileBackend.error("finish the upload", errno) }
    let object: ObjectMetadata
    do {
      object = try commit(handoff)
    } catch {
      // Keep the bytes if the store did not take them (a failed precondition, say).
      if FileManager.default.fileExists(atPath: handoff) { rename(handoff, partPath(id)) }
      throw error
    }
    session.state = .final
    session.generation = object.generation
    try? save(session)
    let updated = session
    sessions.withLock { $0[id] = updated }
    return object
  }

  /// Ends an active session and drops its bytes; `denied`: because security rules refused it.
  public func cancel(_ id: String, denied: Bool = false) throws(StorageError) {
    let lock = lock(id)
    lock.lock()
    defer { lock.unlock() }
    var session = try session(id)
    guard session.state == .active else { return }
    session.state = .cancelled
    session.denied = denied
    unlink(partPath(id))
    try? save(session)
    let updated = session
    sessions.withLock { $0[id] = updated }
  }

  private func save(_ session: UploadSession) throws(StorageError) {
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
    let temp = directory + "/." + session.id + ".tmp"
    guard FileManager.default.createFile(atPath: temp, contents: Data(json.bytes)),
      rename(temp, recordPath(session.id)) == 0
    else { throw FileBackend.error("save the upload session", errno) }
  }

  private static func decode(_ bytes: [UInt8]) -> UploadSession? {
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
    session.authorization = json["authorization"]?.stringValue
    session.denied = json["denied"] == .bool(true)
    return session
  }

  private static func size(of path: String) -> Int {
    var info = stat()
    return stat(path, &info) == 0 ? Int(info.st_size) : 0
  }

  /// Writes the whole buffer; returns 0 or the errno that stopped it.
  private static func writeAll(_ fd: Int32, _ buffer: UnsafeRawBufferPointer) -> Int32 {
    var offset = 0
    while offset < buffer.count {
      let written = write(fd, buffer.baseAddress! + offset, buffer.count - offset)
      if written < 0 && errno == EINTR { continue }
      guard written > 0 else { return written == 0 ? EIO : errno }
      offset += written
    }
    return 0
  }
}
