#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// The response being written on one connection: its encoded head (and in-memory body), then
/// a file region sent with `sendfile` or a body stream sent with chunked coding.
struct ResponseWriter {
  /// Where written buffers go back to (the loop's), to be lent to the next response.
  let buffers: LoopBuffers
  private var bytes: [UInt8] = []
  private var offset = 0
  private var file: (region: FileRegion, offset: Int, end: Int)?
  private var stream: (any HTTPBodyStream)?

  /// How far a `write` got.
  enum Progress: Equatable {
    /// Everything queued is written.
    case finished
    /// The socket is full: wait for writability.
    case blocked
    /// The stream produced nothing yet: let the loop's other work run, then write again.
    case yielded
    /// The peer went away, the file ended early or the stream failed: the length promised
    /// cannot be kept, so the connection must close.
    case failed
  }

  var isEmpty: Bool { offset >= bytes.count && file == nil && stream == nil }

  init(buffers: LoopBuffers) {
    self.buffers = buffers
  }

  /// Queues an encoded response (or interim response) and the body that follows it.
  mutating func enqueue(_ encoded: [UInt8], file region: FileRegion? = nil, stream: (any HTTPBodyStream)? = nil) {
    if offset >= bytes.count {
      bytes = encoded
      offset = 0
    } else {
      bytes.append(contentsOf: encoded)
    }
    if let region { file = (region, region.offset, region.offset + region.length) }
    if let stream { self.stream = stream }
  }

  /// Writes as much as `fd` takes. `moved` tells whether any byte left (write-stall progress).
  mutating func write(to fd: Int32) -> (progress: Progress, moved: Bool) {
    var moved = false
    while true {
      if offset < bytes.count {
        let result = bytes.withUnsafeBytes { systemWrite(fd, $0.baseAddress! + offset, $0.count - offset) }
        switch Self.outcome(of: result) {
        case .moved(let count):
          offset += count
          moved = true
          continue
        case .retry: continue
        case .blocked: return (.blocked, moved)
        case .failed: return (.failed, moved)
        }
      }
      if !bytes.isEmpty {
        // Back to the loop, not kept here: a body would stay allocated while the connection idles.
        buffers.give(&bytes)
        offset = 0
      }
      if let current = file {
        if current.offset >= current.end {
          file = nil
          continue
        }
        let result = Platform.sendFile(
          to: fd, from: current.region.fd, offset: current.offset, count: min(current.end - current.offset, 1 << 22))
        switch Self.outcome(of: result) {
        case .moved(let count):
          file = (current.region, current.offset + count, current.end)
          moved = true
          continue
        case .retry: continue
        case .blocked: return (.blocked, moved)
        case .failed: return (.failed, moved)
        }
      }
      if let current = stream {
        let piece: [UInt8]?
        do {
          piece = try current.next()
        } catch {
          return (.failed, moved)
        }
        guard let piece else {
          stream = nil
          bytes = Array("0\r\n\r\n".utf8)
          continue
        }
        if piece.isEmpty { return (.yielded, moved) }
        bytes = Array(String(piece.count, radix: 16).utf8) + [13, 10] + piece + [13, 10]
        continue
      }
      return (.finished, moved)
    }
  }

  /// Drops what is still queued (the connection is closing).
  mutating func discard() {
    bytes = []
    offset = 0
    file = nil
    stream = nil
  }

  private enum Outcome {
    case moved(Int)
    case retry
    case blocked
    case failed
  }

  /// What a `write` or `sendfile` result means; 0 bytes (a file that ended early) is a failure.
  private static func outcome(of result: Int) -> Outcome {
    if result > 0 { return .moved(result) }
    if result < 0 && errno == EINTR { return .retry }
    if result < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) { return .blocked }
    return .failed
  }
}

/// `write(2)`, named apart from `ResponseWriter.write`.
@inline(__always)
private func systemWrite(_ fd: Int32, _ buffer: UnsafeRawPointer, _ count: Int) -> Int {
  write(fd, buffer, count)
}
