/// A bucket's names in byte order, kept in chunks of at most `chunkLimit` names. One sorted array
/// moved every later name on each insert (an upload of a name that sorts early in a bucket of
/// 100,000 moved 800 KB); here an insert moves at most one chunk, and splitting a full chunk moves
/// the short list of chunks. Positions are (chunk, offset) pairs, valid until the next change.
struct SortedKeys: BidirectionalCollection, Sendable {
  struct Index: Comparable, Sendable {
    var chunk: Int
    var offset: Int

    static func < (lhs: Index, rhs: Index) -> Bool {
      lhs.chunk != rhs.chunk ? lhs.chunk < rhs.chunk : lhs.offset < rhs.offset
    }
  }

  /// Names per chunk at most; a full chunk splits in two halves.
  static let chunkLimit = 512

  /// Never holds an empty chunk (so `endIndex` is the only position past the last name).
  private var chunks: [[ObjectKey]] = []
  private(set) var count = 0

  init() {}

  /// Names already in byte order, each once.
  init<S: Sequence>(sorted names: S) where S.Element == ObjectKey {
    for name in names { append(name) }
  }

  var startIndex: Index { Index(chunk: 0, offset: 0) }
  var endIndex: Index { Index(chunk: chunks.count, offset: 0) }
  var isEmpty: Bool { count == 0 }

  subscript(position: Index) -> ObjectKey { chunks[position.chunk][position.offset] }

  func index(after position: Index) -> Index {
    position.offset + 1 < chunks[position.chunk].count
      ? Index(chunk: position.chunk, offset: position.offset + 1)
      : Index(chunk: position.chunk + 1, offset: 0)
  }

  func index(before position: Index) -> Index {
    position.offset > 0
      ? Index(chunk: position.chunk, offset: position.offset - 1)
      : Index(chunk: position.chunk - 1, offset: chunks[position.chunk - 1].count - 1)
  }

  /// The position of the first name not less than `key` (`endIndex` when every name is less).
  func lowerBound(_ key: ObjectKey) -> Index {
    let chunk = chunkFor(key)
    guard chunk < chunks.count else { return endIndex }
    return Index(chunk: chunk, offset: Self.lowerBound(chunks[chunk], key))
  }

  /// The position just after `key` if it is here, else where it would go.
  func position(after key: ObjectKey) -> Index {
    let position = lowerBound(key)
    return position < endIndex && self[position] == key ? index(after: position) : position
  }

  func contains(_ key: ObjectKey) -> Bool {
    let position = lowerBound(key)
    return position < endIndex && self[position] == key
  }

  /// Adds `key` where it belongs; false when it is already here.
  @discardableResult
  mutating func insert(_ key: ObjectKey) -> Bool {
    guard !chunks.isEmpty else {
      chunks.append([key])
      count = 1
      return true
    }
    let chunk = Swift.min(chunkFor(key), chunks.count - 1)
    let offset = Self.lowerBound(chunks[chunk], key)
    if offset < chunks[chunk].count && chunks[chunk][offset] == key { return false }
    chunks[chunk].insert(key, at: offset)
    count += 1
    if chunks[chunk].count > Self.chunkLimit {
      let half = chunks[chunk].count / 2
      let upper = Array(chunks[chunk][half..<chunks[chunk].count])
      chunks[chunk].removeSubrange(half..<chunks[chunk].count)
      chunks.insert(upper, at: chunk + 1)
    }
    return true
  }

  /// Removes `key`; false when it was not here. A chunk left short is joined to its neighbour when
  /// they fit in one, so deletions do not leave a long list of tiny chunks.
  @discardableResult
  mutating func remove(_ key: ObjectKey) -> Bool {
    let chunk = chunkFor(key)
    guard chunk < chunks.count else { return false }
    let offset = Self.lowerBound(chunks[chunk], key)
    guard offset < chunks[chunk].count && chunks[chunk][offset] == key else { return false }
    chunks[chunk].remove(at: offset)
    count -= 1
    if chunks[chunk].isEmpty {
      chunks.remove(at: chunk)
    } else if chunks[chunk].count < Self.chunkLimit / 4, chunk + 1 < chunks.count,
      chunks[chunk].count + chunks[chunk + 1].count <= Self.chunkLimit
    {
      let next = chunks.remove(at: chunk + 1)
      chunks[chunk].append(contentsOf: next)
    } else if chunks[chunk].count < Self.chunkLimit / 4, chunk > 0,
      chunks[chunk - 1].count + chunks[chunk].count <= Self.chunkLimit
    {
      let short = chunks.remove(at: chunk)
      chunks[chunk - 1].append(contentsOf: short)
    }
    return true
  }

  /// Adds a name greater than every name here (building from names in order).
  mutating func append(_ key: ObjectKey) {
    if let last = chunks.indices.last, chunks[last].count < Self.chunkLimit {
      chunks[last].append(key)
    } else {
      var chunk: [ObjectKey] = []
      chunk.reserveCapacity(Self.chunkLimit)
      chunk.append(key)
      chunks.append(chunk)
    }
    count += 1
  }

  mutating func append<S: Sequence>(contentsOf names: S) where S.Element == ObjectKey {
    for name in names { append(name) }
  }

  /// These names and `more` (in byte order, none of them here) as one.
  func merging(_ more: [ObjectKey]) -> SortedKeys {
    guard !more.isEmpty else { return self }
    var result = SortedKeys()
    result.reserveCapacity(count + more.count)
    var right = 0
    for key in self {
      while right < more.count && more[right] < key {
        result.append(more[right])
        right += 1
      }
      result.append(key)
    }
    result.append(contentsOf: more[right...])
    return result
  }

  /// Room for `total` names in the list of chunks (the chunks themselves are sized as made).
  mutating func reserveCapacity(_ total: Int) {
    chunks.reserveCapacity(total / Self.chunkLimit + 1)
  }

  /// The first chunk whose last name is not less than `key` (`chunks.count` when there is none).
  private func chunkFor(_ key: ObjectKey) -> Int {
    var low = 0
    var high = chunks.count
    while low < high {
      let mid = (low + high) / 2
      if chunks[mid][chunks[mid].count - 1] < key { low = mid + 1 } else { high = mid }
    }
    return low
  }

  private static func lowerBound(_ keys: [ObjectKey], _ key: ObjectKey) -> Int {
    var low = 0
    var high = keys.count
    while low < high {
      let mid = (low + high) / 2
      if keys[mid] < key { low = mid + 1 } else { high = mid }
    }
    return low
  }
}
