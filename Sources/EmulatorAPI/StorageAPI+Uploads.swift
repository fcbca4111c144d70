import Dispatch
import EmulatorHTTP
import EmulatorStorage
import EmulatorSupport
import Synchronization

/// Uploads (PROTOCOL.md §6): GCS `uploadType=media|multipart|resumable`, and the Firebase raw,
/// multipart and X-Goog-Upload resumable protocols.
extension StorageAPI {
  /// A POST that creates an object (or starts a session) in the path's bucket; Firebase may name
  /// the object in the path.
  func upload(_ context: RequestContext) throws -> HTTPResponse {
    let (bucket, pathName) = (context.bucket, context.objectName)
    let headers = context.request.headers
    if context.flavour.usesGoogUploadProtocol {
      let protocolName = headers["x-goog-upload-protocol"]?.lowercased() ?? "raw"
      switch protocolName {
      case "raw": return try simpleUpload(context, bucket: bucket, pathName: pathName)
      case "multipart": return try multipartUpload(context, bucket: bucket, pathName: pathName)
      case "resumable": return try startFirebaseResumable(context, bucket: bucket, pathName: pathName)
      default:
        throw APIError(
          400, .invalid, "Unknown X-Goog-Upload-Protocol '\(protocolName)'; use raw, multipart or resumable.")
      }
    }
    let uploadType = context.query["uploadType"] ?? "media"
    switch uploadType {
    case "media": return try simpleUpload(context, bucket: bucket, pathName: pathName)
    case "multipart": return try multipartUpload(context, bucket: bucket, pathName: pathName)
    case "resumable": return try startGCSResumable(context, bucket: bucket)
    default:
      throw APIError(400, .invalid, "Unknown uploadType '\(uploadType)'; use media, multipart or resumable.")
    }
  }

  /// The largest body a `.smallWrite` route writes without a blocking lane.
  static let inlineWriteBytes = 64 << 10

  /// Where a `.smallWrite` request runs (see `Execution.smallWrite`): a small body held in memory
  /// is written on the connection's thread, or, when the store syncs writes, on one of the
  /// `syncLanes`; anything else on a blocking lane.
  func smallWrite(_ request: HTTPRequest, _ work: @escaping @Sendable () -> HTTPResponse) -> HTTPHandling {
    guard request.bodyFile == nil && request.body.count <= Self.inlineWriteBytes else { return .blocking(work) }
    guard store.syncsWrites else { return .respond(work()) }
    let lane = Self.syncLanes[Self.nextSyncLane.wrappingAdd(1, ordering: .relaxed).oldValue % Self.syncLanes.count]
    return .deferred { responder in lane.async { responder.reply(work()) } }
  }

  /// Small uploads that wait for the disk (`--fsync`) wait on these, more of them at once than
  /// the server's blocking lanes hold: the file system then commits the syncs of all that are
  /// waiting together, so the uploads per second grow with the uploads in flight, not with the
  /// lanes. A lane thread is only made while its queue has work.
  static let syncLanes = (0..<64).map { DispatchQueue(label: "storage-emulator.sync-lane\($0)") }
  private static let nextSyncLane = Atomic<Int>(0)

  /// The request body as a data source: a spooled file is handed over, not copied.
  static func source(_ request: HTTPRequest) -> ObjectStore.DataSource {
    if let file = request.bodyFile { return .file(file.take()) }
    return .bytes(request.body)
  }

  func patchOptions(_ context: RequestContext, replace: Bool = false) -> MetadataPatch.Options {
    var options = context.flavour.patchOptions(replace: replace)
    if context.flavour == .gcs {
      options.predefinedAcl = context.query["predefinedAcl"] ?? context.query["destinationPredefinedAcl"]
    }
    return options
  }

  /// GCS media upload and the Firebase raw upload: the body is the data.
  private func simpleUpload(_ context: RequestContext, bucket: String, pathName: String?) throws
    -> HTTPResponse
  {
    guard let name = pathName ?? context.query["name"] else {
      throw APIError(400, .required, "Object name is required: give it as ?name=… (or in the path on /v0).")
    }
    try Self.validate(name)
    var patch = MetadataPatch()
    if let type = try Self.contentTypeHeader(context.request.headers, "content-type") {
      patch.fields[.contentType] = .set(type)
    }
    return try commitUpload(context, bucket: bucket, name: name, patch: patch, source: Self.source(context.request))
  }

