import EmulatorSupport
import Testing

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

@Suite struct SystemCallTests {
  @Test func writeAllWritesEveryByteThroughAPipe() throws {
    var fds: [Int32] = [0, 0]
    try SystemCall.checked("pipe") { pipe(&fds) }
    defer {
      close(fds[0])
      close(fds[1])
    }
    let payload: [UInt8] = Array("hello, pipe".utf8)
    #expect(payload.withUnsafeBytes { SystemCall.writeAll(fds[1], $0) } == 0)
    var buffer = [UInt8](repeating: 0, count: 64)
    let count = buffer.withUnsafeMutableBytes { raw in SystemCall.retrying { read(fds[0], raw.baseAddress, raw.count) } }
    #expect(Array(buffer.prefix(count)) == payload)
  }

  @Test func checkedThrowsTheCallsErrno() {
    #expect(throws: SystemError("close", code: EBADF)) {
      try SystemCall.checked("close") { close(-1) }
    }
  }
}
