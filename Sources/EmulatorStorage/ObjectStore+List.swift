import EmulatorSupport

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
        var position = keys.lowerBound(ObjectKey(bytes: prefix))
        if let start { position = max(position, keys.lowerBound(start)) }
        if let resume { position = max(position, resume.position(in: keys)) }
        var entries: [Entry] = []
        entries.reserveCapacity(min(wanted, 256))
        while entries.count < wanted {
          guard position < keys.endIndex else { return (entries, true) }
          let key = keys[position]
          guard key.hasPrefix(prefix) else { return (entries, true) }
          if let end, !(key < end) { return (entries, true) }
          if !delimiter.isEmpty, let cut = Self.find(delimiter, in: key.bytes, from: prefix.count) {
            let rolled = Array(key.bytes[0..<(cut + delimiter.count)])
            let items = query.includeTrailingDelimiter && key.bytes == rolled ? versions(key) : []
            entries.append(.prefix(rolled, trailingItems: items))
            position = ListCursor.afterPrefix(rolled).position(in: keys)
            continue
          }
          let found = versions(key)
          if !found.isEmpty { entries.append(.object(key, found)) }
          position = keys.index(after: position)
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
