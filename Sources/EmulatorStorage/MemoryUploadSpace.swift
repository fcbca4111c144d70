import EmulatorSupport

/// An `UploadSpace` in memory (`MemoryBackend`): no file is ever opened, except a spooled body
/// handed to `adopt` or `append(file:)` (with `--in-memory` the server spools nothing).
public final class MemoryUploadSpace: UploadSpace {
  private struct Entry {
    var bytes: [UInt8]
    var modified: Int64
  }

  private let entries = Locked<[String: Entry]>([:])

  public init() {}

  public func names() -> [String] { entries.withLock { Array($0.keys) } }

  public func contents(_ name: String) -> [UInt8]? { entries.withLock { $0[name]?.bytes } }

  public func info(_ name: String) -> (size: Int64, modified: Int64)? {
    entries.withLock { $0[name].map { (Int64($0.bytes.count), $0.modified) } }
  }

  public func replace(_ name: String, with bytes: [UInt8], temp: String) throws(StorageError) {
    entries.withLock { $0[name] = Entry(bytes: bytes, modified: Timestamp.nowMilliseconds()) }
  }

  public func adopt(file: String, as name: String, temp: String) throws(StorageError) {
    defer { try? FileManager.default.removeItem(atPath: file) }
    try replace(name, with: try Self.read(file), temp: temp)
  }

  public func create(_ name: String) throws(StorageError) { try replace(name, with: [], temp: name) }

  public func append(_ name: String, bytes: ArraySlice<UInt8>) throws(StorageError) {
    let found = entries.withLock { entries -> Bool in
      guard entries[name] != nil else { return false }
      entries[name]!.bytes += bytes
      entries[name]!.modified = Timestamp.nowMilliseconds()
      return true
    }
    guard found else { throw StorageError.io("Could not store the chunk: its upload is gone. Nothing was changed.") }
  }

  public func append(_ name: String, file: String, from offset: Int64) throws(StorageError) -> Int64 {
    let bytes = try Self.read(file)
    let start = Int(min(max(offset, 0), Int64(bytes.count)))
    try append(name, bytes: bytes[start...])
    return Int64(bytes.count - start)
  }

  public func remove(_ name: String) { entries.withLock { _ = $0.removeValue(forKey: name) } }

  public func discard(_ names: [String]) { for name in names { remove(name) } }

  public func digest(_ name: String) throws(StorageError) -> (md5: [UInt8], crc32c: UInt32, size: Int64) {
    guard let bytes = contents(name) else { throw StorageError.io("Could not read an upload's bytes: they are gone.") }
    let digest = Digester.digest(bytes)
    return (digest.md5, digest.crc32c, Int64(bytes.count))
  }

  public func update(_ digester: inout Digester, from name: String, range: Range<Int64>) throws(StorageError) {
    let found = entries.withLock { entries -> Bool in
      guard let bytes = entries[name]?.bytes, range.lowerBound >= 0, range.upperBound <= Int64(bytes.count) else {
        return false
      }
      bytes[Int(range.lowerBound)..<Int(range.upperBound)].withUnsafeBytes { digester.update($0) }
      return true
    }
    guard found else { throw StorageError.io("Could not read an upload's bytes: they are gone.") }
  }

  public func handOff(_ names: [String], as output: String) throws(StorageError) -> ObjectStore.DataSource {
    var bytes: [UInt8] = []
    for name in names {
      guard let part = contents(name) else { throw StorageError.io("Could not read an upload's bytes: they are gone.") }
      bytes += part
    }
    return .bytes(bytes)
  }

  private static func read(_ file: String) throws(StorageError) -> [UInt8] {
    guard let data = FileManager.default.contents(atPath: file) else {
      throw StorageError.io("Could not read the request body. Nothing was changed.")
    }
    return Array(data)
  }
}
