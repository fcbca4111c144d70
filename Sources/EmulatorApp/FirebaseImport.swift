import EmulatorStorage
import EmulatorSupport

#if canImport(Glibc)
  import Glibc
#endif

/// `--import DIR`: reads the Firebase emulator suite's export format (see `FirebaseExport`), as
/// the Firebase Storage emulator does: the buckets of `buckets.json`, then each
/// `metadata/<id>.json` with the blob `blobs/<id>` (any folder nesting; object names exported on
/// Windows, with `\` separators, get `/`). Generation, metageneration, times, download tokens and
/// custom metadata are kept; size and hashes are computed from the blob. A missing `metadata/` or
/// `blobs/` folder, a metadata file without its blob, or a document that cannot be read is
/// reported and skipped, as the Firebase emulator does. Importing the same export again leaves
/// objects that already match alone.
struct FirebaseImport {
  let store: ObjectStore
  /// Where copies of large blobs are made before the store takes them.
  let spoolDirectory: String
  let log: @Sendable (String) -> Void
  static let maxDepth = 64

  func load(from directory: String) throws(StorageError) -> FirebaseExport.Summary {
    let storage = try Self.storageFolder(directory)
    var summary = FirebaseExport.Summary()
    let bucketsPath = storage + "/buckets.json"
    guard let bucketList = try SeedLoader.jsonFile(bucketsPath, prefix: "--import: ") else {
      throw StorageError.invalid("--import: no \(bucketsPath) (not a Firebase emulator export)")
    }
    guard case .array(let entries)? = bucketList["buckets"] else {
      throw StorageError.invalid("--import: \(bucketsPath) has no \"buckets\" array")
    }
    for entry in entries {
      guard let id = entry["id"]?.stringValue else { continue }
      do {
        _ = try store.createBucket(id)
        summary.buckets += 1
      } catch .bucketExists {
        summary.buckets += 1
      } catch {
        log("import: skipped the bucket '\(id)': \(error)")
      }
    }
    let metadataFolder = storage + "/metadata"
    let blobsFolder = storage + "/blobs"
    guard SeedLoader.isDirectory(metadataFolder), SeedLoader.isDirectory(blobsFolder) else {
      log("import: no metadata/ or blobs/ folder in \(storage): buckets only")
      return summary
    }
    walk(metadataFolder, relative: "", depth: 0) { relative in
      guard relative.hasSuffix(".json") else {
        log("import: skipped the unexpected file \(metadataFolder)/\(relative)")
        return
      }
      let blob = blobsFolder + "/" + relative.dropLast(5)
      do throws(StorageError) {
        if let size = try importObject(metadata: metadataFolder + "/" + relative, blob: String(blob)) {
          summary.objects += 1
          summary.bytes += size
        }
      } catch {
        log("import: skipped \(metadataFolder)/\(relative): \(error)")
        summary.skipped += 1
      }
    }
    return summary
  }

  /// The `storage_export` folder of an export: the path that `firebase-export-metadata.json`
  /// names, or `DIR` itself when it holds `buckets.json`.
  static func storageFolder(_ directory: String) throws(StorageError) -> String {
    let root = URL(fileURLWithPath: directory).standardizedFileURL.path
    guard SeedLoader.isDirectory(root) else { throw StorageError.invalid("--import: '\(directory)' is not a folder") }
    if let document = try SeedLoader.jsonFile(root + "/" + FirebaseExport.metadataFile, prefix: "--import: ") {
      guard let path = document["storage"]?["path"]?.stringValue else {
        throw StorageError.invalid("--import: \(root)/\(FirebaseExport.metadataFile) names no storage export")
      }
      return URL(fileURLWithPath: path, relativeTo: URL(fileURLWithPath: root + "/")).standardizedFileURL.path
    }
    if FileManager.default.fileExists(atPath: root + "/buckets.json") { return root }
    throw StorageError.invalid(
      "--import: \(root) has neither \(FirebaseExport.metadataFile) nor buckets.json (not a Firebase emulator export)")
  }

