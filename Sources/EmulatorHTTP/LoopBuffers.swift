/// Buffers the connections of one event loop share. They are touched only on the loop's thread,
/// by one connection at a time, so a keep-alive request costs no allocation for its read, and
/// none for its response once the first response has been written.
///
/// Invariant: used only on the owning loop's thread; that is what makes the `@unchecked
/// Sendable` sound.
final class LoopBuffers: @unchecked Sendable {
  /// Where a connection's `read` lands before the decoder takes the bytes (the most one read asks).
  let read = UnsafeMutableRawBufferPointer.allocate(byteCount: 65536, alignment: 16)
  /// An emptied response buffer, lent to the next response and given back once it is written.
  private var spare: [UInt8] = []
  /// A larger buffer is not kept (a large body stays allocated only while it is being sent).
  static let keptCapacity = 1 << 16

  /// An empty buffer, with the capacity of the last one given back.
  func take() -> [UInt8] {
    var buffer: [UInt8] = []
    swap(&buffer, &spare)
    return buffer
  }

  /// Takes back a buffer that is completely written (leaving `buffer` empty, without capacity).
  func give(_ buffer: inout [UInt8]) {
    if buffer.capacity <= Self.keptCapacity && buffer.capacity > spare.capacity {
      buffer.removeAll(keepingCapacity: true)
      swap(&buffer, &spare)
    }
    buffer = []
  }

  deinit { read.deallocate() }
}
