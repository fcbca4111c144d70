import EmulatorHTTP
import EmulatorStorage

#if canImport(Glibc)
  import Glibc
#endif

/// Decompresses a stored gzip object while it is sent (decompressive transcoding), 64 KiB of
/// input at a time, so memory stays flat whatever the object's size or compression ratio.
/// Concatenated gzip members are decompressed one after the other; the work of one `next()` is
/// bounded (see `GzipInflater`): an empty piece tells the connection to yield and call again.
///
/// Invariant: `next()` is called by one connection at a time, serially (the HTTP layer pulls a
/// piece only after the previous one was written), so the inflater needs no lock.
final class GzipInflateStream: HTTPBodyStream, @unchecked Sendable {
  typealias CorruptData = GzipInflater.CorruptData

  private let inflater: GzipInflater

  init(_ data: ObjectData) {
    inflater = GzipInflater { buffer, offset in
      switch data {
      case .bytes(let bytes):
        let count = max(0, min(buffer.count, bytes.count - offset))
        if count > 0 { buffer.copyBytes(from: bytes[offset..<(offset + count)]) }
        return count
      case .file(let file):
        let read = pread(file.fd, buffer.baseAddress, buffer.count, off_t(offset))
        guard read >= 0 else { throw CorruptData() }
        return read
      }
    }
  }

  func next() throws -> [UInt8]? {
    try inflater.next()
  }
}