  /// `multipart/related`: a JSON metadata part, then the data part.
  private func multipartUpload(_ context: RequestContext, bucket: String, pathName: String?) throws
    -> HTTPResponse
  {
    let contentType = context.request.headers["content-type"] ?? ""
    let boundary = try MultipartRelated.boundary(from: contentType)
    let body = try MultipartBody(context.request, boundary: boundary, metadataLimit: limits.maxMetadataBytes)
    for (number, headers) in body.partHeaders.enumerated() {
      if let type = headers["content-type"] { try Self.checkParameters(type, "Content-Type of part \(number + 1)") }
      if let disposition = headers["content-disposition"] {
        try Self.checkParameters(disposition, "Content-Disposition of part \(number + 1)")
      }
    }
    let document = try RequestOptions.jsonObject(body.metadata)
    guard let name = pathName ?? context.query["name"] ?? document["name"]?.stringValue else {
      throw APIError(400, .required, "Object name is required: give it in the metadata part or as ?name=….")
    }
    try Self.validate(name)
    var patch = try MetadataPatch(json: document, options: patchOptions(context))
    if patch.fields[.contentType] == nil {
      let type = body.dataHeaders["content-type"] ?? context.request.headers["x-upload-content-type"] ?? ""
      if !type.isEmpty { patch.fields[.contentType] = .set(type) }
    }
    let hashes = try Self.expectedHashes(document: document, header: nil)
    return try commitUpload(context, bucket: bucket, name: name, patch: patch, source: body.data, hashes: hashes)
  }

  /// Stores an upload: query `contentEncoding`, Firebase defaults (token, inline disposition),
  /// preconditions from the query; answers the resource in the surface's flavour.
  private func commitUpload(
    _ context: RequestContext, bucket: String, name: String, patch: MetadataPatch,
    source: @autoclosure () -> ObjectStore.DataSource,
    hashes: (md5: [UInt8]?, crc: UInt32?) = (nil, nil)
  ) throws -> HTTPResponse {
    var patch = patch
    let defaults = context.flavour.setsUploadDefaults
    if let encoding = context.query["contentEncoding"], !encoding.isEmpty {
      patch.fields[.contentEncoding] = .set(encoding)
    }
    if defaults && patch.fields[.contentDisposition] == nil {
      patch.fields[.contentDisposition] = .set(Self.inlineDisposition(for: name))
    }
    if context.flavour == .gcs && patch.acl == nil, let predefined = context.query["predefinedAcl"] {
      patch.acl = try AccessControl.predefined(predefined, scope: .object)
    }
    let conditions = try RequestOptions.preconditions(context.query, context.request.headers, read: false)
    let upload = ObjectStore.Upload(
      patch: patch, expectedMD5: hashes.md5, expectedCRC32C: hashes.crc, createDownloadToken: defaults,
      createsBucket: createsBucket(context.route.surface))
    // Taken only now: a spooled file handed over earlier would be left behind by an error above.
    // From here on it is removed on every failure (by the rules check when it denies, by the store).
    let data = source()
    if context.flavour.checksRules { try authorizeUpload(context, bucket: bucket, name: name, patch: patch, source: data) }
    let object = try store.insert(bucket: bucket, name: name, source: data, upload: upload, conditions: conditions)
    return context.object(object)
  }

  /// `inline; filename*=utf-8''<last path segment>`, the disposition Firebase gives its uploads.
  /// The segment starts after the last `/` byte (names are byte strings: a `/` followed by a
  /// combining mark still separates; splitting by `Character` kept them together, and cost
  /// ~4,800 instructions on every Firebase upload).
  static func inlineDisposition(for name: String) -> String {
    let bytes = name.utf8
    let last = bytes.lastIndex(of: UInt8(ascii: "/")).map { String(name[bytes.index(after: $0)...]) } ?? name
    return "inline; filename*=utf-8''" + URLCoding.encodeComponent(last)
  }

