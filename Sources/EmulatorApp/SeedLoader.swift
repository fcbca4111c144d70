import Dispatch
import EmulatorStorage
import EmulatorSupport

#if canImport(Glibc)
  import Glibc
#endif

/// `--seed DIR`: loads a folder tree as objects. Each folder directly in `DIR` is a bucket; every
/// file below it is an object named by its path relative to the bucket folder (`/`-separated).
/// The content type comes from the file's extension. A file `NAME.meta.json` beside `NAME` is
/// not an object but `NAME`'s metadata: a JSON object with any of `contentType`, `cacheControl`,
/// `contentDisposition`, `contentEncoding`, `contentLanguage`, `customTime` and `metadata`
/// (custom key/values), as in a GCS object resource.
///
/// Loading is idempotent: an object whose bytes and metadata already match is left alone (same
/// generation), so seeding the same tree at every start changes nothing the second time.
/// Problems with one file (an unreadable file, a bad sidecar, a name GCS would refuse) are
/// reported and skip that file only.
struct SeedLoader {
  struct Summary: Sendable, Equatable {
    var loaded = 0
    var unchanged = 0
    var skipped = 0
    var bytes: Int64 = 0
    var buckets = 0
  }

  static let sidecarSuffix = ".meta.json"
  /// Folders nested deeper than this are not entered (and a symbolic link to a folder never is).
  static let maxDepth = 64

  let store: ObjectStore
  /// Where copies of large files are made before the store takes them.
  let spoolDirectory: String
  let log: @Sendable (String) -> Void
  /// A progress line at most this often.
  var progressEvery: Double = 2

  func load(from root: String) throws(StorageError) -> Summary {
    var info = stat()  // stat, not lstat: a link to a folder is a folder here
    guard stat(root, &info) == 0, info.st_mode & S_IFMT == S_IFDIR else {
      throw StorageError.invalid("--seed: '\(root)' is not a folder")
    }
    let started = DispatchTime.now().uptimeNanoseconds
    var lastProgress = started
    var summary = Summary()
    let entries = ((try? FileManager.default.contentsOfDirectory(atPath: root)) ?? []).sorted()
    for entry in entries {
      let path = root + "/" + entry
      guard Self.isDirectory(path) else {
        log("seed: skipped \(path): files directly in the seed folder belong to no bucket")
        summary.skipped += 1
        continue
      }
      do {
        try Naming.validateBucketName(entry)
      } catch {
        log("seed: skipped the folder \(path): '\(entry)' is not a valid bucket name")
        summary.skipped += 1
        continue
      }
      do {
        _ = try store.createBucket(entry)
      } catch .bucketExists {
      } catch {
        log("seed: skipped the bucket \(entry): \(error)")
        summary.skipped += 1
        continue
      }
      summary.buckets += 1
      walk(bucket: entry, folder: path, prefix: "", depth: 0) { name, file, sidecar in
        seed(bucket: entry, name: name, file: file, sidecar: sidecar, into: &summary)
        let now = DispatchTime.now().uptimeNanoseconds
        if Double(now - lastProgress) / 1e9 >= progressEvery {
          lastProgress = now
          log(
            "seed: \(summary.loaded + summary.unchanged) objects (\(Self.describe(bytes: summary.bytes))) so far…")
        }
      }
    }
    let seconds = Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9
    log(
      "seed: \(summary.loaded) objects loaded, \(summary.unchanged) unchanged, \(summary.skipped) skipped "
        + "(\(Self.describe(bytes: summary.bytes)), \(summary.buckets) buckets) from \(root) in "
        + DecimalText.fixed(seconds, digits: 2) + " s")
    return summary
  }

