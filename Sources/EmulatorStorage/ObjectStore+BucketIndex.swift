extension ObjectStore {
  struct BucketIndex {
    var info: BucketInfo
    var keys: [ObjectKey] = []
    var objects: [ObjectKey: ObjectMetadata] = [:]
    /// Noncurrent generations (versioned buckets), oldest first per name.
    var noncurrent: [ObjectKey: [NoncurrentObject]] = [:]

    mutating func put(_ object: ObjectMetadata) {
      let key = ObjectKey(object.name)
      if objects.updateValue(object, forKey: key) == nil {
        keys.insert(key, at: Self.lowerBound(keys, key))
      }
    }

    mutating func remove(_ name: String) {
      let key = ObjectKey(name)
      guard objects.removeValue(forKey: key) != nil else { return }
      let index = Self.lowerBound(keys, key)
      if index < keys.count && keys[index] == key { keys.remove(at: index) }
    }

    static func lowerBound(_ keys: [ObjectKey], _ key: ObjectKey) -> Int {
      var low = 0
      var high = keys.count
      while low < high {
        let mid = (low + high) / 2
        if keys[mid] < key { low = mid + 1 } else { high = mid }
      }
      return low
    }
  }
}
