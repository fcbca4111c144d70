extension ObjectStore {
  /// Bucket PATCH (`replace` false: absent fields stay) or PUT (`replace` true: absent writable
  /// fields return to their defaults; the location cannot change). Raises the metageneration;
  /// `ifMetagenerationMatch` / `…NotMatch` are checked atomically with the change.
  public func updateBucket(
    _ name: String, resource: JSONValue, replace: Bool, ifMetagenerationMatch: Int64? = nil,
    ifMetagenerationNotMatch: Int64? = nil
  ) throws(StorageError) -> BucketInfo {
    try beginWrite()
    defer { endWrite() }
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
