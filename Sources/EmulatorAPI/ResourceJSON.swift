import EmulatorHTTP
import EmulatorStorage

/// Renders resources in the two JSON flavours (PROTOCOL.md §2): int64s as strings, timestamps
/// `YYYY-MM-DDTHH:MM:SS.sssZ`, optional fields only when set.
struct ResourceJSON {
  /// `http://host:port` for links, from the request's `Host`.
  var baseURL: String
  /// Top-level keys to keep (`fields=`); nil keeps all.
  var fields: Set<String>?

  private func wants(_ key: String) -> Bool { fields?.contains(key) ?? true }

  // MARK: GCS

  func gcsObject(_ object: ObjectMetadata) -> [UInt8] {
    var json = JSONWriter(capacity: 768)
    writeGCSObject(object, into: &json, topLevel: true)
    return json.bytes
  }

  func writeGCSObject(_ object: ObjectMetadata, into json: inout JSONWriter, topLevel: Bool) {
    let filter = topLevel ? fields : nil
    func want(_ key: String) -> Bool { filter?.contains(key) ?? true }
    let encodedName = URLCoding.encodeComponent(object.name)
    let encodedBucket = URLCoding.encodeComponent(object.bucket)
    let generation = String(object.generation)
    json.beginObject()
    if want("kind") { json.string("kind", "storage#object") }
    if want("id") { json.string("id", "\(object.bucket)/\(object.name)/\(generation)") }
    if want("selfLink") { json.string("selfLink", "\(baseURL)/storage/v1/b/\(encodedBucket)/o/\(encodedName)") }
    if want("mediaLink") {
      json.string(
        "mediaLink",
        "\(baseURL)/download/storage/v1/b/\(encodedBucket)/o/\(encodedName)?generation=\(generation)&alt=media")
    }
    if want("name") { json.string("name", object.name) }
    if want("bucket") { json.string("bucket", object.bucket) }
    if want("generation") { json.string("generation", generation) }
    if want("metageneration") { json.string("metageneration", String(object.metageneration)) }
    if want("contentType") { json.optionalString("contentType", object.contentType) }
    if want("storageClass") { json.string("storageClass", "STANDARD") }
    if want("size") { json.string("size", String(object.size)) }
    if want("md5Hash") { json.optionalString("md5Hash", object.md5Base64) }
    if want("crc32c") { json.string("crc32c", object.crc32cBase64) }
    if want("etag") { json.string("etag", object.etag) }
    let created = Timestamp.format(milliseconds: object.timeCreated)
    if want("timeCreated") { json.string("timeCreated", created) }
    if want("updated") { json.string("updated", Timestamp.format(milliseconds: object.updated)) }
    if want("timeStorageClassUpdated") { json.string("timeStorageClassUpdated", created) }
    if want("cacheControl") { json.optionalString("cacheControl", object.cacheControl) }
    if want("contentDisposition") { json.optionalString("contentDisposition", object.contentDisposition) }
    if want("contentEncoding") { json.optionalString("contentEncoding", object.contentEncoding) }
    if want("contentLanguage") { json.optionalString("contentLanguage", object.contentLanguage) }
    if want("customTime"), let customTime = object.customTime {
      json.string("customTime", Timestamp.format(milliseconds: customTime))
    }
    if want("componentCount"), let count = object.componentCount { json.raw("componentCount", String(count)) }
    if want("metadata") && (!object.custom.isEmpty || !object.downloadTokens.isEmpty) {
      json.objectKey("metadata")
      var custom = object.custom
      if !object.downloadTokens.isEmpty {
        custom[MetadataPatch.tokensKey] = object.downloadTokens.joined(separator: ",")
      }
      for (key, value) in custom.sorted(by: { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }) {
        json.string(key, value)
      }
      json.endObject()
    }
    json.endObject()
  }

  func gcsList(_ page: ListPage) -> [UInt8] {
    var json = JSONWriter(capacity: 256 + page.items.count * 700)
    json.beginObject()
    json.string("kind", "storage#objects")
    if let token = page.nextPageToken, wants("nextPageToken") { json.string("nextPageToken", token) }
    if !page.prefixes.isEmpty && wants("prefixes") {
      json.beginArray("prefixes")
      for prefix in page.prefixes { json.string(prefix) }
      json.endArray()
    }
    if !page.items.isEmpty && wants("items") {
      json.beginArray("items")
      for item in page.items { writeGCSObject(item, into: &json, topLevel: false) }
      json.endArray()
    }
    json.endObject()
    return json.bytes
  }

