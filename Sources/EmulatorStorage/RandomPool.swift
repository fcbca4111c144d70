import CFiles
import EmulatorSupport

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Random bytes for values nobody may guess (download tokens, upload ids), from the system's
/// generator, fetched `capacity` bytes at a time.
///
/// `SystemRandomNumberGenerator` asks the kernel for 8 bytes a call: a download token (16
/// bytes) cost every Firebase upload two `getrandom` system calls. From the pool, one call serves
/// 32 tokens. Bytes are handed out once and cleared from the pool as they are.
public final class RandomPool: Sendable {
  /// The process's pool.
  public static let shared = RandomPool()

  public static let capacity = 512

  private struct State {
    var bytes = [UInt8](repeating: 0, count: RandomPool.capacity)
    /// Bytes before this were handed out (and cleared).
    var next = RandomPool.capacity
    /// Times the pool was filled from the system (tests).
    var fills = 0
  }

  private let state = Locked(State())

  public init() {}

  /// Fills `buffer` (at most `capacity` bytes) with random bytes. A system generator that fails
  /// stops the process, as `SystemRandomNumberGenerator` does: nothing may go on with guessable
  /// tokens.
  public func fill(_ buffer: UnsafeMutableRawBufferPointer) {
    precondition(buffer.count <= Self.capacity, "at most \(Self.capacity) random bytes at a time")
    guard let target = buffer.baseAddress, buffer.count > 0 else { return }
    state.withLock { state in
      state.bytes.withUnsafeMutableBytes { pool in
        if Self.capacity - state.next < buffer.count {
          guard cfiles_random_bytes(pool.baseAddress, UInt(Self.capacity)) == 0 else {
            fatalError("the system's random generator failed: \(SystemError("getrandom", code: errno))")
          }
          state.next = 0
          state.fills += 1
        }
        let source = pool.baseAddress! + state.next
        target.copyMemory(from: source, byteCount: buffer.count)
        source.initializeMemory(as: UInt8.self, repeating: 0, count: buffer.count)
        state.next += buffer.count
      }
    }
  }

  /// 32 random lower-case hexadecimal digits (128 bits): ids that name a capability, such as
  /// an upload session's.
  public func hexID() -> String {
    var bytes: (UInt64, UInt64) = (0, 0)
    return withUnsafeMutableBytes(of: &bytes) { raw in
      fill(raw)
      return Hex.encode(raw)
    }
  }

  /// Times the pool was filled from the system so far.
  public var fills: Int { state.withLock { $0.fills } }
}
