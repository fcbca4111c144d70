#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// An open, read-only file descriptor, closed when the last reference goes.
public final class OpenFile: Sendable {
  public let fd: Int32
  public let size: Int

  public init(fd: Int32, size: Int) {
    self.fd = fd
    self.size = size
  }

  deinit { closeDescriptor(fd) }
}

private func closeDescriptor(_ fd: Int32) { _ = close(fd) }
