import EmulatorSupport

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
      if let parts = entry.recordParts, var object = try? IndexSnapshot.decode(parts.metadata, bucket: key.bucket),
        object.name.utf8.elementsEqual(entry.name), object.generation == entry.generation,
        object.metageneration == entry.metageneration,
        let body = Self.location(of: parts.body, size: object.size, sequence: sequence)
      {
        object.body = body
        winners[key] = Winner(version: entry.version, object: object)
      } else {
        winners[key] = Winner(version: entry.version, object: nil, damaged: true)
      }
    }
  }

  /// Where an inline record's bytes are (their offset in the segment is their index in the
  /// segment's bytes); a data file for a plain record; nil when the bytes do not match the size.
  private static func location(of body: ArraySlice<UInt8>?, size: Int64, sequence: UInt64) -> BodyLocation? {
    guard let body else { return .dataFile }
    guard Int64(body.count) == size else { return nil }
    return BodyLocation(sequence: sequence, offset: body.startIndex)
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
    let name = "log/" + SegmentLog.fileName(sequence)
    guard let bytes = IndexSnapshot.readFile(path) else {
      scan.problems.append("index: \(name) cannot be read; its entries are missing")
      return scan
    }
    guard bytes.starts(with: SegmentLog.header) else {
      if newest && SegmentLog.header.starts(with: bytes) {
        scan.torn = (sequence, 0)  // killed while its header was written: it holds nothing
      } else {
        scan.problems.append("index: \(name) is not a log segment; its entries are missing")
      }
      return scan
    }
    var offset = SegmentLog.header.count
    // About one record per 200 bytes (an intent and a small record are more): no rehashing.
    scan.winners.reserveCapacity(bytes.count / 200)
    var bucketBytes: ArraySlice<UInt8> = []
    var bucket = ""
    var count = 0
    reading: while true {
      switch SegmentEntry.parse(bytes, at: offset) {
      case .end:
        break reading
      case .entry(let entry):
        if !entry.bucket.elementsEqual(bucketBytes) {
          bucketBytes = entry.bucket
          bucket = String(decoding: bucketBytes, as: UTF8.self)
        }
        scan.add(entry, key: ObjectPath(bucket: bucket, object: ObjectKey(bytes: Array(entry.name))), sequence: sequence)
        if entry.kind != .intent { count += 1 }
        offset = entry.frame.upperBound
      case .unreadable(let at):
        if newest {
          scan.torn = (sequence, at)
        } else {
          scan.problems.append(
            "index: \(name) is damaged at offset \(at) (an impossible entry length); the \(bytes.count - at) bytes after it are skipped and the entries there are missing"
          )
        }
        break reading
      case .damaged(let frame):
        if newest && frame.upperBound == bytes.count {
          scan.torn = (sequence, frame.lowerBound)
          break reading
        }
        scan.problems.append(
          "index: \(name) holds a damaged entry at offset \(frame.lowerBound) (\(frame.count) bytes, checksum mismatch); it is skipped"
        )
        offset = frame.upperBound
      }
    }
    scan.counts[sequence] = count
    return scan
  }
}
