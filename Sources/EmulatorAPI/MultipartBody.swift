import EmulatorHTTP
import EmulatorStorage

#if canImport(Glibc)
  import Glibc
#endif

/// The two parts of a multipart upload, read without holding the upload on the heap: a body
/// spooled to disk is mapped (page cache, not process memory) and its data part written to a
/// file of its own, which the store then moves into place; a small body in memory is cut in
/// place. The metadata part is bounded by `maxMetadataBytes` either way.
struct MultipartBody {
  var metadata: [UInt8]
  /// Every part's headers (names lower-cased), in order.
  var partHeaders: [[String: String]]
  var dataHeaders: [String: String] { partHeaders[1] }
  private var bytes: [UInt8] = []
  private var file: DataFile?

  /// The data part for the store, which then owns its file (if any).
  var data: ObjectStore.DataSource {
    guard let file else { return .bytes(bytes) }
    return .file(file.take())
  }

  /// The data part written apart; removed unless the store took it.
  private final class DataFile {
    let path: String
    private var taken = false
    init(_ path: String) { self.path = path }
    func take() -> String {
      taken = true
      return path
    }
    deinit { if !taken { unlink(path) } }
  }

  init(_ request: HTTPRequest, boundary: String, metadataLimit: Int) throws(APIError) {
    var limits = MultipartRelated.Limits()
    limits.maxFirstPartBytes = metadataLimit
    guard let spooled = request.bodyFile, spooled.size > 0 else {
      var body = request.body
      let parts = try Self.twoParts(try MultipartRelated.parse(body, boundary: boundary, limits: limits))
      metadata = Array(body[parts[0].range])
      partHeaders = parts.map(\.headers)
      let range = parts[1].range
      body.removeSubrange(range.upperBound...)
      body.removeSubrange(..<range.lowerBound)
      bytes = body
      return
    }
    let fd = open(spooled.path, O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else { throw Self.ioError("read the upload", errno) }
    let mapped = mmap(nil, spooled.size, PROT_READ, MAP_PRIVATE, fd, 0)
    close(fd)
    guard let mapped, mapped != MAP_FAILED else { throw Self.ioError("map the upload", errno) }
    defer { munmap(mapped, spooled.size) }
    let body = UnsafeBufferPointer(start: mapped.assumingMemoryBound(to: UInt8.self), count: spooled.size)
    let parts = try Self.twoParts(try MultipartRelated.parse(body, boundary: boundary, limits: limits))
    metadata = Array(body[parts[0].range])
    partHeaders = parts.map(\.headers)
    let path = spooled.path + ".data"
    try Self.write(UnsafeBufferPointer(rebasing: body[parts[1].range]), to: path)
    self.file = DataFile(path)
  }

  private static func twoParts(_ parts: [MultipartRelated.Part]) throws(APIError) -> [MultipartRelated.Part] {
    guard parts.count >= 2 else {
      throw APIError(400, .invalid, "A multipart upload needs two parts (metadata, then data); got \(parts.count).")
    }
    return parts
  }

  private static func write(_ bytes: UnsafeBufferPointer<UInt8>, to path: String) throws(APIError) {
    let out = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
    guard out >= 0 else { throw ioError("store the upload", errno) }
    defer { close(out) }
    var offset = 0
    while offset < bytes.count {
      let written = Glibc.write(out, bytes.baseAddress! + offset, bytes.count - offset)
      if written < 0 && errno == EINTR { continue }
      guard written > 0 else {
        let code = errno
        unlink(path)
        throw ioError("store the upload", code)
      }
      offset += written
    }
  }

  private static func ioError(_ what: String, _ code: Int32) -> APIError {
    let message = "Could not \(what): \(String(cString: strerror(code)))."
    return code == ENOSPC || code == EDQUOT
      ? APIError(507, .insufficientStorage, message) : APIError(500, .internalError, message)
  }
}