  /// md5Hash/crc32c from a metadata document and from an `X-Goog-Hash` header, to verify.
  static func expectedHashes(document: JSONValue?, header: String?) throws(APIError) -> (md5: [UInt8]?, crc: UInt32?) {
    var md5: [UInt8]?
    var crc: UInt32?
    func decodeMD5(_ text: String) throws(APIError) -> [UInt8] {
      guard let data = Data(base64Encoded: text), data.count == 16 else {
        throw APIError(400, .invalid, "md5Hash '\(text)' is not the base64 of 16 bytes.")
      }
      return Array(data)
    }
    func decodeCRC(_ text: String) throws(APIError) -> UInt32 {
      guard let data = Data(base64Encoded: text), data.count == 4 else {
        throw APIError(400, .invalid, "crc32c '\(text)' is not the base64 of 4 big-endian bytes.")
      }
      return data.reduce(0) { $0 << 8 | UInt32($1) }
    }
    if let text = document?["md5Hash"]?.stringValue { md5 = try decodeMD5(text) }
    if let text = document?["crc32c"]?.stringValue { crc = try decodeCRC(text) }
    for item in (header ?? "").split(separator: ",") {
      let pair = item.split(separator: "=", maxSplits: 1).map { $0.trimmingWhitespace() }
      guard pair.count == 2 else { continue }
      if pair[0] == "md5" { md5 = try decodeMD5(pair[1]) }
      if pair[0] == "crc32c" { crc = try decodeCRC(pair[1]) }
    }
    return (md5, crc)
  }

  // MARK: GCS resumable

  private func startGCSResumable(_ context: RequestContext, bucket: String) throws -> HTTPResponse {
    let headers = context.request.headers
    let body = context.request.bodyBytes()
    let document = try RequestOptions.jsonObject(body)
    guard let name = context.query["name"] ?? document["name"]?.stringValue else {
      throw APIError(400, .required, "Object name is required: give it as ?name=… or in the JSON body.")
    }
    try Self.validate(name)
    try MetadataPatch(json: document, options: patchOptions(context)).checkCustomMetadataSize()
    let conditions = try RequestOptions.preconditions(context.query, headers, read: false)
    try store.checkWrite(
        bucket: bucket, name: name, conditions: conditions, createsBucket: createsBucket(context.route.surface))
    var expected: Int64?
    if let text = headers["x-upload-content-length"], !text.isEmpty {
      expected = try RequestOptions.byteCount(text, header: "X-Upload-Content-Length", limit: limits.maxUploadBytes)
    }
    let type = try Self.contentTypeHeader(headers, "x-upload-content-type")
    var encodingDocument = document
    if let encoding = context.query["contentEncoding"], !encoding.isEmpty, case .object(var members) = document {
      members.append(("contentEncoding", .string(encoding)))
      encodingDocument = .object(members)
    }
    // The session keeps the document, not the start's query: a predefined ACL goes in as `acl`.
    if let predefined = context.query["predefinedAcl"], case .object(var members) = encodingDocument {
      let acl = try AccessControl.predefined(predefined, scope: .object)
      members.append(("acl", .array(acl.map(\.json))))
      encodingDocument = .object(members)
    }
    let session = try startSession(
      bucket: bucket, name: name, document: encodingDocument, conditions: conditions, expectedSize: expected,
      contentType: type, firebase: false)
    let location =
      "\(context.json.baseURL)/upload/storage/v1/b/\(URLCoding.encodeComponent(bucket))/o?uploadType=resumable&name=\(URLCoding.encodeComponent(name))&upload_id=\(session.id)"
    return HTTPResponse(.ok, headers: ["location": location, "x-guploader-uploadid": session.id])
  }

  /// Creates a resumable session that keeps the start's metadata document for the commit.
  func startSession(
    bucket: String, name: String, document: JSONValue, conditions: Preconditions, expectedSize: Int64?,
    contentType: String?, firebase: Bool, authorization: String? = nil
  ) throws -> UploadSession {
    var rendered = JSONWriter()
    Self.write(document, into: &rendered)
    var template = UploadSession(
      bucket: bucket, name: name, metadata: rendered.bytes, conditions: conditions, expectedSize: expectedSize,
      contentType: contentType, firebase: firebase)
    template.authorization = authorization
    return try sessions.create(template)
  }

