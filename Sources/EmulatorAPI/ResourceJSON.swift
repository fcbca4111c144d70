import EmulatorHTTP
import EmulatorStorage

/// Renders resources in the two JSON flavours (PROTOCOL.md §2): int64s as strings, timestamps
/// `YYYY-MM-DDTHH:MM:SS.sssZ`, optional fields only when set.
struct ResourceJSON {
  /// `http://host:port` for links, from the request's `Host`.
  var baseURL: String
  /// Top-level keys to keep (`fields=`); nil keeps all.
  var fields: Set<String>?
  /// `projection=full`: resources carry `acl` (and `defaultObjectAcl`) and `owner`.
  var full = false

  private func wants(_ key: String) -> Bool { fields?.contains(key) ?? true }

  // MARK: GCS

  /// `timeDeleted`: set for a noncurrent generation (versioned buckets).
  func gcsObject(_ object: ObjectMetadata, timeDeleted: Int64? = nil) -> [UInt8] {
    var json = JSONWriter(capacity: 768)
    writeGCSObject(object, into: &json, topLevel: true, timeDeleted: timeDeleted)
    return json.bytes
  }

  func writeGCSObject(
    _ object: ObjectMetadata, into json: inout JSONWriter, topLevel: Bool, timeDeleted: Int64? = nil
  ) {
    let filter = topLevel ? fields : nil
    func want(_ key: String) -> Bool { filter?.contains(key) ?? true }
    let encodedName = URLCoding.encodeComponent(object.name)
    let encodedBucket = URLCoding.encodeComponent(object.bucket)
    // Keys as `literalKey` (copied whole, no escape scan): this runs for every object rendered.
    func member(_ key: StaticString, _ write: (inout JSONWriter) -> Void) {
      if let filter, !filter.contains(key.description) { return }
      json.literalKey(key)
      write(&json)
    }
    func timestamp(_ key: StaticString, _ milliseconds: Int64?) {
      if let milliseconds { member(key) { $0.timestamp(milliseconds: milliseconds) } }
    }
    func string(_ key: StaticString, _ value: String?) {
      if let value { member(key) { $0.string(value) } }
    }
    json.beginObject()
    string("kind", "storage#object")
    member("id") { json in
      json.beginString()
      json.stringPart(object.bucket)
      json.literalPart("/")
      json.stringPart(object.name)
      json.literalPart("/")
      json.stringPart(object.generation)
      json.endString()
    }
    member("selfLink") { json in
      json.beginString()
      objectPath(encodedBucket, encodedName, into: &json)
      json.endString()
    }
    member("mediaLink") { json in
      json.beginString()
      json.stringPart(baseURL)
      json.literalPart("/download")
      objectPath(encodedBucket, encodedName, into: &json, withBase: false)
      json.literalPart("?generation=")
      json.stringPart(object.generation)
      json.literalPart("&alt=media")
      json.endString()
    }
    string("name", object.name)
    string("bucket", object.bucket)
    member("generation") { $0.integerString(object.generation) }
    member("metageneration") { $0.integerString(object.metageneration) }
    string("contentType", object.contentType)
    string("storageClass", object.storageClass ?? "STANDARD")
    member("size") { $0.integerString(object.size) }
    if let md5 = object.md5 { member("md5Hash") { $0.base64(md5) } }
    member("crc32c") { $0.base64(object.crc32cBytes) }
    member("etag") { $0.base64(object.etagBytes) }
    timestamp("timeCreated", object.timeCreated)
    timestamp("updated", object.updated)
    timestamp("timeDeleted", timeDeleted)
    timestamp("timeStorageClassUpdated", object.timeCreated)
    string("cacheControl", object.cacheControl)
    string("contentDisposition", object.contentDisposition)
    string("contentEncoding", object.contentEncoding)
    string("contentLanguage", object.contentLanguage)
    timestamp("customTime", object.customTime)
    if let count = object.componentCount { member("componentCount") { $0.rawValue(String(count)) } }
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
    if full && !object.acl.isEmpty {
      if want("acl") { writeACL(object.acl, of: .object(object), etag: object.etag, key: "acl", into: &json) }
      if want("owner") { writeOwner(into: &json) }
    }
    json.endObject()
  }

