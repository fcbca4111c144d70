import EmulatorSupport

/// Keeps everything in memory: for throwaway test runs (`--in-memory`) and fast unit tests.
public final class MemoryBackend: StorageBackend {
  private struct DataKey: Hashable {
    var bucket: String
    var name: ObjectKey
    var generation: Int64
  }

  private struct State {
    var data: [DataKey: [UInt8]] = [:]
    var staged: [String: [UInt8]] = [:]
    var nextStage = 0
    /// Generations kept as noncurrent: their bytes outlive a commit or remove of the live one.
    var archived: Set<DataKey> = []
  }

  private let state = Locked(State())
  private let spaces: [UploadSpaceKind: MemoryUploadSpace] = Dictionary(
    uniqueKeysWithValues: UploadSpaceKind.allCases.map { ($0, MemoryUploadSpace()) })

  public init() {}

  /// Upload sessions and multipart parts stay in memory too: `--in-memory` touches no disk.
  public func uploadSpace(_ kind: UploadSpaceKind) throws(StorageError) -> any UploadSpace { spaces[kind]! }

  /// None: request bodies are held in memory (each at most the upload limit).
  public var spoolDirectory: String? { nil }

  public func load(log: @Sendable (String) -> Void) throws(StorageError) -> LoadedState { LoadedState() }
  public func saveBucket(_ bucket: BucketInfo) throws(StorageError) {}
  public func removeBucket(_ name: String) throws(StorageError) {}

  public func stage(_ bytes: [UInt8]) throws(StorageError) -> StagedData {
    state.withLock { state in
      state.nextStage += 1
      let id = String(state.nextStage)
      state.staged[id] = bytes
      return StagedData(id: id, size: Int64(bytes.count))
    }
  }

  public func stage(file path: String) throws(StorageError) -> StagedData {
    guard let data = FileManager.default.contents(atPath: path) else {
      throw StorageError.io("cannot read the spooled upload")
    }
    try? FileManager.default.removeItem(atPath: path)
    return try stage(Array(data))
  }

  public func stageConcatenation(of objects: [ObjectMetadata]) throws(StorageError) -> StagedData {
    var bytes: [UInt8] = []
    for object in objects { bytes += try read(object) }
    return try stage(bytes)
  }

  public func digest(_ staged: StagedData) throws(StorageError) -> (md5: [UInt8], crc32c: UInt32) {
    Digester.digest(state.withLock { $0.staged[staged.id] ?? [] })
  }

  public func isDamaged(bucket: String, name: String) -> Bool { false }
  public func removeDamaged(bucket: String, name: String) throws(StorageError) {}

  public func open(_ object: ObjectMetadata) throws(StorageError) -> ObjectData {
    .bytes(try read(object))
  }

  public func discard(_ staged: StagedData) {
    state.withLock { _ = $0.staged.removeValue(forKey: staged.id) }
  }

  public func commit(
    _ object: ObjectMetadata, data: StagedData?, previous: ObjectMetadata?, carrying: [UInt8]?
  ) throws(StorageError) -> ObjectMetadata {
    guard let data else { return object }
    state.withLock { state in
      let bytes = state.staged.removeValue(forKey: data.id) ?? []
      state.data[DataKey(bucket: object.bucket, name: ObjectKey(object.name), generation: object.generation)] = bytes
      if let previous {
        let key = DataKey(bucket: previous.bucket, name: ObjectKey(previous.name), generation: previous.generation)
        if !state.archived.contains(key) { state.data[key] = nil }
      }
    }
    return object
  }

  public func remove(_ object: ObjectMetadata) throws(StorageError) {
    state.withLock { state in
      let key = DataKey(bucket: object.bucket, name: ObjectKey(object.name), generation: object.generation)
      if !state.archived.contains(key) { state.data[key] = nil }
    }
  }

  public func archive(_ version: NoncurrentObject) throws(StorageError) {
    let object = version.object
    state.withLock {
      _ = $0.archived.insert(DataKey(bucket: object.bucket, name: ObjectKey(object.name), generation: object.generation))
    }
  }

  public func removeNoncurrent(_ object: ObjectMetadata) throws(StorageError) {
    state.withLock { state in
      let key = DataKey(bucket: object.bucket, name: ObjectKey(object.name), generation: object.generation)
      state.archived.remove(key)
      state.data[key] = nil
    }
  }

  public func read(_ object: ObjectMetadata) throws(StorageError) -> [UInt8] {
    let bytes = state.withLock { state in
      state.data[DataKey(bucket: object.bucket, name: ObjectKey(object.name), generation: object.generation)]
    }
    guard let bytes else { throw StorageError.objectNotFound(bucket: object.bucket, name: object.name) }
    return bytes
  }
}