  /// A chunk, a status query, or the whole object, sent to a GCS session URL (PUT or POST).
  func gcsResumableChunk(_ context: RequestContext) throws -> HTTPResponse {
    let id = context.query["upload_id"] ?? ""
    let session = try sessions.session(id)
    if context.method == "DELETE" {
      try sessions.cancel(id)
      return HTTPResponse(.noContent)
    }
    if session.state == .final { return try finishedSession(context, session) }
    guard session.state == .active else {
      throw APIError(404, .notFound, "The upload session \(id) was cancelled.")
    }
    let request = context.request
    let length = Int64(request.bodyCount)
    var total: Int64?
    var current = session
    if let header = request.headers["content-range"] {
      let range = try RequestOptions.contentRange(header)
      total = range.total
      if let total, total > Int64(limits.maxUploadBytes) {
        throw APIError(
          413, .uploadTooLarge,
          "Content-Range '\(header)' announces more than the \(limits.maxUploadBytes)-byte upload limit.")
      }
      if let bytes = range.bytes {
        // Both bounds are in [0, Int64.max) (ContentRange guarantees it): no overflow here.
        let announced = bytes.upperBound - bytes.lowerBound
        guard announced == length else {
          throw APIError(
            400, .invalid, "Content-Range '\(header)' announces \(announced) bytes but the body has \(length).")
        }
        guard bytes.upperBound <= Int64(limits.maxUploadBytes) else {
          throw APIError(
            413, .uploadTooLarge,
            "Content-Range '\(header)' reaches past the \(limits.maxUploadBytes)-byte upload limit.")
        }
        if bytes.lowerBound > current.received {
          throw APIError(
            400, .invalid,
            "The chunk starts at byte \(bytes.lowerBound) but \(current.received) bytes have been received; resume from \(current.received)."
          )
        }
        current = try append(request, to: id, at: bytes.lowerBound)
      } else if length > 0 {
        throw APIError(400, .invalid, "A 'bytes */N' status request must have an empty body.")
      }
    } else {
      // No Content-Range: the body is the whole object (gcloud-aio sends it this way).
      current = try append(request, to: id, at: 0)
      total = current.received
    }
    if let total, let expected = session.expectedSize, total != expected {
      throw APIError(400, .invalid, "The upload announced \(expected) bytes but Content-Range says \(total).")
    }
    if let total, current.received > total {
      throw APIError(400, .invalid, "Received \(current.received) bytes, more than the \(total) announced.")
    }
    guard let total, current.received == total else {
      var headers: HTTPHeaders = [:]
      if current.received > 0 { headers.add("range", "bytes=0-\(current.received - 1)") }
      headers.add("x-guploader-uploadid", id)
      return Self.resumeIncomplete(request.headers, headers)
    }
    let hashes = try Self.expectedHashes(document: nil, header: request.headers["x-goog-hash"])
    return try completeSession(context, current, hashes: hashes)
  }

  func append(_ request: HTTPRequest, to id: String, at offset: Int64) throws -> UploadSession {
    if let file = request.bodyFile {
      return try sessions.append(id, at: offset, file: file.path, allowOverlap: true)
    }
    return try sessions.append(id, at: offset, bytes: request.body, allowOverlap: true)
  }

  /// Commits a session's bytes as the object: the start's preconditions are checked again,
  /// atomically with the write.
  func completeSession(
    _ context: RequestContext, _ session: UploadSession, hashes: (md5: [UInt8]?, crc: UInt32?)
  ) throws -> HTTPResponse {
    let document = try RequestOptions.jsonObject(session.metadata)
    var options = patchOptions(context)
    options.customTimeWritable = !session.firebase
    options.tokensInCustomMetadata = !session.firebase
    var patch = try MetadataPatch(json: document, options: options)
    if let type = session.contentType { patch.fields[.contentType] = .set(type) }
    if session.firebase && patch.fields[.contentDisposition] == nil {
      patch.fields[.contentDisposition] = .set(Self.inlineDisposition(for: session.name))
    }
    if session.firebase { try authorizeFinalize(context, session, patch: patch) }
    let fromDocument = try Self.expectedHashes(document: document, header: nil)
    let upload = ObjectStore.Upload(
      patch: patch, expectedMD5: hashes.md5 ?? fromDocument.md5, expectedCRC32C: hashes.crc ?? fromDocument.crc,
      createDownloadToken: session.firebase, createsBucket: session.firebase || limits.lenientBuckets)
    let object = try sessions.complete(session.id) { data, digest throws(StorageError) -> ObjectMetadata in
      try store.insert(
        bucket: session.bucket, name: session.name, source: data, digest: digest, upload: upload,
        conditions: session.conditions)
    }
    var response = context.object(object)
    if session.firebase { response.headers.set("x-goog-upload-status", "final") }
    return response
  }

  /// A repeated final request: the object as it is now.
  func finishedSession(_ context: RequestContext, _ session: UploadSession) throws -> HTTPResponse {
    let object = try store.metadata(bucket: session.bucket, name: session.name)
    var response = context.object(object)
    if session.firebase { response.headers.set("x-goog-upload-status", "final") }
    return response
  }
}
