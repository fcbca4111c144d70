import EmulatorSupport

#if canImport(Glibc)
  import Glibc
#endif

/// Noncurrent generations (versioned buckets) in `buckets/<bucket>/noncurrent/`:
/// `<sha>.<generation>.json` (the object's record with a `timeDeleted`) and
/// `<sha>.<generation>.data` (a hard link to the bytes the live version had, or a copy of an
/// inline object's). They are apart from
/// the live objects, so the index snapshot, the log and the live objects' recovery never see
/// them; start-up lists this folder per bucket (empty unless versioning was used).
///
/// Archiving links the data and writes the record before the live version is replaced or
/// removed. A crash in between leaves a noncurrent generation equal to the live one, which the
/// store removes at start-up (`ObjectStore` drops it as never having happened).
extension FileBackend {
  private func noncurrentDir(_ bucket: String) -> String { bucketDir(bucket) + "/noncurrent" }

  private func noncurrentStem(_ object: ObjectMetadata) -> String {
    noncurrentDir(object.bucket) + "/" + objectBase(object).stem + "." + String(object.generation)
  }

  public func archive(_ version: NoncurrentObject) throws(StorageError) {
    let object = version.object
    let stem = noncurrentStem(object)
    try files.makeDirectory(noncurrentDir(object.bucket))
    if object.body.isInline {
      // Its bytes are in its record, which compaction drops once it is no longer live.
      try files.writeFile(try readInline(object), to: stem + ".data")
    } else {
      let code = files.calls.link(dataPath(object), stem + ".data")
      if code != 0 && code != EEXIST {
        throw Self.error("keep the noncurrent generation", code)
      }
    }
    var record = Array("{\"timeDeleted\":\"\(version.timeDeleted)\",".utf8)
    record += object.recordJSON().dropFirst()
    do {
      // With `fsync`, the folder sync after the record's rename also makes the link durable.
      try files.writeAtomically(record, to: stem + ".json", temp: tempPath("record"))
    } catch {
      files.calls.unlink(stem + ".data")
      throw error
    }
  }

  public func removeNoncurrent(_ object: ObjectMetadata) throws(StorageError) {
    let stem = noncurrentStem(object)
    let code = files.calls.unlink(stem + ".json")
    guard code == 0 || code == ENOENT else {
      throw Self.error("delete the noncurrent generation", code)
    }
    files.syncDirectory(noncurrentDir(object.bucket))
    files.calls.unlink(stem + ".data")
  }

  /// Opens an object's bytes: the live data file, else the noncurrent one (-1 and errno if
  /// neither exists).
  func openData(_ object: ObjectMetadata) -> Int32 {
    let fd = SystemCall.retrying { Glibc.open(dataPath(object), O_RDONLY | O_CLOEXEC) }
    if fd >= 0 || errno != ENOENT { return fd }
    let stem = noncurrentStem(object)
    let kept = SystemCall.retrying { Glibc.open(stem + ".data", O_RDONLY | O_CLOEXEC) }
    if kept < 0 { errno = ENOENT }
    return kept
  }

  /// A bucket's noncurrent generations; records without data (or damaged) and data without a
  /// record are removed, each on a log line.
  func loadNoncurrent(_ bucket: String, log: @Sendable (String) -> Void) -> [NoncurrentObject] {
    let dir = noncurrentDir(bucket)
    guard let files = try? FileManager.default.contentsOfDirectory(atPath: dir) else { return [] }
    var found: [NoncurrentObject] = []
    var kept = Set<String>()
    for file in files where file.hasSuffix(".json") {
      let stem = String(file.dropLast(5))
      let path = dir + "/" + file
      guard let bytes = FileManager.default.contents(atPath: path).map(Array.init),
        let document = try? JSONValue.parse(bytes),
        let deleted = document["timeDeleted"]?.stringValue.flatMap({ Int64($0) }),
        let object = try? ObjectMetadata(record: bytes), object.bucket == bucket,
        noncurrentStem(object) == dir + "/" + stem,
        FileManager.default.fileExists(atPath: dir + "/" + stem + ".data")
      else {
        unlink(path)
        log("recovery: removed buckets/\(bucket)/noncurrent/\(file), a damaged or incomplete noncurrent generation")
        continue
      }
      kept.insert(stem + ".data")
      found.append(NoncurrentObject(object: object, timeDeleted: deleted))
    }
    for file in files where file.hasSuffix(".data") && !kept.contains(file) {
      unlink(dir + "/" + file)
      log("recovery: removed buckets/\(bucket)/noncurrent/\(file), data of an unfinished archive")
    }
    return found
  }
}
