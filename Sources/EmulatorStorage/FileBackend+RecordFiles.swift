import EmulatorSupport

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Bucket records (`bucket.json`), and objects' commits: record entries appended to the log,
/// the commit point of a write (see `FileBackend`).
extension FileBackend {
  public func saveBucket(_ bucket: BucketInfo) throws(StorageError) {
    let dir = bucketDir(bucket.name)
    try files.makeDirectory(dir)
    try files.makeDirectory(dir + "/objects")
    var json = JSONWriter()
    json.beginObject()
    json.string("name", bucket.name)
    json.string("timeCreated", String(bucket.timeCreated))
    json.string("updated", String(bucket.updated))
    json.string("metageneration", String(bucket.metageneration))
    json.key("settings")
    bucket.settings.write(into: &json)
    json.key("access")
    bucket.access.json.write(into: &json)
    json.endObject()
    try files.writeAtomically(json.bytes, to: dir + "/bucket.json", temp: tempPath("record"))
  }

  public func saveProjects(_ state: JSONValue) throws(StorageError) {
    var json = JSONWriter()
    state.write(into: &json)
    try files.writeAtomically(json.bytes, to: root.appendingPathComponent("projects.json").path, temp: tempPath("record"))
  }

  public func loadProjects() -> JSONValue? {
    guard let data = FileManager.default.contents(atPath: root.appendingPathComponent("projects.json").path) else {
      return nil
    }
    return try? JSONValue.parse(Array(data))
  }

  public func removeBucket(_ name: String) throws(StorageError) {
    let dir = bucketDir(name)
    // Remove the record first: a bucket folder without one is skipped at start-up.
    let code = files.calls.unlink(dir + "/bucket.json")
    if code != 0 && code != ENOENT { throw Self.error("remove the bucket", code) }
    do {
      try FileManager.default.removeItem(atPath: dir)
    } catch {
      throw StorageError.io("cannot remove the bucket folder: \(ErrorText.describe(error))")
    }
    files.syncDirectory(bucketsDir.path)
  }

  public func isDamaged(bucket: String, name: String) -> Bool {
    let path = recordPath(bucket: bucket, name: name)
    return damaged.withLock { $0.contains(path) }
  }

  /// A tombstone beating the damaged record (its generation, or now if larger), then its data.
  public func removeDamaged(bucket: String, name: String) throws(StorageError) {
    let path = recordPath(bucket: bucket, name: name)
    guard damaged.withLock({ $0.contains(path) }) else { return }
    let generation = max(Timestamp.nowMicroseconds(), damagedGenerations.withLock { $0[path] ?? 0 })
    try segments.append(SegmentEntry.tombstone(bucket: bucket, name: name, generation: generation))
    let base = objectBase(bucket: bucket, name: name)
    for file in Self.names(in: base.dir) ?? [] where file.hasPrefix(base.stem + ".") && file.hasSuffix(".data") {
      unlink(base.dir + "/" + file)
    }
    damaged.withLock { _ = $0.remove(path) }
  }

