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

  public func stageConcatenation(of objects: [ObjectMetadata]) throws(StorageError) -> StagedData {
    let target = tempPath("compose")
    if objects.count == 1 {
      // Data files are immutable once written (a new generation is a new file): share it.
      if files.calls.link(dataPath(objects[0]), target) == 0 {
        return StagedData(id: target, size: objects[0].size)
      }
    }
    let out = files.calls.create(target)
    guard out >= 0 else { throw Self.error("create a file", errno) }
    close(out)
    var total: Int64 = 0
    for object in objects {
      let source = openData(object)
      guard source >= 0 else {
        unlink(target)
        throw StorageError.objectNotFound(bucket: object.bucket, name: object.name)
      }
      defer { close(source) }
      try files.copy(from: source, to: target, append: true, sync: false)
      total += object.size
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
    let fd = openData(object)
    guard fd >= 0 else {
      if errno == ENOENT { throw StorageError.objectNotFound(bucket: object.bucket, name: object.name) }
      throw Self.error("read the object data", errno)
    }
    defer { close(fd) }
    var bytes = [UInt8](repeating: 0, count: Int(object.size))
    var offset = 0
    while offset < bytes.count {
      let count = bytes.withUnsafeMutableBytes { raw in
        SystemCall.retrying { pread(fd, raw.baseAddress! + offset, raw.count - offset, off_t(offset)) }
      }
      guard count > 0 else { throw StorageError.io("the object's data file is shorter than its recorded size") }
      offset += count
    }
    return bytes
  }
}
