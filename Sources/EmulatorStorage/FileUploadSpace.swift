import CFiles
import EmulatorSupport

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// An `UploadSpace` that is a folder (`FileBackend`: `uploads/`, `multipart/`). Every write goes
/// through `DurableFiles`, so with `fsync` an appended chunk is synced before it is acknowledged
/// and a replaced entry is synced before its rename and its folder after it (SECURITY.md lists
/// the sequences).
public struct FileUploadSpace: UploadSpace {
  public let directory: String
  let files: DurableFiles

  /// Opens (creating) `directory`.
  init(directory: String, files: DurableFiles) throws(StorageError) {
    self.directory = directory
    self.files = files
    do {
      try files.makeDirectory(directory)
    } catch {
      throw StorageError.io("cannot create the upload folder: \(error)")
    }
  }

  /// A folder of its own (tests, and `UploadSessions(directory:)`).
  public init(directory: URL, fsync: Bool = false, calls: FileCalls = .direct) throws(StorageError) {
    try self.init(directory: directory.standardizedFileURL.path, files: DurableFiles(calls: calls, fsync: fsync))
  }

  func path(_ name: String) -> String { directory + "/" + name }

  /// The size of a file (a spooled request body); 0 when it cannot be read.
  static func size(of file: String) -> Int64 {
    var info = stat()
    guard SystemCall.retrying({ stat(file, &info) }) == 0 else { return 0 }
    return Int64(info.st_size)
  }

