import EmulatorStorage
import EmulatorSupport

#if canImport(Glibc)
  import Glibc
#endif

/// The Firebase emulator suite's export format, written by `POST /internal/export`,
/// `--export-on-exit` and read by `--import`, so data moves between the Firebase Storage
/// emulator and this one both ways:
///
///     DIR/firebase-export-metadata.json   {"version": …, "storage": {"version": …, "path": "storage_export"}}
///     DIR/storage_export/buckets.json     {"buckets": [{"id": "<bucket>"}, …]}
///     DIR/storage_export/blobs/<id>       an object's bytes
///     DIR/storage_export/metadata/<id>.json   its metadata (the Firebase emulator's StoredFileMetadata)
///
/// `<id>` is any file name; the Firebase emulator pairs a metadata file with the blob of the
/// same relative path less `.json`, and takes bucket and name from the metadata. This emulator
/// writes `<bucket>%2F<name>` percent-encoded (the layout of the Firebase emulator's
/// `flattened-emulator-data` fixture) when that fits in a file name, a UUID otherwise.
enum FirebaseExport {
  static let metadataFile = "firebase-export-metadata.json"
  static let storageFolder = "storage_export"

  struct Summary: Sendable, Equatable {
    var objects = 0
    var buckets = 0
    var bytes: Int64 = 0
    var skipped = 0
  }

  // MARK: Export

  /// Writes the whole store to `directory` (created if missing). The storage folder is built
  /// beside the old one and swapped in at the end, so a failed export leaves the previous one.
  static func export(_ store: ObjectStore, to directory: String) throws(StorageError) -> Summary {
    let root = URL(fileURLWithPath: directory).standardizedFileURL.path
    let staging = root + "/." + storageFolder + "-" + UUID().uuidString.prefix(8)
    var summary = Summary()
    do {
      try FileManager.default.createDirectory(atPath: staging + "/blobs", withIntermediateDirectories: true)
      try FileManager.default.createDirectory(atPath: staging + "/metadata", withIntermediateDirectories: true)
      let buckets = store.listBuckets()
      var list = JSONWriter()
      list.beginObject()
      list.beginArray("buckets")
      for bucket in buckets {
        list.beginObject()
        list.string("id", bucket.name)
        list.endObject()
      }
      list.endArray()
      list.endObject()
      try write(list.bytes, to: staging + "/buckets.json")
      summary.buckets = buckets.count
      for bucket in buckets {
        var after: String?
        while true {
          let page = store.objects(in: bucket.name, after: after, limit: 500)
          guard let last = page.last else { break }
          after = last.name
          for listed in page {
            let id = fileID(bucket: bucket.name, name: listed.name)
            let object: ObjectMetadata
            let digest: (md5: [UInt8], crc32c: UInt32)
            do {
              let (opened, data) = try store.open(bucket: bucket.name, name: listed.name)
              object = opened
              digest = try copy(data, size: Int(opened.size), to: staging + "/blobs/" + id)
            } catch .objectNotFound {
              continue  // deleted meanwhile
            }
            try write(metadataJSON(object, md5: digest.md5), to: staging + "/metadata/" + id + ".json")
            summary.objects += 1
            summary.bytes += object.size
          }
        }
      }
      var meta = JSONWriter()
      meta.beginObject()
      meta.string("version", "storage-emulator \(CommandLineTool.version)")
      meta.objectKey("storage")
      meta.string("version", "storage-emulator \(CommandLineTool.version)")
      meta.string("path", storageFolder)
      meta.endObject()
      meta.endObject()
      // Swap the new storage folder in, then write the metadata file that points at it.
      let final = root + "/" + storageFolder
      let old = root + "/." + storageFolder + "-old-" + UUID().uuidString.prefix(8)
      let hadOld = FileManager.default.fileExists(atPath: final)
      if hadOld { try FileManager.default.moveItem(atPath: final, toPath: old) }
      try FileManager.default.moveItem(atPath: staging, toPath: final)
      if hadOld { try? FileManager.default.removeItem(atPath: old) }
      try write(meta.bytes, to: root + "/" + metadataFile)
    } catch let error as StorageError {
      try? FileManager.default.removeItem(atPath: staging)
      throw error
    } catch {
      try? FileManager.default.removeItem(atPath: staging)
      throw StorageError.io("export to \(root) failed: \(ErrorText.describe(error))")
    }
    return summary
  }

