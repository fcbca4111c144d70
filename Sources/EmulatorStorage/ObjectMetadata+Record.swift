import EmulatorSupport

/// The on-disk form of `ObjectMetadata` (format version 1): one small JSON document per object.
/// int64s are strings; times are milliseconds since the epoch; hashes are base64.
extension ObjectMetadata {
  public static let recordFormat = 1

  public func recordJSON() -> [UInt8] {
    var json = JSONWriter(capacity: 384)
    json.beginObject()
    json.raw("format", String(Self.recordFormat))
    json.string("bucket", bucket)
    json.string("name", name)
    json.string("generation", String(generation))
    json.string("metageneration", String(metageneration))
    json.string("size", String(size))
    json.optionalString("md5Hash", md5Base64)
    json.raw("crc32c", String(crc32c))
    json.optionalString("contentType", contentType)
    json.optionalString("cacheControl", cacheControl)
    json.optionalString("contentDisposition", contentDisposition)
    json.optionalString("contentEncoding", contentEncoding)
    json.optionalString("contentLanguage", contentLanguage)
    if let customTime { json.string("customTime", String(customTime)) }
    json.objectKey("metadata")
    for (key, value) in sortedCustom { json.string(key, value) }
    json.endObject()
    json.beginArray("downloadTokens")
    for token in downloadTokens { json.string(token) }
    json.endArray()
    json.string("timeCreated", String(timeCreated))
    json.string("updated", String(updated))
    if let componentCount { json.raw("componentCount", String(componentCount)) }
    json.optionalString("storageClass", storageClass)
    if !acl.isEmpty {
      json.key("acl")
      JSONValue.array(acl.map(\.json)).write(into: &json)
    }
    json.endObject()
    return json.bytes
  }

  /// Reads a record; throws `io` naming what is wrong with it.
  public init(record bytes: [UInt8]) throws(StorageError) {
    let document: JSONValue
    do {
      document = try JSONValue.parse(bytes)
    } catch {
      throw StorageError.io("metadata record is not valid JSON (\(error))")
    }
    func string(_ key: String) throws(StorageError) -> String {
      guard let value = document[key]?.stringValue else { throw StorageError.io("metadata record lacks '\(key)'") }
      return value
    }
    func int(_ key: String) throws(StorageError) -> Int64 {
      guard let value = Int64(try string(key)) else { throw StorageError.io("metadata record has a bad '\(key)'") }
      return value
    }
    guard case .number(let format)? = document["format"], format == String(Self.recordFormat) else {
      throw StorageError.io("metadata record has an unknown format")
    }
    guard case .number(let crcText)? = document["crc32c"], let crc = UInt32(crcText) else {
      throw StorageError.io("metadata record has a bad 'crc32c'")
    }
    var md5: [UInt8]?
    if let text = document["md5Hash"]?.stringValue {
      guard let data = Data(base64Encoded: text), data.count == 16 else {
        throw StorageError.io("metadata record has a bad 'md5Hash'")
      }
      md5 = Array(data)
    }
    self.init(
      bucket: try string("bucket"), name: try string("name"), generation: try int("generation"),
      size: try int("size"), md5: md5, crc32c: crc, now: try int("timeCreated"))
    metageneration = try int("metageneration")
    updated = try int("updated")
    contentType = document["contentType"]?.stringValue
    cacheControl = document["cacheControl"]?.stringValue
    contentDisposition = document["contentDisposition"]?.stringValue
    contentEncoding = document["contentEncoding"]?.stringValue
    contentLanguage = document["contentLanguage"]?.stringValue
    customTime = document["customTime"]?.stringValue.flatMap { Int64($0) }
    if case .object(let entries)? = document["metadata"], !entries.isEmpty {
      var custom: [String: String] = [:]
      for (key, value) in entries {
        guard let text = value.stringValue else { throw StorageError.io("metadata record has a bad custom value") }
        custom[key] = text
      }
      self.custom = custom
    }
    if case .array(let tokens)? = document["downloadTokens"] {
      downloadTokens = tokens.compactMap(\.stringValue)
    }
    if case .number(let count)? = document["componentCount"] { componentCount = Int(count) }
    storageClass = document["storageClass"]?.stringValue
    acl = AccessControl.records(document["acl"])
  }
}
