import Dispatch
import EmulatorAPI
import EmulatorHTTP
import EmulatorStorage
import EmulatorSupport

/// The emulator's own operations beside the storage API: reset, health, info, export, import and
/// seeding. Built before the HTTP server (its routes are part of the server's handler).
public final class Maintenance: Sendable {
  public let store: ObjectStore
  /// Unfinished uploads: resumable sessions and XML multipart uploads (a reset empties both).
  public let uploads: (sessions: UploadSessions, multipart: MultipartUploads?)
  public let configuration: EmulatorConfiguration
  /// Monotonic start time, for the uptime.
  let startedAt = DispatchTime.now()
  let startedAtWallClock = Timestamp.nowMilliseconds()
  let log: @Sendable (String) -> Void
  private let exportLock = PosixLock()

  init(
    store: ObjectStore, sessions: UploadSessions, multipart: MultipartUploads? = nil,
    configuration: EmulatorConfiguration, log: @escaping @Sendable (String) -> Void
  ) {
    self.store = store
    self.uploads = (sessions, multipart)
    self.configuration = configuration
    self.log = log
  }

  public var uptimeSeconds: Double {
    Double(DispatchTime.now().uptimeNanoseconds - startedAt.uptimeNanoseconds) / 1e9
  }

  /// The data folder as an absolute path, or nil in memory.
  public var dataDirectory: String? {
    configuration.inMemory ? nil : URL(fileURLWithPath: configuration.dataDirectory).standardizedFileURL.path
  }

  /// What `POST /internal/reset` removed.
  public struct ResetSummary: Sendable, Equatable {
    public var objects: Int
    public var buckets: Int
    public var uploadSessions: Int
    /// XML multipart uploads in progress that were removed.
    public var multipartUploads: Int
  }

  /// Empties the emulator as the Firebase emulator's reset does: every object, bucket and
  /// upload session (resumable or XML multipart) goes. The buckets named in the configuration (`--bucket`) are created again,
  /// so the emulator is as a fresh start on an empty data folder would make it.
  public func reset() throws(StorageError) -> ResetSummary {
    let sessionCount = uploads.sessions.removeAll()
    let multipartUploads = uploads.multipart?.removeAll() ?? 0
    let removed = try store.removeAll()
    for bucket in configuration.buckets {
      do {
        _ = try store.createBucket(bucket)
      } catch .bucketExists {
        continue
      }
    }
    return ResetSummary(
      objects: removed.objects, buckets: removed.buckets, uploadSessions: sessionCount, multipartUploads: multipartUploads)
  }

  /// Writes a Firebase emulator export of everything to `directory` (see `FirebaseExport`).
  /// Exports are serialised.
  public func export(to directory: String) throws(StorageError) -> (objects: Int, buckets: Int, bytes: Int64) {
    exportLock.lock()
    defer { exportLock.unlock() }
    let summary = try FirebaseExport.export(store, to: directory)
    return (summary.objects, summary.buckets, summary.bytes)
  }

  /// `POST /internal/export {"path": DIR}`: DIR is resolved against the emulator's working folder.
  func exportRoute(_ request: HTTPRequest) -> HTTPResponse {
    let path: String
    do {
      guard case .string(let given)? = try JSONValue.parse(request.bodyBytes())["path"], !given.isEmpty else {
        return APIError(400, .required, "Export request body must include 'path'.").response(firebase: false)
      }
      path = given
    } catch {
      return APIError(400, .invalid, "The export request body is not JSON: \(error)").response(firebase: false)
    }
    return countsResponse(path: URL(fileURLWithPath: path).standardizedFileURL.path) { () throws(StorageError) in
      let started = DispatchTime.now().uptimeNanoseconds
      let summary = try export(to: path)
      let seconds = Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9
      log(
        "export: \(summary.objects) objects, \(summary.buckets) buckets written to \(path) in \(DecimalText.fixed(seconds, digits: 2)) s"
      )
      return [("objects", Int64(summary.objects)), ("buckets", Int64(summary.buckets)), ("bytes", summary.bytes)]
    }
  }

  /// Runs a maintenance step and answers what it counted as one JSON object (after `path`, when
  /// given), or the store's error.
  private func countsResponse(
    path: String? = nil, _ step: () throws(StorageError) -> [(String, Int64)]
  ) -> HTTPResponse {
    do throws(StorageError) {
      let counts = try step()
      var json = JSONWriter()
      json.beginObject()
      if let path { json.string("path", path) }
      for (key, count) in counts { json.raw(key, String(count)) }
      json.endObject()
      return HTTPResponse.json(json.bytes)
    } catch {
      return APIError(error).response(firebase: false)
    }
  }

  // MARK: Routes

  /// The `/internal/...` routes (and fake-gcs-server's health path, for harnesses that poll it).
  func routes() -> [RouteEntry] {
    let health: @Sendable (HTTPRequest) -> HTTPResponse = { _ in HTTPResponse.json(Array(#"{"status":"ok"}"#.utf8)) }
    return [
      RouteEntry("GET", "/internal/health", .memory, handler: health),
      RouteEntry("GET", "/_internal/healthcheck", .memory, handler: health),
      RouteEntry("GET", "/internal/info", .memory) { [self] _ in HTTPResponse.json(infoJSON()) },
      RouteEntry("POST", "/internal/export") { [self] request in exportRoute(request) },
      RouteEntry("POST", "/internal/reset") { [self] _ in
        countsResponse { () throws(StorageError) in
          let summary = try reset()
          log(
            "reset: removed \(summary.objects) objects, \(summary.buckets) buckets, \(summary.uploadSessions) upload "
              + "sessions, \(summary.multipartUploads) XML multipart uploads")
          return [
            ("objects", Int64(summary.objects)), ("buckets", Int64(summary.buckets)),
            ("uploadSessions", Int64(summary.uploadSessions)),
            ("multipartUploads", Int64(summary.multipartUploads)),
          ]
        }
      },
    ]
  }

  func infoJSON() -> [UInt8] {
    var json = JSONWriter()
    json.beginObject()
    json.string("name", "storage-emulator")
    json.string("version", CommandLineTool.version)
    json.raw("uptimeSeconds", DecimalText.fixed(uptimeSeconds, digits: 3))
    json.timestamp("startedAt", milliseconds: startedAtWallClock)
    if let dataDirectory { json.string("dataDirectory", dataDirectory) } else { json.null("dataDirectory") }
    json.bool("inMemory", configuration.inMemory)
    json.raw("objectCount", String(store.objectCount))
    json.raw("bucketCount", String(store.listBuckets().count))
    json.raw("uploadSessionCount", String(uploads.sessions.count))
    json.endObject()
    return json.bytes
  }
}
