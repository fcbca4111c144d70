/// Changes to what a bucket keeps besides its settings (`BucketAccess`: ACLs, IAM policy,
/// notification configurations), checked and saved under the index lock like a bucket PATCH.
extension ObjectStore {
  /// Runs `change` on the bucket and saves the result if it changed anything; `bumpsMetageneration`
  /// then raises the bucket's metageneration (ACL changes do, as on GCS). Nothing is saved when
  /// `change` throws or changes nothing.
  public func changeBucket<T>(
    _ name: String, bumpsMetageneration: Bool, _ change: (inout BucketInfo) throws(StorageError) -> T
  ) throws(StorageError) -> (BucketInfo, T) {
    let phase = try beginWrite()
    defer { endWrite(phase) }
    let now = Timestamp.nowMilliseconds()
    let result: Result<(BucketInfo, T), StorageError> = index.withLock { buckets in
      guard let current = buckets[name]?.info else { return .failure(.bucketNotFound(bucket: name)) }
      var info = current
      do throws(StorageError) {
        let value = try change(&info)
        guard info != current else { return .success((current, value)) }
        if bumpsMetageneration {
          info.metageneration += 1
          info.updated = max(now, current.updated)
        }
        try backend.saveBucket(info)
        buckets[name]!.info = info
        return .success((info, value))
      } catch {
        return .failure(error)
      }
    }
    return try result.get()
  }

  /// The project-level state saved last (`StorageBackend.saveProjects`); nil when none.
  public func projectState() -> JSONValue? { backend.loadProjects() }

  /// Saves the project-level state (the caller serialises its changes).
  public func saveProjectState(_ state: JSONValue) throws(StorageError) {
    let phase = try beginWrite()
    defer { endWrite(phase) }
    try backend.saveProjects(state)
  }
}
