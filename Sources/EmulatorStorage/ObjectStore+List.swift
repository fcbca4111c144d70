import Foundation

/// Listing: a page of a bucket in name order (UTF-8 byte order), from the sorted index.
///
/// The index lock is held only to copy a bounded chunk of entries (at most 256, or what is left
/// of the page plus one); `matchGlob` is matched outside it, so a slow filter over a large bucket
/// never stops other requests. Between chunks the walk resumes after the last name it saw, so
/// writes that land meanwhile are seen or not, as with any listing that spans changes.
extension ObjectStore {
  /// What one step of the walk found, copied out of the index.
  private enum Entry {
    /// Names rolled up by the delimiter, with the object named exactly like the prefix when
    /// `includeTrailingDelimiter` asks for it (with `versions`, each of its generations).
    case prefix([UInt8], trailingItems: [Version])
    /// The live object, or with `versions` every generation of the name, oldest first.
    case object(ObjectKey, [Version])
  }

  private typealias Version = (object: ObjectMetadata, timeDeleted: Int64?)

  /// Automaton steps a page's `matchGlob` may take (about 0.1 s on the development machine).
  /// Past it the page ends early, with a `nextPageToken` after the last name examined: GCS too
  /// may return fewer than `maxResults` entries with a token when it filters.
  static let globStepBudget = 25_000_000

  /// Lists one page: O(log n + page size) per chunk, plus the prefixes skipped; with `matchGlob`,
  /// plus the names it rejects, each matched in time linear in its length, within
  /// `globStepBudget` steps.
  public func list(bucket: String, query: ListQuery) throws(StorageError) -> ListPage {
    try list(bucket: bucket, query: query, globStepBudget: Self.globStepBudget)
  }

  func list(bucket: String, query: ListQuery, globStepBudget: Int) throws(StorageError) -> ListPage {
    let maxResults = min(max(query.maxResults, 1), 1000)
    let prefix = Array((query.prefix ?? "").utf8)
    let delimiter = Array((query.delimiter ?? "").utf8)
    var walked: ListCursor?
    if let token = query.pageToken, !token.isEmpty {
      guard let cursor = ListCursor(token: token) else {
        throw StorageError.invalid("pageToken '\(token)' is not a page token this emulator issued.")
      }
      walked = cursor
    }
    let resumed = walked
    let glob = try query.matchGlob.map { pattern throws(StorageError) in try Glob(pattern: pattern) }
    let start = query.startOffset.map { ObjectKey($0) }
    let end = query.endOffset.map { ObjectKey($0) }
    var page = ListPage()
    var count = 0
    var last: ListCursor?
    var steps = 0
    while true {
      let wanted = glob == nil ? maxResults - count + 1 : 256
      let resume = walked
      let chunk: (entries: [Entry], finished: Bool)? = index.withLock { buckets in
        guard let bucketIndex = buckets[bucket] else { return nil }
        let keys = query.versions ? bucketIndex.versionKeys() : bucketIndex.keys
        func versions(_ key: ObjectKey) -> [Version] {
          guard query.versions else { return bucketIndex.objects[key].map { [($0, nil)] } ?? [] }
          return bucketIndex.versions(of: key)
        }
        var position = BucketIndex.lowerBound(keys, ObjectKey(bytes: prefix))
        if let start { position = max(position, BucketIndex.lowerBound(keys, start)) }
        if let resume { position = max(position, resume.position(in: keys, lowerBound: BucketIndex.lowerBound)) }
        var entries: [Entry] = []
        entries.reserveCapacity(min(wanted, 256))
        while entries.count < wanted {
          guard position < keys.count else { return (entries, true) }
          let key = keys[position]
          guard key.hasPrefix(prefix) else { return (entries, true) }
          if let end, !(key < end) { return (entries, true) }
          if !delimiter.isEmpty, let cut = Self.find(delimiter, in: key.bytes, from: prefix.count) {
            let rolled = Array(key.bytes[0..<(cut + delimiter.count)])
            let items = query.includeTrailingDelimiter && key.bytes == rolled ? versions(key) : []
            entries.append(.prefix(rolled, trailingItems: items))
            position = ListCursor.afterPrefix(rolled).position(in: keys, lowerBound: BucketIndex.lowerBound)
            continue
          }
          let found = versions(key)
          if !found.isEmpty { entries.append(.object(key, found)) }
          position += 1
        }
        return (entries, false)
      }
      guard let chunk else { throw StorageError.bucketNotFound(bucket: bucket) }
      listChunkObserver.withLock { $0 }?(chunk.entries.count)
      for entry in chunk.entries {
        switch entry {
        case .prefix(let rolled, let items):
          walked = .afterPrefix(rolled)
          if count == maxResults {
            page.nextPageToken = last?.token
            return page
          }
          page.prefixes.append(String(decoding: rolled, as: UTF8.self))
          for (object, deleted) in items {
            page.items.append(object)
            if query.versions { page.timeDeleted.append(deleted) }
          }
          count += 1
          last = walked
        case .object(let key, let found):
          walked = .afterKey(key.bytes)
          if let glob, !glob.matches(key.bytes, steps: &steps) {
            if steps > globStepBudget {
              page.nextPageToken = walked?.token
              return page
            }
            continue
          }
          guard query.versions else {
            if count == maxResults {
              page.nextPageToken = last?.token
              return page
            }
            page.items.append(found[0].object)
            count += 1
            last = walked
            continue
          }
          // One item per generation: a page may end between two generations of a name.
          let after = resumed?.generation(after: key.bytes)
          for (object, deleted) in found where after.map({ object.generation > $0 }) ?? true {
            if count == maxResults {
              page.nextPageToken = last?.token
              return page
            }
            page.items.append(object)
            page.timeDeleted.append(deleted)
            count += 1
            last = .afterVersion(key.bytes, generation: object.generation)
          }
        }
      }
      if chunk.finished { return page }
    }
  }

