import CFiles
import EmulatorSupport

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// The system calls whose order decides what survives a power cut: creating, writing, syncing,
/// renaming, linking and removing files and folders. `FileBackend` and `UploadSessions` make
/// them through this value, so a test can record the sequence (`recording`) and check it
/// against the one SECURITY.md documents. Reads do not go through it.
///
/// Each call records one line, `<call> <path>` (`rename <from> <to>`), paths as given.
public struct FileCalls: Sendable {
  private let record: (@Sendable (String) -> Void)?

  /// The calls themselves, recording nothing.
  public static let direct = FileCalls(record: nil)

  /// The calls themselves, each also reported to `record` (after it succeeded).
  public static func recording(_ record: @escaping @Sendable (String) -> Void) -> FileCalls {
    FileCalls(record: record)
  }

  private init(record: (@Sendable (String) -> Void)?) { self.record = record }

  private func note(_ line: @autoclosure () -> String) { record?(line()) }

  /// Runs `call` (again on `EINTR`); records `line` when it returned 0. Returns 0 or errno.
  private func perform(_ line: @autoclosure () -> String, _ call: () -> Int32) -> Int32 {
    guard SystemCall.retrying(call) == 0 else { return errno }
    note(line())
    return 0
  }

  /// `open` with `O_CREAT`: recorded as `create`.
  func create(_ path: String, flags: Int32 = O_WRONLY | O_TRUNC) -> Int32 {
    let fd = SystemCall.retrying { Glibc.open(path, flags | O_CREAT | O_CLOEXEC, 0o644) }
    if fd >= 0 { note("create \(path)") }
    return fd
  }

  /// `open` of an existing file for appending (not recorded: it changes nothing on disk).
  func openForAppend(_ path: String) -> Int32 {
    SystemCall.retrying { Glibc.open(path, O_WRONLY | O_APPEND | O_CLOEXEC) }
  }

  /// Writes the whole buffer; 0, or the errno that stopped it. Recorded once per call.
  func write(_ fd: Int32, _ buffer: UnsafeRawBufferPointer, path: String) -> Int32 {
    let code = SystemCall.writeAll(fd, buffer)
    if code == 0 { note("write \(path)") }
    return code
  }

  /// `fsync` (data and size); 0 or errno.
  func sync(_ fd: Int32, path: String) -> Int32 {
    perform("fsync \(path)") { Glibc.fsync(fd) }
  }

  /// `fdatasync`; 0 or errno.
  func dataSync(_ fd: Int32, path: String) -> Int32 {
    perform("fdatasync \(path)") { Glibc.fdatasync(fd) }
  }

  /// Syncs a file by path (a file this process did not write, such as a spooled upload).
  func sync(path: String) -> Int32 {
    let fd = SystemCall.retrying { Glibc.open(path, O_RDONLY | O_CLOEXEC) }
    guard fd >= 0 else { return errno }
    defer { Glibc.close(fd) }
    return sync(fd, path: path)
  }

  /// Syncs a folder, making the names created, renamed or removed in it durable.
  func syncDirectory(_ path: String) -> Int32 {
    let fd = SystemCall.retrying { Glibc.open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC) }
    guard fd >= 0 else { return errno }
    defer { Glibc.close(fd) }
    return perform("fsync \(path)/") { Glibc.fsync(fd) }
  }

  func rename(_ from: String, _ to: String) -> Int32 { perform("rename \(from) \(to)") { Glibc.rename(from, to) } }

  /// Swaps two names atomically (`renameat2` RENAME_EXCHANGE); fails where unsupported.
  func exchange(_ a: String, _ b: String) -> Int32 { perform("exchange \(a) \(b)") { cfiles_exchange(a, b) } }

  func link(_ from: String, _ to: String) -> Int32 { perform("link \(from) \(to)") { Glibc.link(from, to) } }

  func makeDirectory(_ path: String) -> Int32 { perform("mkdir \(path)") { Glibc.mkdir(path, 0o755) } }

  @discardableResult
  func unlink(_ path: String) -> Int32 { perform("unlink \(path)") { Glibc.unlink(path) } }
}
