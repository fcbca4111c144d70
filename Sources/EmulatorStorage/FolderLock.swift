import EmulatorSupport
import Synchronization

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// One process per data folder: a POSIX write lock on `LOCK` in it, held while a backend has the
/// folder open. Two emulators on one folder (parallel test workers started with the default
/// `--data-dir`) would each append to segments of the same numbers, compact and remove segments
/// the other still reads, and keep indexes that never see the other's writes: the second is
/// refused at start-up instead. The lock is the process's (`fcntl`), so this process may open the
/// folder again (tests reopen it); the kernel drops it when the process ends, however it ends.
/// The file holds the owner's pid, for the message.
///
/// A POSIX lock is released when the process closes *any* descriptor of the file, so the folders
/// this process holds are counted in one table: the descriptor is closed with the last holder,
/// and taking and dropping happen under the table's lock.
final class FolderLock: Sendable {
  private let path: String

  private init(path: String) { self.path = path }

  /// Per `LOCK` path: its open descriptor and how many `FolderLock`s hold it.
  private static let held = Locked<[String: (fd: Int32, holders: Int)]>([:])

  static func acquire(_ directory: String) throws(StorageError) -> FolderLock {
    let path = directory + "/LOCK"
    try held.withLock { (held: inout [String: (fd: Int32, holders: Int)]) throws(StorageError) in
      if let entry = held[path] {
        held[path] = (entry.fd, entry.holders + 1)
      } else {
        held[path] = (try take(path, directory: directory), 1)
      }
    }
    return FolderLock(path: path)
  }

  /// Opens and locks `path`: its descriptor, or an error naming the process that holds it.
  private static func take(_ path: String, directory: String) throws(StorageError) -> Int32 {
    let fd = SystemCall.retrying { open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644) }
    guard fd >= 0 else { throw FileBackend.error("lock the data folder", errno) }
    var request = flock()
    request.l_type = Int16(F_WRLCK)
    request.l_whence = Int16(SEEK_SET)
    request.l_start = 0
    request.l_len = 0
    guard fcntl(fd, F_SETLK, &request) == 0 else {
      let code = errno
      var owner = [UInt8](repeating: 0, count: 32)
      let count = owner.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, 0) }
      close(fd)
      guard code == EAGAIN || code == EACCES else { throw FileBackend.error("lock the data folder", code) }
      let pid = String(decoding: owner.prefix(max(count, 0)), as: UTF8.self).trimmingWhitespaceAndNewlines()
      throw StorageError.io(
        "the data folder \(directory) is in use by another storage-emulator process\(pid.isEmpty ? "" : " (pid \(pid))"): give each instance its own --data-dir, or use --in-memory"
      )
    }
    let text = Array("\(getpid())\n".utf8)
    if ftruncate(fd, 0) == 0 { _ = text.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, 0) } }
    return fd
  }

  deinit {
    Self.held.withLock { held in
      guard let entry = held[path] else { return }
      if entry.holders > 1 {
        held[path] = (entry.fd, entry.holders - 1)
      } else {
        close(entry.fd)
        held[path] = nil
      }
    }
  }
}
