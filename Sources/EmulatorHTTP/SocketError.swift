#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// A failed system call: which one, and the errno it left.
public struct SocketError: Error, CustomStringConvertible, Sendable {
  public var call: String
  public var code: Int32

  public init(_ call: String, code: Int32 = errno) {
    self.call = call
    self.code = code
  }

  public var description: String { "\(call) failed: \(String(cString: strerror(code))) (errno \(code))" }
}
