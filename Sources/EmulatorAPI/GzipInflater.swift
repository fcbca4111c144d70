import CZlib

/// Inflates a gzip stream (any number of concatenated members) piece by piece, pulling
/// compressed input from `source` as it needs it, with a bound on the work of one call: a
/// call that has consumed `maxInputPerCall` bytes or ended `maxMembersPerCall` members without
/// producing output returns an empty piece, so the caller can yield (a body made of millions of
/// empty members, or of empty deflate blocks, costs CPU in small slices, never a stalled
/// thread). Not thread-safe: one caller at a time.
final class GzipInflater {
  struct CorruptData: Error {}

  /// Compressed bytes read per `source` call.
  static let inputBufferBytes = 65_536
  /// The most output one call returns.
  static let outputBytes = 262_144
  /// Compressed bytes one call may consume without producing output before it yields.
  static let maxInputPerCall = 1 << 20
  /// Gzip members one call may end without producing output before it yields.
  static let maxMembersPerCall = 64

  /// Fills the buffer with the compressed bytes at the offset; returns how many (0 at the end).
  typealias Source = (UnsafeMutableRawBufferPointer, Int) throws -> Int

  private let source: Source
  private var stream = z_stream()
  private var input = [UInt8](repeating: 0, count: GzipInflater.inputBufferBytes)
  private var inputStart = 0
  private var inputEnd = 0
  private var sourceOffset = 0
  private var finished = false
  private var open = false
  /// Inside a gzip member whose end has not been seen yet.
  private var memberOpen = false

  init(source: @escaping Source) {
    self.source = source
  }

  deinit {
    if open { inflateEnd(&stream) }
  }

  /// The next piece of output: nil at the end, empty when the call's work bound was reached
  /// before any output (call again). Throws on corrupt or truncated input.
  func next() throws -> [UInt8]? {
    if finished { return nil }
    if !open {
      guard se_inflate_init_gzip(&stream) == Z_OK else { throw CorruptData() }
      open = true
    }
    var output = [UInt8](repeating: 0, count: Self.outputBytes)
    var produced = 0
    var consumed = 0
    var membersEnded = 0
    while produced == 0 {
      if consumed >= Self.maxInputPerCall || membersEnded >= Self.maxMembersPerCall { return [] }
      if inputStart == inputEnd {
        if try refill() == 0 {
          finished = true
          if memberOpen { throw CorruptData() }  // truncated
          break
        }
      }
      var status: Int32 = Z_OK
      let before = inputStart
      input.withUnsafeMutableBufferPointer { inputBuffer in
        output.withUnsafeMutableBufferPointer { outputBuffer in
          stream.next_in = inputBuffer.baseAddress! + inputStart
          stream.avail_in = uInt(inputEnd - inputStart)
          stream.next_out = outputBuffer.baseAddress! + produced
          stream.avail_out = uInt(outputBuffer.count - produced)
          status = inflate(&stream, Z_NO_FLUSH)
          inputStart = inputEnd - Int(stream.avail_in)
          produced = outputBuffer.count - Int(stream.avail_out)
        }
      }
      consumed += inputStart - before
      switch status {
      case Z_OK:
        memberOpen = true
      case Z_BUF_ERROR where inputStart == inputEnd:
        memberOpen = true
      case Z_STREAM_END:
        // Another gzip member may follow.
        memberOpen = false
        membersEnded += 1
        inflateReset(&stream)
      default:
        throw CorruptData()
      }
    }
    output.removeSubrange(produced...)
    return produced > 0 ? output : nil
  }

  /// Reads the next piece of compressed input; returns its length (0 at the end).
  private func refill() throws -> Int {
    let count = try input.withUnsafeMutableBytes { try source($0, sourceOffset) }
    guard count >= 0 && count <= input.count else { throw CorruptData() }
    sourceOffset += count
    inputStart = 0
    inputEnd = count
    return count
  }
}
