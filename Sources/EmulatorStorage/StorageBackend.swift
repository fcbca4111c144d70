/// Where objects live. Implementations make each `commit` and `remove` atomic: after a crash an
/// object is wholly its old or wholly its new version. Calls for one object are serialised by
/// the store; calls for different objects may run concurrently.
public protocol StorageBackend: Sendable {
  /// Loads everything, first cleaning leftovers of interrupted writes (reported through `log`).
  func load(log: @Sendable (String) -> Void) throws(StorageError) -> LoadedState
  func saveBucket(_ bucket: BucketInfo) throws(StorageError)
  func removeBucket(_ name: String) throws(StorageError)
  /// Writes the bytes somewhere invisible until `commit`.
  func stage(_ bytes: [UInt8]) throws(StorageError) -> StagedData
  /// Takes ownership of a file (an upload spooled to disk) and stages its bytes.
  func stage(file path: String) throws(StorageError) -> StagedData
  /// Stages the concatenation of the live bytes of `objects` (one object: a copy).
  func stageConcatenation(of objects: [ObjectMetadata]) throws(StorageError) -> StagedData
  /// MD5 and CRC32C of staged bytes.
  func digest(_ staged: StagedData) throws(StorageError) -> (md5: [UInt8], crc32c: UInt32)
  func discard(_ staged: StagedData)
  /// Makes `object` the live version: with `data`, a new generation replacing `previous` (whose
  /// bytes are then dropped); without, a metadata-only update that leaves the bytes alone (and
  /// writes `carrying` with the record: what `carriedBytes` returned). Returns the object as
  /// committed (the file backend notes where its bytes went).
  @discardableResult
  func commit(
    _ object: ObjectMetadata, data: StagedData?, previous: ObjectMetadata?, carrying: [UInt8]?
  ) throws(StorageError) -> ObjectMetadata
  /// The bytes a metadata-only commit of `object` must write again with its record (called
  /// under the object's lock); nil when its record does not hold them.
  func carriedBytes(_ object: ObjectMetadata) throws(StorageError) -> [UInt8]?
  func remove(_ object: ObjectMetadata) throws(StorageError)
  /// Keeps the bytes and metadata of the live `object` as a noncurrent generation (a versioned
  /// bucket), before a `commit` replaces it or a `remove` removes it; readable by `open`/`read`.
  func archive(_ object: NoncurrentObject) throws(StorageError)
  /// Removes a noncurrent generation for good.
  func removeNoncurrent(_ object: ObjectMetadata) throws(StorageError)
  /// The live bytes of `object`.
  func read(_ object: ObjectMetadata) throws(StorageError) -> [UInt8]
  /// Whether start-up found this object's record damaged (it is then unreadable until it is
  /// overwritten or deleted).
  func isDamaged(bucket: String, name: String) -> Bool
  /// Removes what is left of a damaged object.
  func removeDamaged(bucket: String, name: String) throws(StorageError)
  /// The live bytes of `object`, as an open file when the backend has one (streamed with
  /// `sendfile`; the bytes stay readable even if the object is replaced meanwhile).
  func open(_ object: ObjectMetadata) throws(StorageError) -> ObjectData
  /// Saves the whole index so the next `load` is fast (called with no write in progress).
  func saveSnapshot(_ state: LoadedState) throws(StorageError)
  /// Saves the project-level state (HMAC keys made through the API), replacing what was saved.
  func saveProjects(_ state: JSONValue) throws(StorageError)
  /// What `saveProjects` last saved; nil when nothing was (or the backend keeps nothing).
  func loadProjects() -> JSONValue?
  /// Where unfinished uploads of `kind` keep their records and bytes: beside the objects, so
  /// they share the backend's lifetime (on disk they survive a restart, in memory they do not).
  /// The same space for every call with one kind.
  func uploadSpace(_ kind: UploadSpaceKind) throws(StorageError) -> any UploadSpace
  /// A folder for request bodies too large to hold in memory, on the file system of the data
  /// (so `stage(file:)` moves them instead of copying); nil: bodies are kept in memory.
  var spoolDirectory: String? { get }
  /// Whether the backend asks for a snapshot while writes go on (its log grew long).
  var snapshotDue: Bool { get }
  /// A snapshot while writes go on: `beginSnapshot` starts recording changes for the new one;
  /// `finishSnapshot` saves what was published once every write begun before it had ended.
  func beginSnapshot() throws(StorageError) -> UInt64
  func finishSnapshot(_ state: LoadedState, epoch: UInt64) throws(StorageError)
  /// Whether the backend asks for `compactOldestSegment` (its log holds many replaced entries).
  var compactionDue: Bool { get }
  /// Drops what is no longer live from the oldest part of the log: `visit` is called for each
  /// record there with a way to keep it, which it calls (holding the object's lock) when that
  /// version is still the live one. False when there was nothing to compact.
  func compactOldestSegment(_ visit: CompactionVisitor) throws(StorageError) -> Bool
}

extension StorageBackend {
  public func carriedBytes(_ object: ObjectMetadata) throws(StorageError) -> [UInt8]? { nil }
  public func saveSnapshot(_ state: LoadedState) throws(StorageError) {}
  public func saveProjects(_ state: JSONValue) throws(StorageError) {}
  public func loadProjects() -> JSONValue? { nil }
  public var snapshotDue: Bool { false }
  public func beginSnapshot() throws(StorageError) -> UInt64 { 0 }
  public func finishSnapshot(_ state: LoadedState, epoch: UInt64) throws(StorageError) {}
  public var compactionDue: Bool { false }
  public func compactOldestSegment(_ visit: CompactionVisitor) throws(StorageError) -> Bool { false }
}
