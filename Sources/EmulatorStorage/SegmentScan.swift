import EmulatorSupport

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// What start-up learns from reading segments: per object (bucket and name bytes) the entry with
/// the largest (generation, metageneration) wins, a tombstone beating a record of the same
/// generation. The rule does not depend on the order entries are read in, so segments are read
/// in parallel and merged, and a duplicate (a compaction's copy, an entry the snapshot already
/// holds) changes nothing. Only a record that beats the winner so far has its JSON parsed.
struct SegmentScan: Sendable {
  struct Winner: Sendable {
    var version: ObjectVersion
    /// nil for a tombstone, or for a record that does not decode (`damaged`).
    var object: ObjectMetadata?
    var damaged = false
  }

  var winners: [ObjectPath: Winner] = [:]
  /// The generations of data files intents and tombstones name: start-up removes those the
  /// winner does not use (leftovers of interrupted writes). `created`: the generation an intent's
  /// write creates (its first), not one it would drop. A list, not a table: most name the
  /// winner's own generation, and hashing each here would cost more than the check later.
  var dataFiles: [(key: ObjectPath, generation: Int64, created: Bool)] = []
  /// The largest generation in any entry (tombstones and intents too): it seeds the store's
  /// generations, so no new version can lose to an old tombstone.
  var highest: Int64 = 0
  /// Records and tombstones per segment read.
  var counts: [UInt64: Int] = [:]
  /// Damage found, one log line each.
  var problems: [String] = []
  /// The newest segment's torn last append: where to cut it.
  var torn: (sequence: UInt64, offset: Int)?

  /// The entries read (records and tombstones).
  var entries: Int { counts.values.reduce(0, +) }

  /// `sequence`: the segment the entry was read from (where an inline record's bytes are).
  mutating func add(_ entry: SegmentEntry, key: ObjectPath, sequence: UInt64) {
    highest = max(highest, entry.generation)
    switch entry.kind {
    case .intent:
      for generation in entry.generations {
        highest = max(highest, generation)
        dataFiles.append((key, generation, generation == entry.generation))
      }
    case .tombstone:
      dataFiles.append((key, entry.generation, false))
      consider(key, Winner(version: entry.version, object: nil))
    case .record, .inlineRecord:
      if let current = winners[key], current.version >= entry.version { return }
      // Decoded with the bucket's one string (shared by all its objects).
      if let parts = entry.recordParts,
        let object = parts.metadata.withUnsafeBytes({ metadata in
          entry.name.withUnsafeBytes { name in
            Self.object(
              metadata, body: parts.body?.indices, bucket: key.bucket, name: name, version: entry.version,
              sequence: sequence)
          }
        })
      {
        winners[key] = Winner(version: entry.version, object: object)
      } else {
        winners[key] = Winner(version: entry.version, object: nil, damaged: true)
      }
    }
  }

  /// A record's object from its encoded metadata; nil when that does not decode or does not
  /// match the entry (name, version; an inline record's bytes, `body`, against the size).
  /// `body`: where an inline record's bytes are in segment `sequence` (their offset there).
  static func object(
    _ metadata: UnsafeRawBufferPointer, body: Range<Int>?, bucket: String, name: UnsafeRawBufferPointer,
    version: ObjectVersion, sequence: UInt64
  ) -> ObjectMetadata? {
    var source = IndexSnapshot.Source(bytes: metadata, offset: 0)
    // Every byte must belong to the object (as `IndexSnapshot.decode`).
    guard var object = try? source.object(bucket: bucket), source.offset == metadata.count,
      Self.same(object.name, name), object.generation == version.generation,
      object.metageneration == version.metageneration
    else { return nil }
    if let body {
      guard Int64(body.count) == object.size, let location = BodyLocation(sequence: sequence, offset: body.lowerBound)
      else { return nil }
      object.body = location
    } else {
      object.body = .dataFile
    }
    return object
  }

  /// Whether `string`'s UTF-8 is `bytes` (one `memcmp`: comparing through `String.UTF8View` cost
  /// some 800 instructions per object at start-up).
  private static func same(_ string: String, _ bytes: UnsafeRawBufferPointer) -> Bool {
    var string = string
    return string.withUTF8 { utf8 in
      utf8.count == bytes.count && (utf8.isEmpty || memcmp(utf8.baseAddress!, bytes.baseAddress!, utf8.count) == 0)
    }
  }

  /// The data files intents and tombstones name that the winning version does not use (written
  /// before a record that never came, or dropped after one that did).
  var leftovers: [(key: ObjectPath, generation: Int64)] {
    dataFiles.compactMap { key, generation, created in
      let winner = winners[key].map { (damaged: $0.damaged, generation: $0.object?.generation) }
      return Self.isLeftover(generation, created: created, winner: winner) ? (key, generation) : nil
    }
  }

  /// Whether a data file named by an intent (`created`: the generation its write creates) or a
  /// tombstone is a leftover, given the name's winner (nil: none; else whether it is damaged and
  /// the generation of its object, nil for a tombstone). A damaged record's bytes are kept for
  /// inspection. An object with an intent but no record or tombstone in the segments read is one
  /// whose write was interrupted before its record: its live version, if any, is the
  /// snapshot's, and that is the generation the intent names as the one it would drop. Only the
  /// file the write created goes then (a kill mid-overwrite once removed the live bytes here:
  /// the crash test's "TORN" and "LOST").
  static func isLeftover(_ generation: Int64, created: Bool, winner: (damaged: Bool, generation: Int64?)?) -> Bool {
    guard let winner else { return created }
    return !winner.damaged && winner.generation != generation
  }