  /// Calls `body(name, file, sidecar)` for each object file below `folder`, in name order.
  private func walk(
    bucket: String, folder: String, prefix: String, depth: Int, _ body: (String, String, String?) -> Void
  ) {
    guard depth < Self.maxDepth else {
      log("seed: not entering \(folder): deeper than \(Self.maxDepth) folders")
      return
    }
    let entries = ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).sorted()
    let names = Set(entries)
    for entry in entries {
      let path = folder + "/" + entry
      var info = stat()
      guard lstat(path, &info) == 0 else { continue }
      let type = info.st_mode & S_IFMT
      if type == S_IFDIR {
        walk(bucket: bucket, folder: path, prefix: prefix + entry + "/", depth: depth + 1, body)
        continue
      }
      if entry.hasSuffix(Self.sidecarSuffix), names.contains(String(entry.dropLast(Self.sidecarSuffix.count))) {
        continue  // metadata of its neighbour
      }
      // Regular files, and symbolic links to regular files.
      guard type == S_IFREG || (type == S_IFLNK && stat(path, &info) == 0 && info.st_mode & S_IFMT == S_IFREG)
      else {
        log("seed: skipped \(path): not a regular file")
        continue
      }
      let sidecar = names.contains(entry + Self.sidecarSuffix) ? path + Self.sidecarSuffix : nil
      body(prefix + entry, path, sidecar)
    }
  }

  private func seed(bucket: String, name: String, file: String, sidecar: String?, into summary: inout Summary) {
    do throws(StorageError) {
      try Naming.validateObjectName(name)
      var patch = MetadataPatch()
      if let sidecar {
        guard let document = try Self.jsonFile(sidecar) else { throw StorageError.invalid("cannot read \(sidecar)") }
        do {
          patch = try MetadataPatch(json: document, options: .init(replace: true, tokensInCustomMetadata: true))
        } catch {
          throw StorageError.invalid("\(sidecar): \(error)")
        }
      } else {
        patch = try MetadataPatch(json: .object([]), options: .init(replace: true, tokensInCustomMetadata: true))
      }
      if case .remove? = patch.fields[.contentType] {
        patch.fields[.contentType] = .set(ContentTypes.forName(name))
      }
      var info = stat()
      guard stat(file, &info) == 0 else { throw StorageError.io("cannot read \(file)") }
      let size = Int64(info.st_size)
      if let existing = try? store.metadata(bucket: bucket, name: name), existing.size == size,
        Self.sameMetadata(existing, after: patch), existing.md5 == (try Self.md5(of: file))
      {
        summary.unchanged += 1
        summary.bytes += size
        return
      }
      let source = try Self.dataSource(file, size: size, spoolDirectory: spoolDirectory, prefix: "seed-")
      _ = try store.insert(bucket: bucket, name: name, source: source, upload: ObjectStore.Upload(patch: patch))
      summary.loaded += 1
      summary.bytes += size
    } catch {
      log("seed: skipped \(file): \(error)")
      summary.skipped += 1
    }
  }

  /// Whether seeding with `patch` would leave the writable metadata as it is (download tokens
  /// made since, by a Firebase read, do not count unless the sidecar names tokens).
  static func sameMetadata(_ existing: ObjectMetadata, after patch: MetadataPatch) -> Bool {
    var candidate = existing
    var patch = patch
    if case .replace(let list) = patch.tokens, list.isEmpty { patch.tokens = .keep }
    patch.apply(to: &candidate)
    if candidate.contentType?.isEmpty ?? true { candidate.contentType = "application/octet-stream" }
    return candidate == existing
  }

  /// A file's bytes for the store: read into memory up to 1 MiB, else a copy in `spoolDirectory`
  /// (the store moves a file it is given, and the seed or export must stay).
  static func dataSource(
    _ file: String, size: Int64, spoolDirectory: String, prefix: String
  ) throws(StorageError) -> ObjectStore.DataSource {
    if size <= 1 << 20 {
      guard let data = FileManager.default.contents(atPath: file) else { throw StorageError.io("cannot read \(file)") }
      return .bytes(Array(data))
    }
    let copy = spoolDirectory + "/" + prefix + UUID().uuidString
    do {
      try FileManager.default.copyItem(atPath: file, toPath: copy)
    } catch {
      throw StorageError.io("cannot copy \(file): \(ErrorText.describe(error))")
    }
    return .file(copy)
  }

  /// The JSON document in a file: nil when the file cannot be read, an error
  /// `<prefix><path> is not JSON: …` when it is not JSON.
  static func jsonFile(_ path: String, prefix: String = "") throws(StorageError) -> JSONValue? {
    guard let bytes = FileManager.default.contents(atPath: path) else { return nil }
    do {
      return try JSONValue.parse(Array(bytes))
    } catch {
      throw StorageError.invalid("\(prefix)\(path) is not JSON: \(error)")
    }
  }

  static func md5(of path: String) throws(StorageError) -> [UInt8] {
    let fd = SystemCall.retrying { open(path, O_RDONLY | O_CLOEXEC) }
    guard fd >= 0 else { throw StorageError.io("cannot read \(path)") }
    defer { _ = close(fd) }
    var digester = Digester()
    var chunk = [UInt8](repeating: 0, count: 1 << 20)
    while true {
      let count = chunk.withUnsafeMutableBytes { buffer in
        SystemCall.retrying { read(fd, buffer.baseAddress, buffer.count) }
      }
      guard count >= 0 else { throw StorageError.io("cannot read \(path)") }
      if count == 0 { break }
      chunk.withUnsafeBytes { digester.update(UnsafeRawBufferPointer(rebasing: $0[..<count])) }
    }
    return digester.finalize().md5
  }

  static func isDirectory(_ path: String) -> Bool {
    var info = stat()
    return lstat(path, &info) == 0 && info.st_mode & S_IFMT == S_IFDIR
  }

  static func describe(bytes: Int64) -> String {
    let units = ["B", "KiB", "MiB", "GiB", "TiB"]
    var value = Double(bytes)
    var unit = 0
    while value >= 1024 && unit < units.count - 1 {
      value /= 1024
      unit += 1
    }
    return unit == 0 ? "\(bytes) B" : DecimalText.fixed(value, digits: 1) + " " + units[unit]
  }
}
