import EmulatorStorage

/// Rendered object resources, reused while the object is unchanged: a metadata GET then costs a
/// dictionary lookup and a metadata comparison instead of a JSON rendering (timestamps, etag,
/// percent-encoded links). An entry is valid only for metadata *equal* to what it was rendered
/// from, so any change (a PATCH, a new generation, a token) misses and re-renders.
final class RenderCache: Sendable {
  /// The object (by its name's bytes: two names that differ only in Unicode normalisation are
  /// two objects) and how it is rendered.
  struct Key: Hashable, Sendable {
    var bucket: String
    var name: NameBytes
    var rendering: Rendering

    init(bucket: String, name: String, flavour: Flavour, baseURL: String, fields: Set<String>?) {
      (self.bucket, self.name) = (bucket, NameBytes(name))
      rendering = Rendering(flavour: flavour, baseURL: baseURL, fields: fields)
    }

    /// The object alone: its renderings (a flavour and a `Host` each, few of them) share a hash
    /// and are told apart by the comparison on a hit, so no GET hashes its base URL.
    func hash(into hasher: inout Hasher) {
      hasher.combine(bucket)
      name.hash(into: &hasher)
    }
  }

  /// A name hashed and compared by its UTF-8 bytes, as `ObjectKey` is, without copying them out.
  struct NameBytes: Hashable, Sendable {
    let text: String
    init(_ text: String) { self.text = text }

    func hash(into hasher: inout Hasher) {
      var text = text
      text.withUTF8 { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
    }

    static func == (lhs: NameBytes, rhs: NameBytes) -> Bool { lhs.text.utf8.elementsEqual(rhs.text.utf8) }
  }

  /// What a rendering depends on besides the metadata: the flavour, the links' base, `fields=`.
  struct Rendering: Hashable, Sendable {
    var flavour: Flavour
    var baseURL: String
    var fields: Set<String>?
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
