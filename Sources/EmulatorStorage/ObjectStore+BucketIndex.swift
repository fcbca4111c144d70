extension ObjectStore {
  struct BucketIndex {
    var info: BucketInfo
    /// The live objects' names in byte order.
    var keys = SortedKeys()
    var objects = ObjectTable()
    /// Noncurrent generations (versioned buckets), oldest first per name.
    var noncurrent: [ObjectKey: [NoncurrentObject]] = [:]

    mutating func put(_ object: ObjectMetadata) {
      let key = ObjectKey(object.name)
      if objects.updateValue(object, forKey: key) == nil { keys.insert(key) }
    }

    mutating func remove(_ name: String) {
      let key = ObjectKey(name)
      guard objects.removeValue(forKey: key) != nil else { return }
      keys.remove(key)
    }
  }
}

/// A bucket's live objects by name, the shape of a dictionary, in `shardCount` shards picked by
/// a hash of the name. Each shard is a dictionary of slot numbers into one dense array of
/// metadata: a dictionary of the metadata itself keeps room for up to 2.7 values per object (its
/// table is a power of two, at most 3/4 full), which for 136-byte values is most of the index's
/// memory; here the spare places hold 4-byte slot numbers, and the array has one place per object
/// (freed places are reused).
///
/// Why shards: a dictionary grows by rehashing every entry at once, and an array by copying every
/// element, under the index lock that every request takes. In one table, the growth past 393,216
/// objects paused every request for 170 ms (measured). A shard grows alone, and holds about a
/// 256th of the objects.
struct ObjectTable {
  fileprivate struct Shard {
    var slotOf: [ObjectKey: Int32] = [:]
    var slots: [ObjectMetadata] = []
    var free: [Int32] = []
  }

  static let shardCount = 256

  /// Empty until the first object (an empty bucket allocates nothing), then `shardCount` shards.
  private var shards: [Shard] = []
  private(set) var count = 0

  /// What a freed place holds (no strings kept alive).
  fileprivate static let vacant = ObjectMetadata(bucket: "", name: "", generation: 0, size: 0, md5: nil, crc32c: 0, now: 0)

  var isEmpty: Bool { count == 0 }

  /// The shard of `key`: FNV-1a over the length and the last 32 bytes (where the names of one
  /// folder differ), then mixed. Names made to collide only gather in one shard, which then
  /// behaves like the single table; the dictionaries inside hash with a per-process seed.
  static func shard(of key: ObjectKey) -> Int {
    key.bytes.withUnsafeBufferPointer { bytes in
      var hash: UInt64 = 0xcbf2_9ce4_8422_2325 ^ UInt64(bytes.count)
      for byte in bytes[Swift.max(0, bytes.count - 32)...] {
        hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3
      }
      hash ^= hash >> 32
      hash &*= 0xd6e8_feb8_6659_fd93
      hash ^= hash >> 32
      return Int(truncatingIfNeeded: hash) & (shardCount - 1)
    }
  }

  subscript(key: ObjectKey) -> ObjectMetadata? {
    guard !shards.isEmpty else { return nil }
    let shard = Self.shard(of: key)
    guard let slot = shards[shard].slotOf[key] else { return nil }
    return shards[shard].slots[Int(slot)]
  }

  /// Room for about `count` objects in all, spread over the shards.
  mutating func reserveCapacity(_ count: Int) {
    allocateShards()
    let each = count / Self.shardCount + count / (Self.shardCount * 8) + 8
    for shard in shards.indices {
      shards[shard].slotOf.reserveCapacity(each)
      shards[shard].slots.reserveCapacity(each)
    }
  }

  private mutating func allocateShards() {
    if shards.isEmpty { shards = Array(repeating: Shard(), count: Self.shardCount) }
  }

  /// Sets the object of `key`; returns the one it replaced (nil: the name is new). One hash
  /// lookup either way.
  @discardableResult
  mutating func updateValue(_ object: ObjectMetadata, forKey key: ObjectKey) -> ObjectMetadata? {
    allocateShards()
    let replaced = shards[Self.shard(of: key)].updateValue(object, forKey: key)
    if replaced == nil { count += 1 }
    return replaced
  }

  /// Records where the object's bytes moved (compaction copied its inline record).
  mutating func moveBody(forKey key: ObjectKey, to location: BodyLocation) {
    guard !shards.isEmpty else { return }
    let shard = Self.shard(of: key)
    guard let slot = shards[shard].slotOf[key] else { return }
    shards[shard].slots[Int(slot)].body = location
  }

  @discardableResult
  mutating func removeValue(forKey key: ObjectKey) -> ObjectMetadata? {
    guard !shards.isEmpty else { return nil }
    let old = shards[Self.shard(of: key)].removeValue(forKey: key)
    if old != nil { count -= 1 }
    return old
  }
}

extension ObjectTable.Shard {
  mutating func updateValue(_ object: ObjectMetadata, forKey key: ObjectKey) -> ObjectMetadata? {
    let candidate = free.last ?? Int32(slots.count)
    var previous: Int32 = -1
    func place(_ slot: inout Int32) {
      previous = slot
      if slot < 0 { slot = candidate }
    }
    place(&slotOf[key, default: -1])
    if previous >= 0 {
      defer { slots[Int(previous)] = object }
      return slots[Int(previous)]
    }
    if free.last != nil {
      free.removeLast()
      slots[Int(candidate)] = object
    } else {
      slots.append(object)
    }
    return nil
  }

  mutating func removeValue(forKey key: ObjectKey) -> ObjectMetadata? {
    guard let slot = slotOf.removeValue(forKey: key) else { return nil }
    let old = slots[Int(slot)]
    slots[Int(slot)] = ObjectTable.vacant
    free.append(slot)
    return old
  }
}
