import CZlib
import EmulatorHTTP
import EmulatorStorage

#if canImport(Glibc)
  import Glibc
#endif

/// Decompresses a stored gzip object while it is sent (decompressive transcoding), 64 KiB of
/// input at a time, so memory stays flat whatever the object's size or compression ratio.
/// Concatenated gzip members are decompressed one after the other.
///
/// Invariant: `next()` is called by one connection at a time, serially (the HTTP layer pulls a
/// piece only after the previous one was written), so the z_stream state needs no lock.
final class GzipInflateStream: HTTPBodyStream, @unchecked Sendable {
  struct CorruptData: Error {}

  private let data: ObjectData
  private var stream = z_stream()
  private var input = [UInt8](repeating: 0, count: 65536)
  private var inputStart = 0
  private var inputEnd = 0
  private var fileOffset = 0
  private var finished = false
  private var open = false
  /// Inside a gzip member whose end has not been seen yet.
  private var memberOpen = false

  init(_ data: ObjectData) {
    self.data = data
  }

  deinit {
    if open { inflateEnd(&stream) }
  }

  func next() throws -> [UInt8]? {
    if finished { return nil }
    if !open {
      guard se_inflate_init_gzip(&stream) == Z_OK else { throw CorruptData() }
      open = true
    }
    var output = [UInt8](repeating: 0, count: 262_144)
    var produced = 0
    while produced == 0 {
      if inputStart == inputEnd {
        if try refill() == 0 {
          finished = true
          if memberOpen { throw CorruptData() }  // truncated
          break
        }
      }
      var status: Int32 = Z_OK
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
      switch status {
      case Z_OK:
        memberOpen = true
      case Z_BUF_ERROR where inputStart == inputEnd:
        memberOpen = true
      case Z_STREAM_END:
        // Another gzip member may follow.
        memberOpen = false
        inflateReset(&stream)
      default:
        throw CorruptData()
      }
    }
    return produced > 0 ? Array(output[0..<produced]) : nil
  }

  /// Reads the next piece of compressed input; returns its length (0 at the end).
  private func refill() throws -> Int {
    let count: Int
    switch data {
    case .bytes(let bytes):
      count = min(input.count, bytes.count - fileOffset)
      if count > 0 { input.replaceSubrange(0..<count, with: bytes[fileOffset..<(fileOffset + count)]) }
    case .file(let file):
      let read = input.withUnsafeMutableBytes { pread(file.fd, $0.baseAddress, $0.count, off_t(fileOffset)) }
      guard read >= 0 else { throw CorruptData() }
      count = read
    }
    fileOffset += count
    inputStart = 0
    inputEnd = count
    return count
  }
}
