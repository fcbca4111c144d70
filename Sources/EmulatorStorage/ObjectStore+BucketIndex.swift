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

/// A bucket's live objects by name, the shape of a dictionary: a dictionary of slot numbers into
/// one dense array of metadata. A dictionary of the metadata itself keeps room for up to 2.7
/// values per object (its table is a power of two, at most 3/4 full: a million objects get 2^21
/// places), which for 136-byte values is most of the index's memory; here the spare places hold
/// 4-byte slot numbers, and the array has one place per object (freed places are reused).
struct ObjectTable {
  private var slotOf: [ObjectKey: Int32] = [:]
  private var slots: [ObjectMetadata] = []
  private var free: [Int32] = []

  /// What a freed place holds (no strings kept alive).
  private static let vacant = ObjectMetadata(bucket: "", name: "", generation: 0, size: 0, md5: nil, crc32c: 0, now: 0)

  var count: Int { slotOf.count }
  var isEmpty: Bool { slotOf.isEmpty }

  subscript(key: ObjectKey) -> ObjectMetadata? {
    guard let slot = slotOf[key] else { return nil }
    return slots[Int(slot)]
  }

  mutating func reserveCapacity(_ count: Int) {
    slotOf.reserveCapacity(count)
    slots.reserveCapacity(count)
  }

  /// Sets the object of `key`; returns the one it replaced (nil: the name is new). One hash
  /// lookup either way.
  @discardableResult
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

  /// Records where the object's bytes moved (compaction copied its inline record).
  mutating func moveBody(forKey key: ObjectKey, to location: BodyLocation) {
    guard let slot = slotOf[key] else { return }
    slots[Int(slot)].body = location
  }

  @discardableResult
  mutating func removeValue(forKey key: ObjectKey) -> ObjectMetadata? {
    guard let slot = slotOf.removeValue(forKey: key) else { return nil }
    let old = slots[Int(slot)]
    slots[Int(slot)] = Self.vacant
    free.append(slot)
    return old
  }
}