  /// `<baseURL>/storage/v1/b/<bucket>/o/<name>` (the base left out with `withBase: false`).
  private func objectPath(
    _ encodedBucket: String, _ encodedName: String, into json: inout JSONWriter, withBase: Bool = true
  ) {
    if withBase { json.stringPart(baseURL) }
    json.literalPart("/storage/v1/b/")
    json.stringPart(encodedBucket)
    json.literalPart("/o/")
    json.stringPart(encodedName)
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
      for (position, item) in page.items.enumerated() {
        let deleted = position < page.timeDeleted.count ? page.timeDeleted[position] : nil
        writeGCSObject(item, into: &json, topLevel: false, timeDeleted: deleted)
      }
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
    if want("updated") { json.string("updated", Timestamp.format(milliseconds: bucket.updated)) }
    if want("metageneration") { json.string("metageneration", String(bucket.metageneration)) }
    if case .object(let settings) = bucket.settings {
      for (key, value) in settings where want(key) {
        json.key(key)
        value.write(into: &json)
      }
    }
    let etag = Self.etag(of: bucket)
    if full && !bucket.uniformAccess {
      let name = bucket.name
      if want("acl") { writeACL(bucket.access.acl, of: .bucket(name), etag: etag, key: "acl", into: &json) }
      if want("defaultObjectAcl") {
        writeACL(bucket.access.defaultObjectAcl, of: .defaultObject(name), etag: etag, key: "defaultObjectAcl", into: &json)
      }
      if want("owner") { writeOwner(into: &json) }
    }
    if want("etag") { json.string("etag", etag) }
    json.endObject()
  }

  /// A bucket's etag as GCS derives it: a base64 protobuf varint of the metageneration (the
  /// encoding `IAMPolicy.etag` shares).
  static func etag(of bucket: BucketInfo) -> String { IAMPolicy.etag(revision: bucket.metageneration) }

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
  /// Keys as `literalKey`, as in `writeGCSObject`: a Firebase upload or metadata read renders one.
  func firebaseObject(_ object: ObjectMetadata) -> [UInt8] {
    var json = JSONWriter(capacity: 512)
    func string(_ key: StaticString, _ value: String?) {
      guard let value else { return }
      json.literalKey(key)
      json.string(value)
    }
    func integer(_ key: StaticString, _ value: Int64) {
      json.literalKey(key)
      json.integerString(value)
    }
    json.beginObject()
    string("name", object.name)
    string("bucket", object.bucket)
    integer("generation", object.generation)
    integer("metageneration", object.metageneration)
    string("contentType", object.contentType)
    json.literalKey("timeCreated")
    json.timestamp(milliseconds: object.timeCreated)
    json.literalKey("updated")
    json.timestamp(milliseconds: object.updated)
    string("storageClass", object.storageClass ?? "STANDARD")
    integer("size", object.size)
    if let md5 = object.md5 {
      json.literalKey("md5Hash")
      json.base64(md5)
    }
    integer("crc32c", Int64(object.crc32c))
    json.literalKey("etag")
    json.base64(object.etagBytes)
    if !object.downloadTokens.isEmpty { string("downloadTokens", object.downloadTokens.joined(separator: ",")) }
    string("contentEncoding", object.contentEncoding ?? "identity")
    string("contentDisposition", object.contentDisposition)
    json.literalKey("metadata")
    json.beginObject()
    for (key, value) in object.sortedCustom { json.string(key, value) }
    json.endObject()
    string("contentLanguage", object.contentLanguage)
    string("cacheControl", object.cacheControl)
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