  private mutating func consider(_ key: ObjectPath, _ winner: Winner) {
    if let current = winners[key], current.version >= winner.version { return }
    winners[key] = winner
  }

  mutating func merge(_ other: SegmentScan) {
    if winners.isEmpty {
      winners = other.winners
    } else {
      winners.reserveCapacity(winners.count + other.winners.count)
      for (key, winner) in other.winners { consider(key, winner) }
    }
    dataFiles += other.dataFiles
    highest = max(highest, other.highest)
    counts.merge(other.counts) { $0 + $1 }
    problems += other.problems
    if let torn = other.torn { self.torn = torn }
  }

  /// Reads the segments `sequences` of `directory` (the last one is the newest: a damaged tail
  /// there is a torn append), several at once.
  static func scan(directory: String, sequences: [UInt64], newest: UInt64?) -> SegmentScan {
    let threads = min(sequences.count, 4)
    let results = Locked<[Int: SegmentScan]>([:])
    FileBackend.onThreads(threads) { worker in
      for index in stride(from: worker, to: sequences.count, by: threads) {
        let sequence = sequences[index]
        let scanned = scan(
          path: directory + "/" + SegmentLog.fileName(sequence), sequence: sequence, newest: sequence == newest)
        results.withLock { $0[index] = scanned }
      }
    }
    var merged = SegmentScan()
    let scanned = results.withLock { $0 }
    for index in sequences.indices {
      if let part = scanned[index] { merged.merge(part) }
    }
    return merged
  }

  /// Reads one segment.
  static func scan(path: String, sequence: UInt64, newest: Bool) -> SegmentScan {
    var scan = SegmentScan()
    scan.counts[sequence] = 0
    guard let bytes = IndexSnapshot.readFile(path) else {
      scan.problems.append(unreadable(sequence))
      return scan
    }
    // About one record per 200 bytes (an intent and a small record are more): no rehashing.
    scan.winners.reserveCapacity(bytes.count / 200)
    var bucketBytes: ArraySlice<UInt8> = []
    var bucket = ""
    var count = 0
    var problems: [String] = []
    var torn: (sequence: UInt64, offset: Int)?
    bytes.withUnsafeBytes { raw in
      frames(of: raw, sequence: sequence, newest: newest, problems: &problems, torn: &torn) { frame in
        let entry = SegmentEntry(frame, in: bytes)
        if !entry.bucket.elementsEqual(bucketBytes) {
          bucketBytes = entry.bucket
          bucket = String(decoding: bucketBytes, as: UTF8.self)
        }
        scan.add(entry, key: ObjectPath(bucket: bucket, object: ObjectKey(bytes: Array(entry.name))), sequence: sequence)
        if entry.kind != .intent { count += 1 }
      }
    }
    scan.counts[sequence] = count
    scan.problems = problems
    scan.torn = torn
    return scan
  }

  /// The log line for a segment that cannot be read.
  static func unreadable(_ sequence: UInt64) -> String {
    "index: log/\(SegmentLog.fileName(sequence)) cannot be read; its entries are missing"
  }

  /// Calls `body` with each intact frame of the segment `bytes`, in order. Damage goes to
  /// `problems` (a damaged frame is skipped; an impossible length ends the segment); in the
  /// newest segment, damage at its end is a torn last append instead: where to cut it, in `torn`.
  static func frames(
    of bytes: UnsafeRawBufferPointer, sequence: UInt64, newest: Bool, problems: inout [String],
    torn: inout (sequence: UInt64, offset: Int)?, _ body: (SegmentFrame) -> Void
  ) {
    let name = "log/" + SegmentLog.fileName(sequence)
    guard bytes.starts(with: SegmentLog.header) else {
      if newest && SegmentLog.header.starts(with: bytes) {
        torn = (sequence, 0)  // killed while its header was written: it holds nothing
      } else {
        problems.append("index: \(name) is not a log segment; its entries are missing")
      }
      return
    }
    var offset = SegmentLog.header.count
    reading: while true {
      switch SegmentFrame.parse(bytes, at: offset) {
      case .end:
        break reading
      case .frame(let frame):
        body(frame)
        offset = frame.frame.upperBound
      case .unreadable(let at):
        if newest {
          torn = (sequence, at)
        } else {
          problems.append(
            "index: \(name) is damaged at offset \(at) (an impossible entry length); the \(bytes.count - at) bytes after it are skipped and the entries there are missing"
          )
        }
        break reading
      case .damaged(let frame):
        if newest && frame.upperBound == bytes.count {
          torn = (sequence, frame.lowerBound)
          break reading
        }
        problems.append(
          "index: \(name) holds a damaged entry at offset \(frame.lowerBound) (\(frame.count) bytes, checksum mismatch); it is skipped"
        )
        offset = frame.upperBound
      }
    }
  }
}