  /// Files below `folder`, as paths relative to it, in name order.
  private func walk(_ folder: String, relative: String, depth: Int, _ body: (String) -> Void) {
    guard depth < Self.maxDepth else { return }
    let base = relative.isEmpty ? folder : folder + "/" + relative
    for entry in ((try? FileManager.default.contentsOfDirectory(atPath: base)) ?? []).sorted() {
      let path = relative.isEmpty ? entry : relative + "/" + entry
      if SeedLoader.isDirectory(folder + "/" + path) {
        walk(folder, relative: path, depth: depth + 1, body)
      } else {
        body(path)
      }
    }
  }

  /// Imports one object; returns its size, or nil when the same object is already there.
  private func importObject(metadata path: String, blob: String) throws(StorageError) -> Int64? {
    guard FileManager.default.fileExists(atPath: blob) else { throw StorageError.invalid("no blob at \(blob)") }
    guard let document = try SeedLoader.jsonFile(path) else { throw StorageError.io("cannot read \(path)") }
    var template = try Self.template(document)
    var info = stat()
    guard stat(blob, &info) == 0 else { throw StorageError.io("cannot read \(blob)") }
    let size = Int64(info.st_size)
    if let existing = try? store.metadata(bucket: template.bucket, name: template.name),
      existing.generation == template.generation, existing.metageneration == template.metageneration,
      existing.size == size, existing.md5 == (try SeedLoader.md5(of: blob))
    {
      return nil
    }
    let source = try SeedLoader.dataSource(blob, size: size, spoolDirectory: spoolDirectory, prefix: "import-")
    template.size = size
    let restored = try store.restore(template, source: source)
    return restored.size
  }

  /// An object's metadata from a Firebase emulator metadata document.
  static func template(_ document: JSONValue) throws(StorageError) -> ObjectMetadata {
    guard case .object = document else { throw StorageError.invalid("the metadata is not a JSON object") }
    guard var name = document["name"]?.stringValue, let bucket = document["bucket"]?.stringValue else {
      throw StorageError.invalid("the metadata has no \"name\" or \"bucket\"")
    }
    // Exported on Windows: the first separator is `\`, and all of them are.
    if let separator = name.first(where: { $0 == "/" || $0 == "\\" }), separator == "\\" {
      name = name.replacing("\\", with: "/")
    }
    func integer(_ key: String) -> Int64? {
      switch document[key] {
      case .number(let text)?: Int64(text)
      case .string(let text)?: Int64(text)
      default: nil
      }
    }
    func time(_ key: String) -> Int64? { document[key]?.stringValue.flatMap(Timestamp.parse) }
    let now = Timestamp.nowMilliseconds()
    var object = ObjectMetadata(
      bucket: bucket, name: name, generation: integer("generation") ?? 0, size: 0, md5: nil, crc32c: 0,
      now: time("timeCreated") ?? now)
    object.metageneration = integer("metageneration") ?? 1
    object.updated = time("updated") ?? object.timeCreated
    object.customTime = time("customTime")
    object.contentType = document["contentType"]?.stringValue
    object.cacheControl = document["cacheControl"]?.stringValue
    object.contentDisposition = document["contentDisposition"]?.stringValue
    object.contentEncoding = document["contentEncoding"]?.stringValue
    object.contentLanguage = document["contentLanguage"]?.stringValue
    if let count = integer("componentCount"), count > 0, count <= 1024 { object.componentCount = Int(count) }
    if case .array(let tokens)? = document["downloadTokens"] {
      object.downloadTokens = tokens.compactMap(\.stringValue)
    }
    if case .object(let members)? = document["customMetadata"] {
      for (key, value) in members {
        let text: String?
        switch value {
        case .string(let string): text = string
        case .number(let literal): text = literal
        case .bool(let flag): text = flag ? "true" : "false"
        case .null: text = nil
        case .array, .object: text = nil
        }
        guard let text else { continue }
        if key == MetadataPatch.tokensKey {
          // As the Firebase emulator does: tokens kept in custom metadata join the token list.
          for token in text.split(separator: ",") where !object.downloadTokens.contains(String(token)) {
            object.downloadTokens.append(String(token))
          }
        } else {
          object.custom[key] = text
        }
      }
    }
    return object
  }
}
