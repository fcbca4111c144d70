import EmulatorHTTP
import EmulatorStorage

/// Buckets (PROTOCOL.md, "Buckets"): insert keeps every writable field, GET, PATCH, PUT, DELETE,
/// and the storage layout gcloud asks for.
extension StorageAPI {
  func createBucket(_ context: RequestContext) throws -> HTTPResponse {
    let body = try RequestOptions.jsonObject(context.request.bodyBytes())
    guard let name = body["name"]?.stringValue ?? context.query["name"] else {
      throw APIError(400, .required, "Bucket name is required: send {\"name\": \"...\"}.")
    }
    let access = try requestedBucketAccess(context, body, current: nil)
    var bucket = try store.createBucket(name, resource: body)
    bucket = try applyBucketAccess(name, access) ?? bucket
    return context.ok(context.json.bucket(bucket))
  }

  func listBuckets(_ context: RequestContext) -> HTTPResponse {
    context.ok(context.json.bucketList(store.listBuckets()))
  }

  func getBucket(_ context: RequestContext) throws -> HTTPResponse {
    let info = try store.bucket(context.bucket)
    if let expected = try RequestOptions.int64(context.query, "ifMetagenerationMatch"),
      expected != info.metageneration
    {
      throw APIError(
        StorageError.conditionNotMet("ifMetagenerationMatch: the bucket's metageneration is \(info.metageneration)."))
    }
    return context.ok(context.json.bucket(info))
  }

  /// PATCH merges, PUT replaces.
  func updateBucket(_ context: RequestContext) throws -> HTTPResponse {
    let bucket = context.bucket
    let body = try RequestOptions.jsonObject(context.request.bodyBytes())
    if let name = body["name"]?.stringValue, name != bucket {
      throw APIError(400, .invalid, "The bucket name in the body ('\(name)') differs from the one in the path.")
    }
    let access = try requestedBucketAccess(context, body, current: bucket)
    let match = try RequestOptions.int64(context.query, "ifMetagenerationMatch")
    let notMatch = try RequestOptions.int64(context.query, "ifMetagenerationNotMatch")
    let info = try store.updateBucket(
        bucket, resource: body, replace: context.method == "PUT", ifMetagenerationMatch: match,
        ifMetagenerationNotMatch: notMatch)
    return context.ok(context.json.bucket(try applyBucketAccess(bucket, access) ?? info))
  }

  func deleteBucket(_ context: RequestContext) throws -> HTTPResponse {
    try store.deleteBucket(context.bucket, discardingNoncurrent: limits.discardNoncurrentOnBucketDelete)
    return HTTPResponse(.noContent)
  }

  /// `GET /storage/v1/b/{bucket}/storageLayout`: the bucket's `hierarchicalNamespace` as it was created.
  func storageLayout(_ context: RequestContext) throws -> HTTPResponse {
    let info = try store.bucket(context.bucket)
    var json = JSONWriter()
    json.beginObject()
    json.string("kind", "storage#storageLayout")
    json.string("bucket", info.name)
    json.string("location", info.settings["location"]?.stringValue ?? "US")
    json.string("locationType", info.settings["locationType"]?.stringValue ?? "multi-region")
    json.key("hierarchicalNamespace")
    json.beginObject()
    json.bool("enabled", info.settings["hierarchicalNamespace"]?["enabled"] == .bool(true))
    json.endObject()
    json.endObject()
    return context.ok(json.bytes)
  }

  /// `GET /storage/v1/b/{bucket}/managedFolders`: managed folders (folder-level IAM) are not
  /// emulated, so a bucket never has any; creating one is refused.
  func managedFolders(_ context: RequestContext) throws -> HTTPResponse {
    _ = try store.bucket(context.bucket)
    guard context.method == "POST" else { return context.ok(Array(#"{"kind":"storage#managedFolders"}"#.utf8)) }
    throw APIError(400, .invalid, "Managed folders are not emulated by this emulator.")
  }
}