  private static func find(_ needle: [UInt8], in haystack: [UInt8], from start: Int) -> Int? {
    guard needle.count > 0, haystack.count >= needle.count, start <= haystack.count - needle.count else { return nil }
    var index = start
    while index <= haystack.count - needle.count {
      if haystack[index] == needle[0] && haystack[index..<(index + needle.count)].elementsEqual(needle) {
        return index
      }
      index += 1
    }
    return nil
  }
}

/// List parameters (GCS objects.list).
public struct ListQuery: Sendable {
  public var prefix: String?
  public var delimiter: String?
  /// Items plus prefixes on one page, 1…1000.
  public var maxResults = 1000
  public var pageToken: String?
  /// Inclusive.
  public var startOffset: String?
  /// Exclusive.
  public var endOffset: String?
  /// Objects whose name ends in the delimiter are listed as items too.
  public var includeTrailingDelimiter = false
  public var matchGlob: String?
  /// Every generation, noncurrent ones too (`versions=true`), each counting as one item.
  public var versions = false

  public init() {}
}

public struct ListPage: Sendable {
  public var items: [ObjectMetadata] = []
  public var prefixes: [String] = []
  public var nextPageToken: String?
  /// With `versions`: for each item, when it became noncurrent (nil: live). Empty otherwise.
  public var timeDeleted: [Int64?] = []

  public init() {}
}

/// Where a page ended. Encoded as an opaque, URL-safe token (base64url of a tag byte and the name).
enum ListCursor {
  case afterKey([UInt8])
  case afterPrefix([UInt8])
  /// After this generation of this name (a listing of every generation).
  case afterVersion([UInt8], generation: Int64)

  init?(token: String) {
    var text = token.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
    while text.count % 4 != 0 { text += "=" }
    guard let data = Data(base64Encoded: text), let tag = data.first else { return nil }
    let rest = Array(data.dropFirst())
    switch tag {
    case 1: self = .afterKey(rest)
    case 2: self = .afterPrefix(rest)
    case 3:
      guard rest.count >= 8 else { return nil }
      let generation = rest.prefix(8).reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
      self = .afterVersion(Array(rest.dropFirst(8)), generation: Int64(bitPattern: generation))
    default: return nil
    }
  }

  /// With a generation cursor on `key`: the generation to resume after.
  func generation(after key: [UInt8]) -> Int64? {
    if case .afterVersion(let name, let generation) = self, name == key { return generation }
    return nil
  }

  var token: String {
    let bytes: [UInt8]
    switch self {
    case .afterKey(let key): bytes = [1] + key
    case .afterPrefix(let prefix): bytes = [2] + prefix
    case .afterVersion(let key, let generation):
      let value = UInt64(bitPattern: generation)
      bytes = [3] + (0..<8).map { UInt8(truncatingIfNeeded: value >> (56 - 8 * $0)) } + key
    }
    return Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-")
      .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
  }

  /// The index of the first key after this cursor.
  func position(in keys: [ObjectKey], lowerBound: ([ObjectKey], ObjectKey) -> Int) -> Int {
    switch self {
    case .afterKey(let key):
      let index = lowerBound(keys, ObjectKey(bytes: key))
      return index < keys.count && keys[index].bytes == key ? index + 1 : index
    case .afterVersion(let key, _):
      // The name itself again: its later generations are still to come.
      return lowerBound(keys, ObjectKey(bytes: key))
    case .afterPrefix(let prefix):
      // The smallest byte string greater than every string starting with `prefix`.
      var successor = prefix
      while let last = successor.last, last == 0xFF { successor.removeLast() }
      guard !successor.isEmpty else { return keys.count }
      successor[successor.count - 1] += 1
      return lowerBound(keys, ObjectKey(bytes: successor))
    }
  }
}
