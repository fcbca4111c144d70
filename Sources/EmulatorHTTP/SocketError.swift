#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// A failed system call: which one, and the errno it left; or, with code 0, why the server
/// refused to start.
public struct SocketError: Error, CustomStringConvertible, Sendable {
  public var call: String
  public var code: Int32

  public init(_ call: String, code: Int32 = errno) {
    self.call = call
    self.code = code
  }

  /// With `code` 0 the failure is not a system call's (a configuration the server refuses):
  /// `call` is then the whole message.
  public var description: String {
    code == 0 ? call : "\(call) failed: \(String(cString: strerror(code))) (errno \(code))"
  }
}
