import EmulatorSupport
import Synchronization

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// A request body that was too large to keep in memory and was written to a file as it arrived.
/// The file is removed when the last reference goes, unless a handler `take`s it.
public final class SpooledFile: Sendable {
  public let path: String
  public let size: Int
  private let taken = Atomic<Bool>(false)

  init(path: String, size: Int) {
    self.path = path
    self.size = size
  }

  /// Hands the file over to the caller, who then owns (and must move or remove) it.
  public func take() -> String {
    taken.store(true, ordering: .relaxed)
    return path
  }

  /// Reads the whole file (for handlers that need the bytes in memory, such as multipart).
  public func readAll() -> [UInt8]? {
    FileManager.default.contents(atPath: path).map { Array($0) }
  }

  deinit {
    if !taken.load(ordering: .relaxed) { unlink(path) }
  }
}

/// A response body sent straight from a file with `sendfile`, without copying it into memory.
public final class FileRegion: Sendable {
  public let fd: Int32
  public let offset: Int
  public let length: Int
  /// Keeps the descriptor's owner (which closes it) alive while the region is being sent.
  private let owner: any Sendable

  public init(fd: Int32, offset: Int, length: Int, owner: any Sendable) {
    self.fd = fd
    self.offset = offset
    self.length = length
    self.owner = owner
  }
}

/// A response body produced piece by piece (sent with chunked transfer coding). `next` is called
/// on the connection's queue, only when the previous piece has been written: back-pressure.
public protocol HTTPBodyStream: AnyObject, Sendable {
  /// The next piece, or nil at the end. An empty piece means "nothing yet": the connection lets
  /// its loop's other work run, then asks again (a stream bounds its work per call this way).
  /// Throwing ends the response abruptly (the connection closes).
  func next() throws -> [UInt8]?
}
