import EmulatorSupport

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Resumable upload sessions, kept in an `UploadSpace` the backend provides (so with the file
/// backend they survive a restart, and with the memory backend they touch no disk): `<id>.json`
/// (the session) and `<id>.part` (the bytes received, appended chunk by chunk; the received
/// count is its size).
///
/// Bounded: a session untouched for `ttlSeconds` expires and its entries are removed (by a
/// periodic sweep, `startSweeping`, and at start-up); at most `maxOpen` sessions are active at
/// once (starting another fails with `tooManyUploadSessions`), and at most `maxOpen` finished or
/// cancelled ones are remembered for status queries (the oldest is forgotten first).
///
/// A finalize hands the store a hard link to the bytes (in memory: a copy), so when the commit
/// fails (a full disk, a precondition) the session keeps its bytes and stays active: the client
/// can query and retry. With `fsync`, an acknowledged chunk is synced, and records are written
/// as `DurableFiles` writes them.
public final class UploadSessions: Sendable {
  public struct Options: Sendable, Equatable {
    /// A session not started, sent bytes or finished for this long expires (default: a day).
    public var ttlSeconds = 86_400
    /// Active sessions at most (default 1000).
    public var maxOpen = 1000
    /// Sync chunks and records before acknowledging them (`init(directory:)`; a backend's space
    /// syncs as the backend does).
    public var fsync = false

    public init(ttlSeconds: Int = 86_400, maxOpen: Int = 1000, fsync: Bool = false) {
      self.ttlSeconds = ttlSeconds
      self.maxOpen = maxOpen
      self.fsync = fsync
    }
  }

  public let space: any UploadSpace
  public let options: Options
  let sessions = Locked(Table())
  private let locks: [PosixLock] = (0..<64).map { _ in PosixLock() }
  let log: @Sendable (String) -> Void
  let sweeper = PeriodicSweep()
  /// Each active session's digest, kept up to date as chunks arrive (see `RunningDigests`).
  let digests = RunningDigests()

  /// Sessions in a folder of their own (tests).
  public convenience init(
    directory: URL, options: Options = Options(), calls: FileCalls = .direct,
    now: Int64 = Timestamp.nowMilliseconds(), log: @escaping @Sendable (String) -> Void = { _ in }
  ) throws(StorageError) {
    let space = try FileUploadSpace(directory: directory, fsync: options.fsync, calls: calls)
    self.init(space: space, options: options, now: now, log: log)
  }

  /// Loads the sessions of `space`: damaged and expired sessions, and leftovers of interrupted
  /// finalizes, are removed.
  public init(
    space: any UploadSpace, options: Options = Options(), now: Int64 = Timestamp.nowMilliseconds(),
    log: @escaping @Sendable (String) -> Void = { _ in }
  ) {
    self.space = space
    self.options = options
    self.log = log
    var loaded = Table()
    let cutoff = now - Int64(options.ttlSeconds) * 1000
    let names = space.names()
    let records = Set(names.filter { $0.hasSuffix(".json") })
    for name in names {
      guard name.hasSuffix(".json") else {
        // A hard link left by an interrupted finalize, a record being written, or bytes whose
        // record is gone.
        if name.hasSuffix(".commit") || name.hasSuffix(".tmp")
          || name.hasSuffix(".part") && !records.contains(name.dropLast(5) + ".json")
        {
          space.remove(name)
        }
        continue
      }
      let id = String(name.dropLast(5))
      guard let bytes = space.contents(name), var session = UploadSession(record: bytes), session.id == id else {
        removeEntries(id)
        log("uploads: removed the damaged upload session \(name)")
        continue
      }
      let part = space.info(Self.partName(id))
      session.touched = max(session.created, space.info(name)?.modified ?? 0, part?.modified ?? 0)
      guard session.touched >= cutoff else {
        removeEntries(id)
        log("uploads: removed the expired upload session \(session.id)")
        continue
      }
      if session.state == .active {
        session.received = part?.size ?? 0
      } else if part != nil {
        space.remove(Self.partName(id))  // finished: its bytes were committed or dropped
      }
      loaded.put(session)
    }
    sessions.withLock { $0 = loaded }
  }

  deinit { stopSweeping() }

  func lock(_ id: String) -> PosixLock {
    var hasher = Hasher()
    hasher.combine(id)
    return locks[Int(UInt(bitPattern: hasher.finalize()) % UInt(locks.count))]
  }

  static func partName(_ id: String) -> String { id + ".part" }
  static func recordName(_ id: String) -> String { id + ".json" }
  static func tempName(_ id: String) -> String { "." + id + ".tmp" }
  static func handOffName(_ id: String) -> String { id + ".commit" }

  /// How many sessions are active and how many finished ones are remembered.
  public var counts: (active: Int, finished: Int) { sessions.withLock { ($0.active, $0.finished) } }

  /// Starts a session and returns it with its id; past `maxOpen` active sessions, fails with
  /// `tooManyUploadSessions` (expired ones are swept first).
  public func create(_ template: UploadSession, now: Int64 = Timestamp.nowMilliseconds()) throws(StorageError)
    -> UploadSession
  {
    var session = template
    session.id = RandomPool.shared.hexID()
    session.state = .active
    session.received = 0
    session.created = now
    session.touched = now
    if !reserve(session) {
      sweep(now: now)
      guard reserve(session) else {
        throw StorageError.tooManyUploadSessions(limit: options.maxOpen, retryAfterSeconds: retryAfter(now: now))
      }
    }
    do throws(StorageError) {
      try space.create(Self.partName(session.id))
      try save(session)  // with fsync, also makes the .part file's name durable (same folder)
    } catch {
      space.remove(Self.partName(session.id))
      sessions.withLock { _ = $0.removeValue(forKey: session.id) }
      throw error
    }
    return session
  }

  /// Adds `session` to the table unless `maxOpen` sessions are active.
  private func reserve(_ session: UploadSession) -> Bool {
    sessions.withLock { table in
      guard table.active < options.maxOpen else { return false }
      table.put(session)
      return true
    }
  }

  /// Seconds until the oldest active session expires, between 1 and 60.
  private func retryAfter(now: Int64) -> Int {
    let oldest = sessions.withLock { $0.sessions.values.lazy.filter { $0.state == .active }.map(\.touched).min() }
    guard let oldest else { return 1 }
    let seconds = (oldest + Int64(options.ttlSeconds) * 1000 - now + 999) / 1000
    return Int(min(max(seconds, 1), 60))
  }

  public func session(_ id: String) throws(StorageError) -> UploadSession {
    guard let session = sessions.withLock({ $0[id] }) else { throw StorageError.uploadNotFound(id) }
    return session
  }

  /// Appends bytes that must start at `offset` (the count received so far). Bytes before the
  /// received count are skipped (a retried chunk), so `offset` may be lower than `received` as
  /// long as the chunk reaches past it. With `fsync`, the bytes are synced before this returns.
  @discardableResult
  public func append(
    _ id: String, at offset: Int64, bytes: [UInt8]? = nil, file: String? = nil, allowOverlap: Bool
  ) throws(StorageError) -> UploadSession {
    try withActiveSession(id) { current throws(StorageError) -> UploadSession in
      var session = current
      let length = Int64(bytes?.count ?? file.map { Int(FileUploadSpace.size(of: $0)) } ?? 0)
      guard offset == session.received || allowOverlap && offset < session.received else {
        throw StorageError.uploadOffsetMismatch(expected: offset, received: session.received)
      }
      let skip = session.received - offset
      guard skip < length || length == 0 else { return session }
      var written: Int64 = 0
      if let bytes {
        try space.append(Self.partName(id), bytes: bytes[Int(skip)...])
        written = length - skip
      } else if let file {
        written = try space.append(Self.partName(id), file: file, from: skip)
      }
      digests.extend(
        id, space: space, name: Self.partName(id), range: session.received..<(session.received + written))
      session.received += written
      session.touched = Timestamp.nowMilliseconds()
      let updated = session
      sessions.withLock { $0.put(updated) }
      return updated
    }
  }

  /// Runs `commit` with the received bytes (a hard link, or a copy, the store takes over) and,
  /// when it was worked out while the chunks arrived, their digest, under the session's lock; on
  /// success the session becomes final and its bytes are dropped. On failure nothing changes:
  /// the bytes stay and the session stays active.
  public func complete(
    _ id: String,
    commit: (ObjectStore.DataSource, _ digest: (md5: [UInt8], crc32c: UInt32)?) throws(StorageError) -> ObjectMetadata
  ) throws(StorageError) -> ObjectMetadata {
    try withActiveSession(id) { current throws(StorageError) -> ObjectMetadata in
      var session = current
      let digest = digests.digest(id, size: session.received)
      let object = try space.commitHandOff([Self.partName(id)], as: Self.handOffName(id)) {
        data throws(StorageError) in try commit(data, digest)
      }
      session.state = .final
      session.generation = object.generation
      session.touched = Timestamp.nowMilliseconds()
      // The final record before the bytes go: after a crash in between, start-up drops the bytes
      // of a finished session.
      try? save(session)
      space.remove(Self.partName(id))
      digests.drop(id)
      finish(session)
      return object
    }
  }

  /// Ends an active session and drops its bytes; `denied`: because security rules refused it.
  public func cancel(_ id: String, denied: Bool = false) throws(StorageError) {
    let lock = lock(id)
    lock.lock()
    defer { lock.unlock() }
    var session = try session(id)
    guard session.state == .active else { return }
    session.state = .cancelled
    session.denied = denied
    session.touched = Timestamp.nowMilliseconds()
    try? save(session)
    space.remove(Self.partName(id))
    digests.drop(id)
    finish(session)
  }

  /// Runs `body` with the session `id` under its lock, once it is known to be active.
  private func withActiveSession<Result>(
    _ id: String, _ body: (UploadSession) throws(StorageError) -> Result
  ) throws(StorageError) -> Result {
    let lock = lock(id)
    lock.lock()
    defer { lock.unlock() }
    let session = try session(id)
    guard session.state == .active else { throw StorageError.uploadNotActive(id) }
    return try body(session)
  }

  /// Records a finished session, forgetting the oldest finished ones past `maxOpen`.
  private func finish(_ session: UploadSession) {
    let forgotten: [String] = sessions.withLock { table in
      table.put(session)
      var forgotten: [String] = []
      while table.finished > options.maxOpen {
        guard let oldest = table.oldestFinished() else { break }
        table.removeValue(forKey: oldest.id)
        forgotten.append(oldest.id)
      }
      return forgotten
    }
    for id in forgotten { space.remove(Self.recordName(id)) }
  }

  private func save(_ session: UploadSession) throws(StorageError) {
    try space.replace(Self.recordName(session.id), with: session.record, temp: Self.tempName(session.id))
  }

  /// Removes a session's record, bytes and hand-off link.
  func removeEntries(_ id: String) {
    digests.drop(id)
    for name in [Self.recordName(id), Self.partName(id), Self.handOffName(id)] { space.remove(name) }
  }
}