  /// `<bucket>%2F<name>` with everything but `A-Z a-z 0-9 . _ - ~` percent-encoded; a UUID when
  /// that would be too long for a file name (255 bytes with `.json`).
  static func fileID(bucket: String, name: String) -> String {
    var id = ""
    for byte in (bucket + "/" + name).utf8 {
      switch byte {
      case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
        UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "-"),
        UInt8(ascii: "~"):
        id.unicodeScalars.append(Unicode.Scalar(byte))
      default:
        id += "%" + String(byte >> 4, radix: 16, uppercase: true) + String(byte & 15, radix: 16, uppercase: true)
      }
    }
    return id.utf8.count <= 200 ? id : UUID().uuidString.lowercased()
  }

  /// The Firebase emulator's metadata document for an object (its field names and types:
  /// numbers for generation, metageneration and size, `crc32c` as a decimal string). `md5Hash`
  /// is always there (the Firebase emulator requires it), computed from the bytes for composite
  /// objects, which also carry `componentCount` (ignored by the Firebase emulator).
  static func metadataJSON(_ object: ObjectMetadata, md5: [UInt8]) -> [UInt8] {
    var json = JSONWriter(capacity: 512)
    json.beginObject()
    json.string("name", object.name)
    json.string("bucket", object.bucket)
    json.optionalString("contentType", object.contentType)
    json.raw("metageneration", String(object.metageneration))
    json.raw("generation", String(object.generation))
    json.string("storageClass", "STANDARD")
    json.optionalString("contentDisposition", object.contentDisposition)
    json.optionalString("cacheControl", object.cacheControl)
    json.optionalString("contentLanguage", object.contentLanguage)
    if let customTime = object.customTime { json.timestamp("customTime", milliseconds: customTime) }
    json.optionalString("contentEncoding", object.contentEncoding)
    json.beginArray("downloadTokens")
    for token in object.downloadTokens { json.string(token) }
    json.endArray()
    json.string("etag", object.etag)
    json.timestamp("timeCreated", milliseconds: object.timeCreated)
    json.timestamp("updated", milliseconds: object.updated)
    json.raw("size", String(object.size))
    json.base64("md5Hash", object.md5 ?? md5)
    json.string("crc32c", String(object.crc32c))
    if let count = object.componentCount { json.raw("componentCount", String(count)) }
    if !object.custom.isEmpty {
      json.objectKey("customMetadata")
      for (key, value) in object.sortedCustom { json.string(key, value) }
      json.endObject()
    }
    json.endObject()
    return json.bytes
  }

  /// Copies an object's bytes to `path`, returning their digests.
  private static func copy(_ data: ObjectData, size: Int, to path: String) throws(StorageError) -> (
    md5: [UInt8], crc32c: UInt32
  ) {
    let out = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
    guard out >= 0 else { throw StorageError.io("cannot create \(path): \(String(cString: strerror(errno)))") }
    defer { close(out) }
    var digester = Digester()
    /// False when the write failed.
    func put(_ bytes: UnsafeRawBufferPointer) -> Bool {
      digester.update(bytes)
      var offset = 0
      while offset < bytes.count {
        let written = Glibc.write(out, bytes.baseAddress! + offset, bytes.count - offset)
        if written < 0 && errno == EINTR { continue }
        guard written > 0 else { return false }
        offset += written
      }
      return true
    }
    let writeFailed = StorageError.io("cannot write \(path)")
    switch data {
    case .bytes(let bytes):
      guard bytes.withUnsafeBytes({ put($0) }) else { throw writeFailed }
    case .file(let file):
      var buffer = [UInt8](repeating: 0, count: 1 << 20)
      var offset = 0
      while offset < size {
        let count = buffer.withUnsafeMutableBytes {
          pread(file.fd, $0.baseAddress, min($0.count, size - offset), off_t(offset))
        }
        if count < 0 && errno == EINTR { continue }
        guard count > 0 else { throw StorageError.io("cannot read the data of an object for export") }
        guard buffer.withUnsafeBytes({ put(UnsafeRawBufferPointer(rebasing: $0[0..<count])) }) else { throw writeFailed }
        offset += count
      }
    }
    return digester.finalize()
  }

  static func write(_ bytes: [UInt8], to path: String) throws(StorageError) {
    do {
      try Data(bytes).write(to: URL(fileURLWithPath: path))
    } catch {
      throw StorageError.io("cannot write \(path): \(ErrorText.describe(error))")
    }
  }
}
