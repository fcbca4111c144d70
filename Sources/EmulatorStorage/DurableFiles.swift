import EmulatorSupport

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// The write steps of the data folder, made through `FileCalls`, with `fsync` adding the syncs
/// that make each step survive a power cut, in this order:
///
/// - a file's bytes are synced before it is renamed (or linked) to its final name;
/// - a folder is synced after a name is created, renamed into or removed from it, before the
///   write is acknowledged, and before a later step that depends on that name;
/// - a new folder's parent is synced after `mkdir`, so the folder itself survives.
///
/// SECURITY.md lists the resulting sequence of every write path; `FsyncSequenceTests` checks it.
struct DurableFiles: Sendable {
  let calls: FileCalls
  let fsync: Bool

  /// `mkdir -p`; with `fsync`, the parent of each folder created is synced.
  func makeDirectory(_ path: String) throws(StorageError) {
    let code = makeDirectories(path)
    guard code == 0 else { throw FileBackend.error("create a folder", code) }
  }

  /// `mkdir -p` (a folder that exists is fine): 0 or errno.
  private func makeDirectories(_ path: String) -> Int32 {
    var code = calls.makeDirectory(path)
    if code == ENOENT {
      let parent = Self.parent(path)
      guard parent != path else { return code }
      let made = makeDirectories(parent)
      guard made == 0 else { return made }
      code = calls.makeDirectory(path)
    }
    if code == EEXIST { return 0 }
    guard code == 0 else { return code }
    syncDirectory(Self.parent(path))
    return 0
  }

  static func parent(_ path: String) -> String { PathText.parent(path) }

  /// `rename`; when the target's folder is missing (not made yet, or removed by hand) it is made
  /// and the rename tried again, so a write costs no `mkdir` while its folder exists. 0 or errno.
  func rename(_ from: String, _ to: String, makingFolder: Bool) -> Int32 {
    let code = calls.rename(from, to)
    guard code == ENOENT && makingFolder else { return code }
    let made = makeDirectories(Self.parent(to))
    guard made == 0 else { return made }
    return calls.rename(from, to)
  }

  /// Syncs a folder (with `fsync`; a folder that cannot be opened is left as it is). The path is
  /// worked out only then: `NSString` path arithmetic costs more than the rest of a record write.
  func syncDirectory(_ path: @autoclosure () -> String) {
    guard fsync else { return }
    _ = calls.syncDirectory(path())
  }

  /// Syncs a file's bytes by path (with `fsync`).
  func syncFile(_ path: String) throws(StorageError) {
    guard fsync else { return }
    let code = calls.sync(path: path)
    if code != 0 { throw FileBackend.error("sync", code) }
  }

  /// Creates (or truncates) `path` with `bytes`, synced with `fsync`; removed again on failure.
  /// `makingFolder`: a missing folder is made (and the create tried again), as `rename` does.
  func writeFile(_ bytes: [UInt8], to path: String, makingFolder: Bool = false) throws(StorageError) {
    var fd = calls.create(path)
    if fd < 0 && errno == ENOENT && makingFolder {
      let made = makeDirectories(Self.parent(path))
      guard made == 0 else { throw FileBackend.error("create a folder", made) }
      fd = calls.create(path)
    }
    guard fd >= 0 else { throw FileBackend.error("create a file", errno) }
    var code = bytes.withUnsafeBytes { calls.write(fd, $0, path: path) }
    if code == 0 && fsync { code = calls.sync(fd, path: path) }
    if Glibc.close(fd) != 0 && code == 0 { code = errno }
    if code != 0 {
      calls.unlink(path)
      throw FileBackend.error("write", code)
    }
  }

  /// Writes `bytes` to `temp` and renames it onto `path`: readers see the old or the new file.
  /// When `path` is expected to exist (`replacing`), the two are swapped instead (`renameat2`
  /// RENAME_EXCHANGE) and the old file removed: ext4 starts writing a file's data back to disk on
  /// every rename that replaces a file (`auto_da_alloc`), which made each metadata write wait for
  /// the disk. Durability is the same: without `fsync` a write survives the process, not the
  /// machine; with it, the file is synced before the swap and the folder after it.
  func writeAtomically(_ bytes: [UInt8], to path: String, temp: String, replacing: Bool = false)
    throws(StorageError)
  {
    try writeFile(bytes, to: temp)
    if replacing && calls.exchange(temp, path) == 0 {
      calls.unlink(temp)
    } else {
      // A folder removed by hand is made again.
      let code = rename(temp, path, makingFolder: true)
      if code != 0 {
        calls.unlink(temp)
        throw FileBackend.error("commit the record", code)
      }
    }
    syncDirectory(Self.parent(path))
  }

  /// Copies everything from `source` to the file at `path`, 1 MiB at a time, synced with `fsync`
  /// unless `sync` is false (the caller syncs once after several copies).
  func copy(from source: Int32, to path: String, append: Bool = false, sync: Bool = true) throws(StorageError) {
    let out = calls.create(path, flags: O_WRONLY | (append ? O_APPEND : O_TRUNC))
    guard out >= 0 else { throw FileBackend.error("create a file", errno) }
    defer { Glibc.close(out) }
    try Self.readChunks(of: source, failure: "read") { chunk throws(StorageError) in
      let code = calls.write(out, chunk, path: path)
      if code != 0 {
        calls.unlink(path)
        throw FileBackend.error("write", code)
      }
    }
    if fsync && sync {
      let code = calls.sync(out, path: path)
      if code != 0 { throw FileBackend.error("sync", code) }
    }
  }

  /// Appends `bytes` to the file at `path` (not synced: the caller syncs once after several).
  func append(_ bytes: [UInt8], to path: String) throws(StorageError) {
    let out = calls.create(path, flags: O_WRONLY | O_APPEND)
    guard out >= 0 else { throw FileBackend.error("create a file", errno) }
    defer { Glibc.close(out) }
    let code = bytes.withUnsafeBytes { calls.write(out, $0, path: path) }
    guard code == 0 else { throw FileBackend.error("write", code) }
  }

  /// Reads `fd` to its end, 1 MiB at a time, handing each chunk to `body`; a failed read throws
  /// `FileBackend.error(failure, errno)`.
  static func readChunks(
    of fd: Int32, failure: String, _ body: (UnsafeRawBufferPointer) throws(StorageError) -> Void
  ) throws(StorageError) {
    var buffer = [UInt8](repeating: 0, count: 1 << 20)
    while true {
      let count = buffer.withUnsafeMutableBytes { raw in SystemCall.retrying { read(fd, raw.baseAddress, raw.count) } }
      guard count >= 0 else { throw FileBackend.error(failure, errno) }
      if count == 0 { return }
      let failure = buffer.withUnsafeBytes { raw -> StorageError? in
        do throws(StorageError) {
          try body(UnsafeRawBufferPointer(rebasing: raw[0..<count]))
          return nil
        } catch {
          return error
        }
      }
      if let failure { throw failure }
    }
  }
}
