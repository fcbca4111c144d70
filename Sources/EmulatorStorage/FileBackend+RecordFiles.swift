import EmulatorSupport

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// The record files: `bucket.json` and each object's `<sha>.json`, whose rename is a write's
/// commit point.
extension FileBackend {
  public func saveBucket(_ bucket: BucketInfo) throws(StorageError) {
    try journal(IndexJournal.bucketLine(bucket.name))
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
    try journal(IndexJournal.bucketLine(name))
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
    let path = recordPath(
      ObjectMetadata(bucket: bucket, name: name, generation: 0, size: 0, md5: nil, crc32c: 0, now: 0))
    return damaged.withLock { $0.contains(path) }
  }

  public func removeDamaged(bucket: String, name: String) throws(StorageError) {
    let probe = ObjectMetadata(bucket: bucket, name: name, generation: 0, size: 0, md5: nil, crc32c: 0, now: 0)
    let path = recordPath(probe)
    guard damaged.withLock({ $0.contains(path) }) else { return }
    try journal(IndexJournal.objectLine(bucket: bucket, name: name, generations: nil))
    let base = objectBase(probe)
    guard SystemCall.retrying({ unlink(path) }) == 0 || errno == ENOENT else { throw Self.error("delete the damaged object", errno) }
    for file in (try? FileManager.default.contentsOfDirectory(atPath: base.dir)) ?? []
    where file.hasPrefix(base.stem + ".") && file.hasSuffix(".data") {
      unlink(base.dir + "/" + file)
    }
    damaged.withLock { _ = $0.remove(path) }
  }

  public func commit(_ object: ObjectMetadata, data: StagedData?, previous: ObjectMetadata?) throws(StorageError) {
    let base = objectBase(object)
    let record = base.dir + "/" + base.stem + ".json"
    defer { damaged.withLock { if !$0.isEmpty { _ = $0.remove(record) } } }
    guard let data else {
      // A metadata change: the record exists (unless removed by hand: then it is written anew).
      try journal(IndexJournal.objectLine(bucket: object.bucket, name: object.name, generations: []), once: true)
      try files.writeAtomically(object.recordJSON(), to: record, temp: tempPath("record"), replacing: true)
      return
    }
    var generations = [object.generation]
    if let previous, previous.generation != object.generation { generations.append(previous.generation) }
    // Named in the journal before the data file exists, so start-up finds a leftover of it.
    try journal(IndexJournal.objectLine(bucket: object.bucket, name: object.name, generations: generations))
    let target = base.dir + "/" + base.stem + "." + String(object.generation) + ".data"
    try place(data, at: target)
    do {
      // The data file's name is durable before the record that points at it.
      files.syncDirectory(base.dir)
      try files.writeAtomically(object.recordJSON(), to: record, temp: tempPath("record"))
    } catch {
      files.calls.unlink(target)
      throw error
    }
    if let previous, previous.generation != object.generation { files.calls.unlink(dataPath(previous)) }
  }

  public func remove(_ object: ObjectMetadata) throws(StorageError) {
    try journal(IndexJournal.objectLine(bucket: object.bucket, name: object.name, generations: [object.generation]))
    let record = recordPath(object)
    let code = files.calls.unlink(record)
    guard code == 0 || code == ENOENT else { throw Self.error("delete the object", code) }
    files.syncDirectory(PathText.parent(record))
    files.calls.unlink(dataPath(object))
  }
}
