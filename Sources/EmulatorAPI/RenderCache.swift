import EmulatorStorage

/// Rendered object resources, reused while the object is unchanged: a metadata GET then costs a
/// dictionary lookup and a metadata comparison instead of a JSON rendering (timestamps, etag,
/// percent-encoded links). An entry is valid only for metadata *equal* to what it was rendered
/// from, so any change (a PATCH, a new generation, a token) misses and re-renders.
final class RenderCache: Sendable {
  struct Key: Hashable, Sendable {
    var bucket: String
    /// By its bytes: two names that differ only in Unicode normalisation are two objects.
    var name: ObjectKey
    var flavour: Flavour
    var baseURL: String
    var fields: Set<String>?

    init(bucket: String, name: String, flavour: Flavour, baseURL: String, fields: Set<String>?) {
      self.bucket = bucket
      self.name = ObjectKey(name)
      self.flavour = flavour
      self.baseURL = baseURL
      self.fields = fields
    }
  }

  private let entries = Locked<[Key: (object: ObjectMetadata, body: [UInt8], etag: String)]>([:])
  /// Past this many entries the cache starts over (a bound on memory, not an LRU).
  let capacity: Int

  init(capacity: Int = 4096) {
    self.capacity = capacity
  }

  /// The rendered body and the ETag (a base64 encoding, also worth keeping) of `object`.
  func body(
    for object: ObjectMetadata, key: Key, render: (ObjectMetadata) -> [UInt8]
  ) -> (body: [UInt8], etag: String) {
    if let cached = entries.withLock({ $0[key] }), cached.object == object {
      return (cached.body, cached.etag)
    }
    let body = render(object)
    let etag = object.etag
    entries.withLock { entries in
      if entries.count >= capacity { entries.removeAll(keepingCapacity: true) }
      entries[key] = (object, body, etag)
    }
    return (body, etag)
  }
}
