import EmulatorSupport

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// The data files: staging in `tmp/`, concatenation, digests and reads of `<sha>.<generation>.data`.
extension FileBackend {
  /// Bytes in memory stay there until `commit` writes them to their final name (one file, no
  /// temporary copy and rename).
  public func stage(_ bytes: [UInt8]) throws(StorageError) -> StagedData {
    StagedData(id: "", size: Int64(bytes.count), bytes: bytes)
  }

  /// The file (a spooled body, or a resumable session's bytes) is moved into `tmp/` and, with
  /// `fsync`, synced there: whoever wrote it did not sync it.
  public func stage(file path: String) throws(StorageError) -> StagedData {
    let target = tempPath("upload")
    let code = files.calls.rename(path, target)
    if code == 0 {
      do {
        try files.syncFile(target)
      } catch {
        files.calls.unlink(target)
        throw error
      }
    } else {
      // Another file system: copy (synced with `fsync`), then drop the original.
      guard code == EXDEV else { throw Self.error("stage the upload", code) }
      let source = SystemCall.retrying { Glibc.open(path, O_RDONLY | O_CLOEXEC) }
      guard source >= 0 else { throw Self.error("read the upload", errno) }
      defer {
        close(source)
        unlink(path)
      }
      try files.copy(from: source, to: target)
    }
    var info = stat()
    guard SystemCall.retrying({ stat(target, &info) }) == 0 else { throw Self.error("stage the upload", errno) }
    return StagedData(id: target, size: Int64(info.st_size))
  }

  /// A result of at most `inlineLimit` bytes is staged in memory (so it is committed inline);
  /// a larger one in a file of `tmp/`.
  public func stageConcatenation(of objects: [ObjectMetadata]) throws(StorageError) -> StagedData {
    let (total, overflow) = objects.reduce((Int64(0), false)) { sum, object in
      let (next, over) = sum.0.addingReportingOverflow(object.size)
      return (next, sum.1 || over)
    }
    if !overflow && total <= Int64(inlineLimit) {
      var bytes: [UInt8] = []
      bytes.reserveCapacity(Int(total))
      for object in objects { bytes += try read(object) }
      return StagedData(id: "", size: total, bytes: bytes)
    }
    let target = tempPath("compose")
    if objects.count == 1 && !objects[0].body.isInline {
      // Data files are immutable once written (a new generation is a new file): share it.
      if files.calls.link(dataPath(objects[0]), target) == 0 {
        return StagedData(id: target, size: objects[0].size)
      }
    }
    let out = files.calls.create(target)
    guard out >= 0 else { throw Self.error("create a file", errno) }
    close(out)
    for object in objects {
      if object.body.isInline {
        do throws(StorageError) {
          try files.append(try readInline(object), to: target)
        } catch {
          unlink(target)
          throw error
        }
        continue
      }
      let source = openData(object)
      guard source >= 0 else {
        unlink(target)
        throw StorageError.objectNotFound(bucket: object.bucket, name: object.name)
      }
      defer { close(source) }
      try files.copy(from: source, to: target, append: true, sync: false)
    }
    do {
      try files.syncFile(target)
    } catch {
      files.calls.unlink(target)
      throw error
    }
    return StagedData(id: target, size: total)
  }

  public func digest(_ staged: StagedData) throws(StorageError) -> (md5: [UInt8], crc32c: UInt32) {
    if let bytes = staged.bytes { return Digester.digest(bytes) }
    let fd = SystemCall.retrying { Glibc.open(staged.id, O_RDONLY | O_CLOEXEC) }
    guard fd >= 0 else { throw Self.error("read the staged data", errno) }
    defer { close(fd) }
    var digester = Digester()
    try DurableFiles.readChunks(of: fd, failure: "read the staged data") { digester.update($0) }
    return digester.finalize()
  }

  public func open(_ object: ObjectMetadata) throws(StorageError) -> ObjectData {
    if object.body.isInline { return .bytes(try readInline(object)) }
    let fd = openData(object)
    guard fd >= 0 else {
      if errno == ENOENT { throw StorageError.objectNotFound(bucket: object.bucket, name: object.name) }
      throw Self.error("read the object data", errno)
    }
    return .file(OpenFile(fd: fd, size: Int(object.size)))
  }

  public func discard(_ staged: StagedData) {
    if staged.bytes == nil { files.calls.unlink(staged.id) }
  }

  /// Gives staged data its final name `target`: bytes in memory are written there (synced with
  /// `fsync`), a staged file is renamed there. The shard folder is made only when it is missing.
  /// Either way no record names `target` yet: after a crash it is a leftover of an interrupted
  /// write, which start-up removes (an intent entry names its generation).
  func place(_ staged: StagedData, at target: String) throws(StorageError) {
    if let bytes = staged.bytes {
      try files.writeFile(bytes, to: target, makingFolder: true)
      return
    }
    let code = files.rename(staged.id, target, makingFolder: true)
    guard code == 0 else { throw Self.error("store the object data", code) }
  }

  public func read(_ object: ObjectMetadata) throws(StorageError) -> [UInt8] {
    if object.body.isInline { return try readInline(object) }
    let fd = openData(object)
    guard fd >= 0 else {
      if errno == ENOENT { throw StorageError.objectNotFound(bucket: object.bucket, name: object.name) }
      throw Self.error("read the object data", errno)
    }
    defer { close(fd) }
    return try Self.read(Int(object.size), from: fd, at: 0, what: "data file")
  }

  /// An inline object's bytes, out of its record in a log segment. A segment that is gone
  /// (compaction moved the record; the caller's copy of the metadata is older) reads as missing.
  func readInline(_ object: ObjectMetadata) throws(StorageError) -> [UInt8] {
    guard object.size > 0 else { return [] }
    guard let segment = segments.reader(object.body.sequence) else {
      throw StorageError.objectNotFound(bucket: object.bucket, name: object.name)
    }
    return try Self.read(Int(object.size), from: segment.fd, at: object.body.offset, what: "log segment")
  }

  /// `count` bytes of `fd` from `start`.
  private static func read(_ count: Int, from fd: Int32, at start: Int, what: String) throws(StorageError) -> [UInt8] {
    var bytes = [UInt8](repeating: 0, count: count)
    var offset = 0
    while offset < count {
      let read = bytes.withUnsafeMutableBytes { raw in
        SystemCall.retrying { pread(fd, raw.baseAddress! + offset, count - offset, off_t(start + offset)) }
      }
      guard read > 0 else { throw StorageError.io("the object's \(what) is shorter than its recorded size") }
      offset += read
    }
    return bytes
  }
}
