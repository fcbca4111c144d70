/// Object versioning (a bucket with `versioning.enabled`): an overwrite or a plain delete keeps
/// the live generation as noncurrent; `generation=` reads or deletes one generation; a listing
/// with `versions` shows them all. Noncurrent generations stay until deleted by generation (no
/// lifecycle rule removes them here).
extension ObjectStore {
  /// Adds what the backend loaded to the index, oldest first per name. One whose generation is
  /// the live one was archived by a write that then did not happen (a crash in between): removed.
  static func addNoncurrent(
    _ loaded: [NoncurrentObject], to buckets: inout [String: BucketIndex], backend: any StorageBackend,
    log: @Sendable (String) -> Void
  ) {
    for version in loaded {
      let object = version.object
      guard buckets[object.bucket] != nil else { continue }
      let key = ObjectKey(object.name)
      if buckets[object.bucket]!.objects[key]?.generation == object.generation {
        try? backend.removeNoncurrent(object)
        log(
          "recovery: removed noncurrent \(object.bucket)/\(object.name)#\(object.generation), still the live generation"
        )
        continue
      }
      buckets[object.bucket]!.noncurrent[key, default: []].append(version)
    }
    for name in buckets.keys where !buckets[name]!.noncurrent.isEmpty {
      for key in buckets[name]!.noncurrent.keys {
        buckets[name]!.noncurrent[key]!.sort { $0.object.generation < $1.object.generation }
      }
    }
  }

  /// The object a request addresses: the live one when `generation` is nil or is the live one's,
  /// else the noncurrent generation of that number; nil when there is none.
  func addressed(_ bucket: String, _ name: String, generation: Int64?) throws(StorageError) -> ObjectMetadata? {
    let live = try lookup(bucket, name)
    guard let generation, live?.generation != generation else { return live }
    return noncurrentVersion(bucket: bucket, name: name, generation: generation)?.object
  }

  /// A noncurrent generation, with when it stopped being live.
  public func noncurrentVersion(bucket: String, name: String, generation: Int64) -> NoncurrentObject? {
    index.withLock { buckets in
      buckets[bucket]?.noncurrent[ObjectKey(name)]?.first { $0.object.generation == generation }
    }
  }

  /// Keeps `previous` as noncurrent when its bucket is versioned (called under the object's
  /// lock, before the write that replaces or removes it).
  func archiveIfVersioned(_ previous: ObjectMetadata?) throws(StorageError) -> NoncurrentObject? {
    guard let previous, index.withLock({ $0[previous.bucket]?.info.versioningEnabled ?? false }) else { return nil }
    var version = NoncurrentObject(object: previous, timeDeleted: Timestamp.nowMilliseconds())
    try backend.archive(version)
    // Kept in a file of its own now, whatever held the live bytes.
    version.object.body = .dataFile
    return version
  }

  /// Deletes one noncurrent generation for good (called under the object's lock).
  func deleteNoncurrent(
    bucket: String, name: String, generation: Int64, conditions: Preconditions
  ) throws(StorageError) {
    guard let version = noncurrentVersion(bucket: bucket, name: name, generation: generation) else {
      throw StorageError.objectNotFound(bucket: bucket, name: name)
    }
    try conditions.checkWrite(version.object, bucket: bucket, name: name)
    try backend.removeNoncurrent(version.object)
    index.withLock { buckets in
      let key = ObjectKey(name)
      buckets[bucket]?.noncurrent[key]?.removeAll { $0.object.generation == generation }
      if buckets[bucket]?.noncurrent[key]?.isEmpty == true { buckets[bucket]?.noncurrent[key] = nil }
    }
  }
}

extension ObjectStore.BucketIndex {
  /// Every generation of a name, oldest first, the live one last (nil `timeDeleted`).
  func versions(of key: ObjectKey) -> [(object: ObjectMetadata, timeDeleted: Int64?)] {
    var all = (noncurrent[key] ?? []).map { (object: $0.object, timeDeleted: Optional($0.timeDeleted)) }
    if let live = objects[key] { all.append((live, nil)) }
    return all
  }

  /// Names that have a live or a noncurrent generation, in order.
  func versionKeys() -> SortedKeys {
    guard !noncurrent.isEmpty else { return keys }
    return keys.merging(noncurrent.keys.filter { objects[$0] == nil }.sorted())
  }
}
