import EmulatorStorage
import Synchronization

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

    /// Byte for byte over both contiguous buffers (the generic `elementsEqual` over two
    /// `String.UTF8View`s cost ~700 instructions per cache hit).
    static func == (lhs: NameBytes, rhs: NameBytes) -> Bool {
      guard lhs.text.utf8.count == rhs.text.utf8.count else { return false }
      var (left, right) = (lhs.text, rhs.text)
      return left.withUTF8 { a in right.withUTF8 { b in a.elementsEqual(b) } }
    }
  }

  /// What a rendering depends on besides the metadata: the flavour, the links' base, `fields=`.
  struct Rendering: Hashable, Sendable {
    var flavour: Flavour
    var baseURL: String
    var fields: Set<String>?
  }

  /// One rendering: a class, so a hit copies one reference out of the dictionary, not the
  /// metadata's many fields.
  final class Entry: Sendable {
    let object: ObjectMetadata
    let body: [UInt8]
    let etag: String
    init(_ object: ObjectMetadata, _ body: [UInt8], _ etag: String) {
      (self.object, self.body, self.etag) = (object, body, etag)
    }
  }

  /// `Locked` (a pthread mutex) rather than `Mutex`, whose futex ThreadSanitizer cannot see; it
  /// costs a metadata GET about 400 instructions more (BENCHMARKS.md, session 7).
  private let entries = Locked<[Key: Entry]>([:])
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
    let entry = Entry(object, render(object), object.etag)
    entries.withLock { entries in
      if entries.count >= capacity { entries.removeAll(keepingCapacity: true) }
      entries[key] = entry
    }
    return (entry.body, entry.etag)
  }
}
