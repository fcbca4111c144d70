extension ObjectStore {
  /// Creates a bucket; `resource` is the bucket resource a client sent (its writable fields are
  /// checked and kept, see `BucketSettings`).
  public func createBucket(_ name: String, resource: JSONValue = .object([])) throws(StorageError) -> BucketInfo {
    let phase = try beginWrite()
    defer { endWrite(phase) }
    try Naming.validateBucketName(name)
    let now = Timestamp.nowMilliseconds()
    let settings = try BucketSettings.apply(resource, to: nil, mode: .insert, now: now)
    let info = BucketInfo(name: name, timeCreated: now, settings: settings)
    let result: Result<BucketInfo, StorageError> = index.withLock { buckets in
      if buckets[name] != nil { return .failure(.bucketExists(bucket: name)) }
      do throws(StorageError) {
        try backend.saveBucket(info)
      } catch {
        return .failure(error)
      }
      buckets[name] = BucketIndex(info: info)
      return .success(info)
    }
    return try result.get()
  }

  public func bucket(_ name: String) throws(StorageError) -> BucketInfo {
    guard let info = index.withLock({ $0[name]?.info }) else { throw StorageError.bucketNotFound(bucket: name) }
    return info
  }

  public func listBuckets() -> [BucketInfo] {
    index.withLock { $0.values.map(\.info) }.sorted { $0.name < $1.name }
  }

  /// Deletes an empty bucket. A noncurrent generation keeps it from being empty, as on GCS, unless
  /// `discardingNoncurrent` (fake-gcs-server's behaviour, for suites written against it).
  public func deleteBucket(_ name: String, discardingNoncurrent: Bool = false) throws(StorageError) {
    let phase = try beginWrite()
    defer { endWrite(phase) }
    let result: Result<Void, StorageError> = index.withLock { buckets in
      guard let bucket = buckets[name] else { return .failure(.bucketNotFound(bucket: name)) }
      guard bucket.objects.isEmpty && (discardingNoncurrent || bucket.noncurrent.isEmpty) else {
        return .failure(.bucketNotEmpty(bucket: name))
      }
      do throws(StorageError) {
        for versions in bucket.noncurrent.values {
          for version in versions { try backend.removeNoncurrent(version.object) }
        }
        try backend.removeBucket(name)
      } catch {
        return .failure(error)
      }
      buckets[name] = nil
      return .success(())
    }
    try result.get()
  }

  func ensureBucket(_ name: String, create: Bool = true) throws(StorageError) {
    if index.withLock({ $0[name] != nil }) { return }
    if options.strictBuckets || !create { throw StorageError.bucketNotFound(bucket: name) }
    do {
      _ = try createBucket(name)
    } catch .bucketExists {
      return
    }
  }

  /// Bucket PATCH (`replace` false: absent fields stay) or PUT (`replace` true: absent writable
  /// fields return to their defaults; the location cannot change). Raises the metageneration;
  /// `ifMetagenerationMatch` / `…NotMatch` are checked atomically with the change.
  public func updateBucket(
    _ name: String, resource: JSONValue, replace: Bool, ifMetagenerationMatch: Int64? = nil,
    ifMetagenerationNotMatch: Int64? = nil
  ) throws(StorageError) -> BucketInfo {
    let phase = try beginWrite()
    defer { endWrite(phase) }
    let now = Timestamp.nowMilliseconds()
    let result: Result<BucketInfo, StorageError> = index.withLock { buckets in
      guard let current = buckets[name]?.info else { return .failure(.bucketNotFound(bucket: name)) }
      if let expected = ifMetagenerationMatch, expected != current.metageneration {
        return .failure(
          .conditionNotMet(
            "ifMetagenerationMatch: the bucket's metageneration is \(current.metageneration), not \(expected)."))
      }
      if let unexpected = ifMetagenerationNotMatch, unexpected == current.metageneration {
        return .failure(.conditionNotMet("ifMetagenerationNotMatch: the bucket's metageneration is \(unexpected)."))
      }
      var info = current
      do throws(StorageError) {
        info.settings = try BucketSettings.apply(
          resource, to: current.settings, mode: replace ? .replace : .patch, now: now)
        info.metageneration += 1
        info.updated = max(now, current.updated)
        try backend.saveBucket(info)
      } catch {
        return .failure(error)
      }
      buckets[name]!.info = info
      return .success(info)
    }
    return try result.get()
  }
}
