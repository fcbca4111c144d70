import EmulatorSupport

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// A large request body being written to a file as it arrives (page-cache writes of at most
/// `spoolThresholdBytes` each; nothing is synced), handed to the handler as a `SpooledFile`.
struct RequestSpool {
  private var file: (fd: Int32, path: String, size: Int)?

  /// Whether a body is being spooled.
  var isActive: Bool { file != nil }

  /// Appends `part`, creating the file at `newPath()` first; false (and the file removed) when
  /// it cannot be created or written.
  mutating func append(_ part: [UInt8], newPath: () -> String) -> Bool {
    if file == nil {
      let path = newPath()
      let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
      guard fd >= 0 else { return false }
      file = (fd, path, 0)
    }
    guard let current = file else { return false }
    guard part.withUnsafeBytes({ SystemCall.writeAll(current.fd, $0) }) == 0 else {
      abandon()
      return false
    }
    file = (current.fd, current.path, current.size + part.count)
    return true
  }

  /// Closes the file and hands it over; nil (and the file removed) when closing fails.
  mutating func finish() -> SpooledFile? {
    guard let current = file else { return nil }
    file = nil
    guard Platform.close(current.fd) == 0 else {
      unlink(current.path)
      return nil
    }
    return SpooledFile(path: current.path, size: current.size)
  }

  /// Closes and removes the file, if any.
  mutating func abandon() {
    guard let current = file else { return }
    file = nil
    Platform.close(current.fd)
    unlink(current.path)
  }
}
