#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// The few socket and file calls whose names or signatures differ between Glibc and Darwin, so
/// the rest of the module calls one spelling. (Darwin is written for but not compiled here.)
enum Platform {
  /// `SOCK_STREAM` as the `Int32` that `socket` and `addrinfo` take.
  static var streamSocket: Int32 {
    #if canImport(Glibc)
      Int32(SOCK_STREAM.rawValue)
    #elseif canImport(Darwin)
      SOCK_STREAM
    #endif
  }

  /// `RLIMIT_NOFILE` as the `Int32` that `getrlimit` takes.
  static var fileLimitResource: Int32 {
    #if canImport(Glibc)
      Int32(RLIMIT_NOFILE.rawValue)
    #elseif canImport(Darwin)
      RLIMIT_NOFILE
    #endif
  }

  /// Flags for a `send` that must neither block nor raise SIGPIPE (Darwin has no
  /// `MSG_NOSIGNAL`; the server ignores SIGPIPE there as here).
  static var sendNoWaitFlags: Int32 {
    #if canImport(Glibc)
      Int32(MSG_NOSIGNAL) | Int32(MSG_DONTWAIT)
    #elseif canImport(Darwin)
      MSG_DONTWAIT
    #endif
  }

  @discardableResult
  static func close(_ fd: Int32) -> Int32 {
    #if canImport(Glibc)
      Glibc.close(fd)
    #elseif canImport(Darwin)
      Darwin.close(fd)
    #endif
  }

  /// Stops sending on a socket (the peer reads end-of-file after what was sent).
  static func shutdownWrite(_ fd: Int32) {
    #if canImport(Glibc)
      _ = Glibc.shutdown(fd, Int32(SHUT_WR))
    #elseif canImport(Darwin)
      _ = Darwin.shutdown(fd, SHUT_WR)
    #endif
  }

  /// Sends up to `count` bytes of `file` from `offset` to `socket` without copying them through
  /// user space. Returns the bytes sent (0 at the file's end) or -1 with errno; on `EAGAIN`
  /// after a partial send, Darwin reports the partial count, which is returned as progress.
  static func sendFile(to socket: Int32, from file: Int32, offset: Int, count: Int) -> Int {
    #if canImport(Glibc)
      var position = off_t(offset)
      return sendfile(socket, file, &position, count)
    #elseif canImport(Darwin)
      var length = off_t(count)
      let result = sendfile(file, socket, off_t(offset), &length, nil, 0)
      if result == 0 || length > 0 { return Int(length) }
      return -1
    #endif
  }
}