  func bucket(_ bucket: BucketInfo) -> [UInt8] {
    var json = JSONWriter()
    writeBucket(bucket, into: &json, topLevel: true)
    return json.bytes
  }

  func writeBucket(_ bucket: BucketInfo, into json: inout JSONWriter, topLevel: Bool) {
    let filter = topLevel ? fields : nil
    func want(_ key: String) -> Bool { filter?.contains(key) ?? true }
    let created = Timestamp.format(milliseconds: bucket.timeCreated)
    json.beginObject()
    if want("kind") { json.string("kind", "storage#bucket") }
    if want("id") { json.string("id", bucket.name) }
    if want("selfLink") { json.string("selfLink", "\(baseURL)/storage/v1/b/\(URLCoding.encodeComponent(bucket.name))") }
    if want("projectNumber") { json.string("projectNumber", "0") }
    if want("name") { json.string("name", bucket.name) }
    if want("timeCreated") { json.string("timeCreated", created) }
    if want("updated") { json.string("updated", created) }
    if want("metageneration") { json.string("metageneration", "1") }
    if want("location") { json.string("location", "US") }
    if want("locationType") { json.string("locationType", "multi-region") }
    if want("storageClass") { json.string("storageClass", "STANDARD") }
    if want("etag") { json.string("etag", "CAE=") }
    json.endObject()
  }

  func bucketList(_ buckets: [BucketInfo]) -> [UInt8] {
    var json = JSONWriter()
    json.beginObject()
    json.string("kind", "storage#buckets")
    if !buckets.isEmpty {
      json.beginArray("items")
      for bucket in buckets { writeBucket(bucket, into: &json, topLevel: false) }
      json.endArray()
    }
    json.endObject()
    return json.bytes
  }

  // MARK: Firebase

  /// The `/v0` resource: no kind/id/links, crc32c as a decimal string, tokens comma-joined,
  /// `contentEncoding` defaulting to `identity`, `metadata` always an object.
  func firebaseObject(_ object: ObjectMetadata) -> [UInt8] {
    var json = JSONWriter(capacity: 512)
    json.beginObject()
    json.string("name", object.name)
    json.string("bucket", object.bucket)
    json.string("generation", String(object.generation))
    json.string("metageneration", String(object.metageneration))
    json.optionalString("contentType", object.contentType)
    json.string("timeCreated", Timestamp.format(milliseconds: object.timeCreated))
    json.string("updated", Timestamp.format(milliseconds: object.updated))
    json.string("storageClass", "STANDARD")
    json.string("size", String(object.size))
    json.optionalString("md5Hash", object.md5Base64)
    json.string("crc32c", String(object.crc32c))
    json.string("etag", object.etag)
    if !object.downloadTokens.isEmpty {
      json.string("downloadTokens", object.downloadTokens.joined(separator: ","))
    }
    json.string("contentEncoding", object.contentEncoding ?? "identity")
    json.optionalString("contentDisposition", object.contentDisposition)
    json.objectKey("metadata")
    for (key, value) in object.sortedCustom { json.string(key, value) }
    json.endObject()
    json.optionalString("contentLanguage", object.contentLanguage)
    json.optionalString("cacheControl", object.cacheControl)
    json.endObject()
    return json.bytes
  }

  /// Items carry only `name` and `bucket`: the Apple SDK drops every item otherwise.
  func firebaseList(_ page: ListPage) -> [UInt8] {
    var json = JSONWriter(capacity: 128 + page.items.count * 80)
    json.beginObject()
    json.beginArray("prefixes")
    for prefix in page.prefixes { json.string(prefix) }
    json.endArray()
    json.beginArray("items")
    for item in page.items {
      json.beginObject()
      json.string("name", item.name)
      json.string("bucket", item.bucket)
      json.endObject()
    }
    json.endArray()
    json.optionalString("nextPageToken", page.nextPageToken)
    json.endObject()
    return json.bytes
  }
}
