import EmulatorHTTP
import EmulatorStorage

/// The XML API's resumable start (`POST /<bucket>/<object>` with `x-goog-resumable: start`, what a
/// signed URL made with `method="RESUMABLE"` is used for): `201 Created` with a `Location` to PUT
/// the data to. The session is the JSON API's, so `Location` is its `/upload/storage/v1` session
/// URL, which takes chunks, status queries and `DELETE` as every resumable session does.
extension StorageAPI {
  func xmlResumableStart(_ context: XMLContext) throws(XMLError) -> HTTPResponse {
    do {
      return try xmlResumableStart(context.request, bucket: context.bucket, name: context.name)
    } catch {
      throw XMLError(error)
    }
  }

  func xmlResumableStart(_ request: HTTPRequest, bucket: String, name: String) throws(APIError) -> HTTPResponse {
    try Self.validate(name)
    let headers = request.headers
    var members: [(String, JSONValue)] = []
    var custom: [(String, JSONValue)] = []
    for (field, header) in [
      ("contentType", "content-type"), ("cacheControl", "cache-control"), ("contentDisposition", "content-disposition"),
      ("contentEncoding", "content-encoding"), ("contentLanguage", "content-language"),
    ] {
      if let value = headers[header], !value.isEmpty { members.append((field, .string(value))) }
    }
    for (header, value) in headers where header.hasPrefix("x-goog-meta-") && header.count > 12 {
      custom.append((String(header.dropFirst(12)), .string(value)))
    }
    if !custom.isEmpty { members.append(("metadata", .object(custom))) }
    let document = JSONValue.object(members)
    _ = try storage { () throws(StorageError) in
      try MetadataPatch(
        json: document,
        options: MetadataPatch.Options(replace: false, customTimeWritable: true, tokensInCustomMetadata: true))
    }
    var conditions = Preconditions()
    for (header, apply) in [
      ("x-goog-if-generation-match", { (c: inout Preconditions, v: Int64) in c.ifGenerationMatch = v }),
      ("x-goog-if-metageneration-match", { (c: inout Preconditions, v: Int64) in c.ifMetagenerationMatch = v }),
    ] {
      guard let text = headers[header] else { continue }
      guard let value = Int64(text.trimmingASCIIWhitespace()) else {
        throw APIError(400, .invalid, "\(header) '\(text)' is not a 64-bit integer.")
      }
      apply(&conditions, value)
    }
    try storage { () throws(StorageError) in try store.checkWrite(bucket: bucket, name: name, conditions: conditions) }
    let session = try startSession(
      bucket: bucket, name: name, document: document, conditions: conditions, expectedSize: nil,
      contentType: headers["content-type"], firebase: false)
    let base = "http://" + (headers["host"] ?? "127.0.0.1")
    let location =
      "\(base)/upload/storage/v1/b/\(URLCoding.encodeComponent(bucket))/o?uploadType=resumable&name=\(URLCoding.encodeComponent(name))&upload_id=\(session.id)"
    return HTTPResponse(.created, headers: ["location": location, "x-guploader-uploadid": session.id])
  }
}