  public func names() -> [String] { (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? [] }

  public func contents(_ name: String) -> [UInt8]? { FileManager.default.contents(atPath: path(name)).map(Array.init) }

  public func info(_ name: String) -> (size: Int64, modified: Int64)? {
    var info = stat()
    guard SystemCall.retrying({ stat(path(name), &info) }) == 0 else { return nil }
    #if canImport(Glibc)
      let time = info.st_mtim
    #else
      let time = info.st_mtimespec
    #endif
    return (Int64(info.st_size), Int64(time.tv_sec) * 1000 + Int64(time.tv_nsec) / 1_000_000)
  }

  public func replace(_ name: String, with bytes: [UInt8], temp: String) throws(StorageError) {
    try files.writeAtomically(bytes, to: path(name), temp: path(temp))
  }

  /// The spooled file is synced, then renamed onto `name`; from another file system it is
  /// copied to `temp` (synced) first.
  public func adopt(file: String, as name: String, temp: String) throws(StorageError) {
    do {
      try files.syncFile(file)
    } catch {
      unlink(file)
      throw error
    }
    var code = files.calls.rename(file, path(name))
    if code == EXDEV {
      let source = SystemCall.retrying { open(file, O_RDONLY | O_CLOEXEC) }
      guard source >= 0 else { throw FileBackend.error("read the part", errno) }
      defer {
        close(source)
        unlink(file)
      }
      try files.copy(from: source, to: path(temp))
      code = files.calls.rename(path(temp), path(name))
      if code != 0 { files.calls.unlink(path(temp)) }
    }
    guard code == 0 else { throw FileBackend.error("store the part", code) }
    files.syncDirectory(directory)
  }

  public func create(_ name: String) throws(StorageError) {
    let fd = files.calls.create(path(name))
    guard fd >= 0 else { throw FileBackend.error("start the upload", errno) }
    close(fd)
  }

  public func append(_ name: String, bytes: ArraySlice<UInt8>) throws(StorageError) {
    let target = path(name)
    try appending(to: target) { out throws(StorageError) in
      let code = bytes.withUnsafeBytes { files.calls.write(out, $0, path: target) }
      if code != 0 { throw FileBackend.error("store the chunk", code) }
    }
  }

  /// The first bytes of an entry that is still empty come whole from `file`: `file` itself becomes
  /// the entry (synced, then renamed over it: no copy).
  public func append(_ name: String, file: String, from offset: Int64) throws(StorageError) -> Int64 {
    let target = path(name)
    if offset == 0, info(name)?.size == 0 {
      let size = Self.size(of: file)
      try files.syncFile(file)
      let code = files.calls.rename(file, target)
      if code == 0 {
        files.syncDirectory(directory)
        return size
      }
      guard code == EXDEV else { throw FileBackend.error("store the chunk", code) }
    }
    let source = SystemCall.retrying { open(file, O_RDONLY | O_CLOEXEC) }
    guard source >= 0 else { throw FileBackend.error("read the chunk", errno) }
    defer { close(source) }
    guard SystemCall.retrying({ lseek(source, off_t(offset), SEEK_SET) }) >= 0 else {
      throw FileBackend.error("read the chunk", errno)
    }
    var written: Int64 = 0
    // Not `O_APPEND` (an in-kernel copy refuses such a target): the session's lock makes this the
    // only writer, and the copy starts at the end.
    try appending(to: target, flags: O_WRONLY) { out throws(StorageError) in
      guard SystemCall.retrying({ lseek(out, 0, SEEK_END) }) >= 0 else { throw FileBackend.error("store the chunk", errno) }
      if try Self.copyInKernel(from: source, to: out, written: &written) { return }
      try DurableFiles.readChunks(of: source, failure: "read the chunk") { chunk throws(StorageError) in
        let code = files.calls.write(out, chunk, path: target)
        if code != 0 { throw FileBackend.error("store the chunk", code) }
        written += Int64(chunk.count)
      }
    }
    return written
  }

  /// Opens `target` for appending, runs `body` with it, then (with `fsync`) syncs it. When any
  /// step fails the file is cut back to its size before: a chunk is appended whole or not at
  /// all (a full disk half-way through must not leave bytes the session does not count, which
  /// the next chunk would land after).
  private func appending(
    to target: String, flags: Int32? = nil, _ body: (Int32) throws(StorageError) -> Void
  ) throws(StorageError) {
    let out =
      flags.map { flags in SystemCall.retrying { open(target, flags | O_CLOEXEC) } } ?? files.calls.openForAppend(target)
    guard out >= 0 else { throw FileBackend.error("store the chunk", errno) }
    defer { close(out) }
    var info = stat()
    guard SystemCall.retrying({ fstat(out, &info) }) == 0 else { throw FileBackend.error("store the chunk", errno) }
    do throws(StorageError) {
      try body(out)
      if files.fsync {
        let code = files.calls.sync(out, path: target)
        if code != 0 { throw FileBackend.error("sync the chunk", code) }
      }
    } catch {
      _ = SystemCall.retrying { ftruncate(out, info.st_size) }
      throw error
    }
  }

  /// Copies the rest of `source` to `out` inside the kernel; false (nothing copied) where the
  /// system or the file systems do not allow it, so the caller reads and writes instead.
  private static func copyInKernel(from source: Int32, to out: Int32, written: inout Int64) throws(StorageError) -> Bool {
    while true {
      let count = SystemCall.retrying { cfiles_copy_range(source, out, 1 << 30) }
      if count > 0 {
        written += Int64(count)
        continue
      }
      if count == 0 { return true }
      let code = errno
      if written == 0 && [ENOSYS, EXDEV, EINVAL, EOPNOTSUPP, EBADF].contains(code) { return false }
      throw FileBackend.error("store the chunk", code)
    }
  }

  public func remove(_ name: String) { files.calls.unlink(path(name)) }

  public func discard(_ names: [String]) {
    for name in names { remove(name) }
    files.syncDirectory(directory)
  }

  public func digest(_ name: String) throws(StorageError) -> (md5: [UInt8], crc32c: UInt32, size: Int64) {
    let fd = SystemCall.retrying { open(path(name), O_RDONLY | O_CLOEXEC) }
    guard fd >= 0 else { throw FileBackend.error("read an upload's bytes", errno) }
    defer { close(fd) }
    var digester = Digester()
    var size: Int64 = 0
    try DurableFiles.readChunks(of: fd, failure: "read an upload's bytes") { chunk in
      digester.update(chunk)
      size += Int64(chunk.count)
    }
    let digest = digester.finalize()
    return (digest.md5, digest.crc32c, size)
  }

  public func update(_ digester: inout Digester, from name: String, range: Range<Int64>) throws(StorageError) {
    let fd = SystemCall.retrying { open(path(name), O_RDONLY | O_CLOEXEC) }
    guard fd >= 0 else { throw FileBackend.error("read an upload's bytes", errno) }
    defer { close(fd) }
    var buffer = [UInt8](repeating: 0, count: Int(min(range.count, 1 << 20)))
    var offset = range.lowerBound
    while offset < range.upperBound {
      let wanted = Int(min(Int64(buffer.count), range.upperBound - offset))
      let count = buffer.withUnsafeMutableBytes { raw in
        SystemCall.retrying { pread(fd, raw.baseAddress, wanted, off_t(offset)) }
      }
      guard count > 0 else {
        throw count == 0 ? StorageError.io("an upload's bytes are shorter than received") : FileBackend.error("read an upload's bytes", errno)
      }
      buffer.withUnsafeBytes { digester.update(UnsafeRawBufferPointer(rebasing: $0[0..<count])) }
      offset += Int64(count)
    }
  }

  public func handOff(_ names: [String], as output: String) throws(StorageError) -> ObjectStore.DataSource {
    let target = path(output)
    unlink(target)  // left by a failure the store did not clean up
    if names.count == 1 {
      let code = files.calls.link(path(names[0]), target)
      guard code == 0 else { throw FileBackend.error("finish the upload", code) }
      return .file(target)
    }
    do throws(StorageError) {
      for (index, name) in names.enumerated() {
        let source = SystemCall.retrying { open(path(name), O_RDONLY | O_CLOEXEC) }
        guard source >= 0 else { throw FileBackend.error("read a part", errno) }
        defer { close(source) }
        // Not synced here: the store syncs what it takes before it names it.
        try files.copy(from: source, to: target, append: index > 0, sync: false)
      }
    } catch {
      unlink(target)
      throw error
    }
    return .file(target)
  }
}
