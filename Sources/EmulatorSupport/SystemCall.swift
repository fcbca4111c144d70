#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// A failed system call: its name and `errno`.
public struct SystemError: Error, Equatable, Sendable, CustomStringConvertible {
  public let call: String
  public let code: Int32

  public init(_ call: String, code: Int32) {
    self.call = call
    self.code = code
  }

  public var description: String { "\(call): \(String(cString: strerror(code))) (errno \(code))" }
}

/// The one place system calls are retried on `EINTR` (the pattern of swift-nio's
/// `syscall(blocking:)`): every module calls the C library through these instead of writing its
/// own loop.
public enum SystemCall {
  /// Calls `body` again while it fails with `EINTR`; returns its last result, `errno` intact.
  @inlinable
  public static func retrying<Result: BinaryInteger>(_ body: () -> Result) -> Result {
    while true {
      let result = body()
      if result == -1 && errno == EINTR { continue }
      return result
    }
  }

  /// As `retrying`, but a result of -1 throws `SystemError` with `errno`.
  @inlinable
  @discardableResult
  public static func checked<Result: BinaryInteger>(
    _ call: String, _ body: () -> Result
  ) throws(SystemError) -> Result {
    let result = retrying(body)
    if result == -1 { throw SystemError(call, code: errno) }
    return result
  }

  /// Writes all of `buffer` to `fd` (retrying `EINTR` and short writes). Returns 0, or the errno
  /// that stopped it (`EIO` for a write that made no progress).
  public static func writeAll(_ fd: Int32, _ buffer: UnsafeRawBufferPointer) -> Int32 {
    guard var address = buffer.baseAddress else { return 0 }
    var left = buffer.count
    while left > 0 {
      let written = retrying { write(fd, address, left) }
      if written < 0 { return errno }
      if written == 0 { return EIO }
      address += written
      left -= written
    }
    return 0
  }
}
