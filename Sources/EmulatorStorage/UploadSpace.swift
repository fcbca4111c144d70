/// Which uploads an `UploadSpace` holds.
public enum UploadSpaceKind: String, Sendable, CaseIterable {
  /// Resumable upload sessions (`UploadSessions`).
  case sessions = "uploads"
  /// XML API multipart uploads (`MultipartUploads`).
  case multipart = "multipart"
}

/// A flat set of named entries where unfinished uploads keep their records and the bytes
/// received so far. The backend decides where it lives (`StorageBackend.uploadSpace`): a folder
/// of the data folder for `FileBackend`, memory for `MemoryBackend`. Names are chosen by the
/// callers from ids they generate (hex digits, dots, digits), never from client input.
public protocol UploadSpace: Sendable {
  /// Every entry's name.
  func names() -> [String]
  /// An entry's bytes, nil when it is absent.
  func contents(_ name: String) -> [UInt8]?
  /// An entry's size and when it last changed (milliseconds since the epoch); nil when absent.
  func info(_ name: String) -> (size: Int64, modified: Int64)?
  /// Creates `name` (or replaces it) with `bytes` in one step, through the entry `temp`: a
  /// reader, also after a crash, finds the old bytes or the new ones, never a part of them.
  func replace(_ name: String, with bytes: [UInt8], temp: String) throws(StorageError)
  /// Makes `file` (a spooled request body, taken over) the entry `name` in one step, as `replace`.
  func adopt(file: String, as name: String, temp: String) throws(StorageError)
  /// Creates an empty entry (emptying one that exists).
  func create(_ name: String) throws(StorageError)
  /// Appends bytes to an existing entry; durable when this returns if the backend syncs.
  func append(_ name: String, bytes: ArraySlice<UInt8>) throws(StorageError)
  /// Appends the bytes of `file` from `offset` on; returns how many were appended.
  func append(_ name: String, file: String, from offset: Int64) throws(StorageError) -> Int64
  /// Removes an entry; an absent one is left alone.
  func remove(_ name: String)
  /// Removes entries for good: when the backend syncs, the removal survives a power cut.
  func discard(_ names: [String])
  /// MD5, CRC32C and size of an entry's bytes, read in pieces.
  func digest(_ name: String) throws(StorageError) -> (md5: [UInt8], crc32c: UInt32, size: Int64)
  /// Feeds the bytes `range` of an entry to `digester` (`RunningDigests`); throws when the entry
  /// is gone or shorter.
  func update(_ digester: inout Digester, from name: String, range: Range<Int64>) throws(StorageError)
  /// The concatenated bytes of `names` as data the store takes over, made under the entry
  /// `output` (one name: a hard link, so the entry keeps its bytes). When the store refuses
  /// them, the caller removes `output`.
  func handOff(_ names: [String], as output: String) throws(StorageError) -> ObjectStore.DataSource
}

extension UploadSpace {
  /// `handOff`, then `commit` with the data; when the commit fails, `output` is removed and the
  /// entries keep their bytes.
  func commitHandOff(
    _ names: [String], as output: String, _ commit: (ObjectStore.DataSource) throws(StorageError) -> ObjectMetadata
  ) throws(StorageError) -> ObjectMetadata {
    let data = try handOff(names, as: output)
    do throws(StorageError) {
      return try commit(data)
    } catch {
      remove(output)
      throw error
    }
  }
}