  /// A new generation whose bytes are in memory and at most `inlineLimit` long is one inline
  /// record: no data file, no intent (unless it replaces a data file), one `write`. Larger ones,
  /// and staged files, get a data file (see the type's commit protocol). A metadata change is a
  /// record, inline when the object's bytes are (`carrying` holds them).
  public func commit(
    _ object: ObjectMetadata, data: StagedData?, previous: ObjectMetadata?, carrying: [UInt8]?
  ) throws(StorageError) -> ObjectMetadata {
    defer {
      if damaged.withLock({ !$0.isEmpty }) {
        let path = recordPath(object)
        damaged.withLock { _ = $0.remove(path) }
      }
    }
    var object = object
    guard let data else {
      guard object.body.isInline else {
        try segments.append(SegmentEntry.record(object))
        return object
      }
      // A record without the bytes would win over the one holding them: refused instead.
      guard let carrying, let location = try appendInline(object, body: carrying) else {
        throw StorageError.io(
          "Could not keep the object's bytes in its new record (the log is past the segments a record location can name). Nothing was changed."
        )
      }
      object.body = location
      return object
    }
    // The data file the new generation replaces (none for an inline one, or a rewrite in place).
    let replaced = previous.flatMap { !$0.body.isInline && $0.generation != object.generation ? $0 : nil }
    if let bytes = data.bytes, bytes.count <= inlineLimit {
      if let replaced {
        // Names the file to drop, so start-up removes it if a kill comes before the unlink.
        try segments.append(
          SegmentEntry.intent(bucket: object.bucket, name: object.name, generations: [object.generation, replaced.generation]),
          entries: 0, sync: false)
      }
      if let location = try appendInline(object, body: bytes) {
        object.body = location
        if let replaced { files.calls.unlink(dataPath(replaced)) }
        return object
      }
    }
    object.body = .dataFile
    var generations = [object.generation]
    if let replaced { generations.append(replaced.generation) }
    // Named before the data file exists, so start-up finds a leftover of it (not synced: a kill
    // leaves it in the file; only a power cut can lose it, and then an unnamed file is garbage,
    // not damage).
    try segments.append(
      SegmentEntry.intent(bucket: object.bucket, name: object.name, generations: generations), entries: 0, sync: false)
    let base = objectBase(object)
    let target = base.dir + "/" + base.stem + "." + String(object.generation) + ".data"
    try place(data, at: target)
    do {
      // The data file's name is durable before the record that points at it.
      files.syncDirectory(base.dir)
      try segments.append(SegmentEntry.record(object))
    } catch {
      files.calls.unlink(target)
      throw error
    }
    if let replaced { files.calls.unlink(dataPath(replaced)) }
    return object
  }

  /// Appends `object`'s record with `body` in it: the commit point. Returns where the bytes
  /// landed, or nil (nothing appended) when the log is past the sequences a location can name.
  private func appendInline(_ object: ObjectMetadata, body: [UInt8]) throws(StorageError) -> BodyLocation? {
    guard segments.namesInlineBodies else { return nil }
    var record = object
    record.body = .dataFile
    let frame = SegmentEntry.inlineRecord(record, body: body)
    let at = try segments.append(frame)
    return BodyLocation(sequence: at.sequence, offset: at.offset + frame.count - body.count)
  }

  /// The bytes a metadata change of `object` carries into its record: an inline object's
  /// (read under the object's lock, where compaction cannot move them).
  public func carriedBytes(_ object: ObjectMetadata) throws(StorageError) -> [UInt8]? {
    object.body.isInline ? try readInline(object) : nil
  }

  public func remove(_ object: ObjectMetadata) throws(StorageError) {
    try segments.append(SegmentEntry.tombstone(bucket: object.bucket, name: object.name, generation: object.generation))
    if !object.body.isInline { files.calls.unlink(dataPath(object)) }
  }

  func readBucketRecord(_ bucket: String) -> BucketInfo? {
    guard let bytes = FileManager.default.contents(atPath: bucketDir(bucket) + "/bucket.json").map(Array.init),
      let document = try? JSONValue.parse(bytes), let name = document["name"]?.stringValue,
      let created = document["timeCreated"]?.stringValue.flatMap({ Int64($0) }), name == bucket
    else { return nil }
    // Records written before buckets had settings hold only the name and creation time.
    var info = BucketInfo(name: name, timeCreated: created, settings: document["settings"])
    if let updated = document["updated"]?.stringValue.flatMap({ Int64($0) }) { info.updated = updated }
    if let metageneration = document["metageneration"]?.stringValue.flatMap({ Int64($0) }) {
      info.metageneration = metageneration
    }
    if let access = document["access"] { info.access = BucketAccess(record: access) }
    return info
  }
}
