import EmulatorSupport

#if canImport(Glibc)
  import Glibc
#endif

/// Whole-store operations for the emulator's tooling: counting, walking every object, emptying
/// the store (`POST /internal/reset`) and restoring objects with their metadata as exported
/// (`--import`). None of these is on a request's hot path.
extension ObjectStore {
  /// Objects in all buckets (live generations).
  public var objectCount: Int {
    index.withLock { buckets in buckets.values.reduce(0) { $0 + $1.objects.count } }
  }

  /// Up to `limit` objects of `bucket` in name order, strictly after `after` (from the start when
  /// nil); empty at the end or when the bucket does not exist.
  public func objects(in bucket: String, after: String?, limit: Int) -> [ObjectMetadata] {
    index.withLock { buckets -> [ObjectMetadata] in
      guard let bucketIndex = buckets[bucket] else { return [] }
      let keys = bucketIndex.keys
      var position = after.map { keys.position(after: ObjectKey($0)) } ?? keys.startIndex
      var found: [ObjectMetadata] = []
      while found.count < limit && position < keys.endIndex {
        if let object = bucketIndex.objects[keys[position]] { found.append(object) }
        position = keys.index(after: position)
      }
      return found
    }
  }

  /// Deletes every object (noncurrent generations of versioned buckets too) and every bucket,
  /// one at a time through the ordinary delete of a generation (so each is logged, nothing is
  /// archived, and a crash in the middle leaves a consistent, partly emptied store). Writes
  /// racing with it may leave their objects behind. Returns the live objects and buckets removed.
  @discardableResult
  public func removeAll() throws(StorageError) -> (objects: Int, buckets: Int) {
    var objectsRemoved = 0
    var bucketsRemoved = 0
    for bucket in listBuckets() {
      while true {
        let page = objects(in: bucket.name, after: nil, limit: 1000)
        if page.isEmpty { break }
        for object in page {
          do {
            try delete(bucket: bucket.name, name: object.name, conditions: Preconditions(generation: object.generation))
            objectsRemoved += 1
          } catch .objectNotFound {
            continue
          }
        }
      }
      let versions = index.withLock { buckets -> [(String, Int64)] in
        (buckets[bucket.name]?.noncurrent ?? [:]).flatMap { key, list in list.map { (key.name, $0.object.generation) } }
      }
      for (name, generation) in versions {
        do {
          try delete(bucket: bucket.name, name: name, conditions: Preconditions(generation: generation))
        } catch .objectNotFound {
          continue
        }
      }
      do {
        try deleteBucket(bucket.name)
        bucketsRemoved += 1
      } catch .bucketNotFound {
        continue
      } catch .bucketNotEmpty {
        // A write raced with the reset; what it wrote stays.
        continue
      }
    }
    return (objectsRemoved, bucketsRemoved)
  }

  /// Stores an object with the metadata it had elsewhere (an import): generation,
  /// metageneration, times, tokens and custom metadata are kept; size and hashes are computed
  /// from the bytes, which are the truth. The generation is kept only when it is newer than the
  /// live one (generations of one name only ever grow); otherwise a new one is given. Creates the
  /// bucket when missing (even with strict buckets: an import names its buckets).
  public func restore(_ template: ObjectMetadata, source: DataSource) throws(StorageError) -> ObjectMetadata {
    let (staged, digest) = try stage(source, bucket: template.bucket, name: template.name)
    let phase = try beginWrite()
    defer { endWrite(phase) }
    do throws(StorageError) {
      if index.withLock({ $0[template.bucket] == nil }) {
        do {
          _ = try createBucket(template.bucket)
        } catch .bucketExists {}
      }
      return try withLiveObject(template.bucket, template.name) { previous throws(StorageError) -> ObjectMetadata in
        var object = template
        object.size = staged.size
        object.md5 = template.componentCount != nil && template.md5 == nil ? nil : digest.md5
        object.crc32c = digest.crc32c
        object.metageneration = max(template.metageneration, 1)
        if object.generation <= 0 || (previous.map { object.generation <= $0.generation } ?? false) {
          object.generation = nextGeneration()
        } else {
          // Later writes must still get newer generations.
          var last = lastGeneration.load(ordering: .relaxed)
          while last < object.generation {
            let (exchanged, seen) = lastGeneration.compareExchange(
              expected: last, desired: object.generation, ordering: .relaxed)
            if exchanged { break }
            last = seen
          }
        }
        if object.contentType?.isEmpty ?? true { object.contentType = "application/octet-stream" }
        return try commitGeneration(object, staged: staged, previous: previous)
      }
    } catch {
      backend.discard(staged)
      throw error
    }
  }
}
