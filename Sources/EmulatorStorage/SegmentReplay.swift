import EmulatorSupport

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Start-up without a usable snapshot: every log segment, read in passes that keep the work per
/// entry small (a million objects).
///
/// 1. `read`: the segments are mapped into memory and read on several threads; each entry
///    leaves one fixed-size `Slot` (a hash of its bucket and name, its version, where it is) and
///    no copy of anything.
/// 2. `pick`: the winner per name, from the slots in the order they were read, through a table of
///    slot numbers; where two hashes agree the names' bytes are compared in the mapped segments,
///    so a hash collision never merges two objects. The rule is `SegmentScan`'s: the largest
///    (generation, metageneration) wins, a tombstone beating a record of its generation; of
///    equal versions the first read (lowest sequence, then offset).
/// 3. `ordered`: the live winners by bucket, sorted by their names' bytes.
/// 4. `decode`: only the winners' metadata is decoded, in key order, in batches the store
///    appends to its tables while the next ones are decoded.
struct SegmentReplay: @unchecked Sendable {
  /// One entry of a segment.
  struct Slot {
    var hash: Int
    var generation: Int64
    var metageneration: Int64
    /// Where its frame starts.
    var offset: Int
    /// Its segment's position in `sequences`.
    var segment: Int32
    var kind: SegmentEntry.Kind

    var version: ObjectVersion { ObjectVersion(generation: generation, metageneration: metageneration) }
  }

  /// A live winner: its slot and its name's bytes (in a mapped segment). `prefix`: the name's
  /// first 16 bytes (zeros after its end) as two big-endian integers, so most comparisons of
  /// two names are two integer comparisons.
  struct Named: @unchecked Sendable {
    var prefix: (UInt64, UInt64)
    var name: UnsafeRawBufferPointer
    var slot: Int32

    init(name: UnsafeRawBufferPointer, slot: Int32) {
      var prefix: (UInt64, UInt64) = (0, 0)
      withUnsafeMutableBytes(of: &prefix) { raw in
        raw.copyMemory(from: UnsafeRawBufferPointer(rebasing: name.prefix(16)))
      }
      self.prefix = (UInt64(bigEndian: prefix.0), UInt64(bigEndian: prefix.1))
      self.name = name
      self.slot = slot
    }

    /// Byte order of the names (as `ObjectKey`'s): equal prefixes mean equal first 16 bytes,
    /// zeros after the end of the shorter one.
    static func precedes(_ a: Named, _ b: Named) -> Bool {
      if a.prefix != b.prefix { return a.prefix < b.prefix }
      let common = min(a.name.count, b.name.count)
      let order = common <= 16 ? 0 : memcmp(a.name.baseAddress! + 16, b.name.baseAddress! + 16, common - 16)
      return order != 0 ? order < 0 : a.name.count < b.name.count
    }
  }

  let sequences: [UInt64]
  /// nil where a segment cannot be read.
  let files: [MappedFile?]
  /// Their bytes (empty where nil), kept apart so that reading one retains no file.
  private let bytes: [UnsafeRawBufferPointer]
  /// Every record, tombstone and intent, segment by segment in the order of `sequences`.
  private(set) var slots: [Slot] = []
  /// The largest generation in any entry (tombstones and intents too).
  private(set) var highest: Int64 = 0
  /// Records and tombstones per segment read.
  private(set) var counts: [UInt64: Int] = [:]
  private(set) var problems: [String] = []
  /// The newest segment's torn last append: where to cut it.
  private(set) var torn: (sequence: UInt64, offset: Int)?
  /// Per slot number + 1 (0: empty), the winner of a name; sized by `pick`.
  private var table: [Int32] = []

  /// Records and tombstones read.
  var entries: Int { counts.values.reduce(0, +) }

  /// Reads the segments `sequences` of `directory` (the last one is the newest: a damaged tail
  /// there is a torn append) and picks the winners.
  static func read(directory: String, sequences: [UInt64], newest: UInt64?) -> SegmentReplay {
    let threads = min(sequences.count, 4)
    let parts = Locked<[Int: (file: MappedFile?, part: Part)]>([:])
    FileBackend.onThreads(threads) { worker in
      for index in stride(from: worker, to: sequences.count, by: threads) {
        let sequence = sequences[index]
        let file = MappedFile(path: directory + "/" + SegmentLog.fileName(sequence))
        let part = Part(file, segment: Int32(index), sequence: sequence, newest: sequence == newest)
        parts.withLock { $0[index] = (file, part) }
      }
    }
    let read = parts.withLock { $0 }
    let files = sequences.indices.map { read[$0]?.file }
    var replay = SegmentReplay(
      sequences: sequences, files: files,
      bytes: files.map { $0?.bytes ?? UnsafeRawBufferPointer(start: nil, count: 0) })
    replay.slots.reserveCapacity(read.values.reduce(0) { $0 + $1.part.slots.count })
    for index in sequences.indices {
      guard let part = read[index]?.part else { continue }
      replay.slots += part.slots
      replay.highest = max(replay.highest, part.highest)
      replay.counts[sequences[index]] = part.count
      replay.problems += part.problems
      if let torn = part.torn { replay.torn = torn }
    }
    replay.pick()
    return replay
  }

  /// What one thread read from one segment.
  private struct Part {
    var slots: [Slot] = []
    var highest: Int64 = 0
    var count = 0
    var problems: [String] = []
    var torn: (sequence: UInt64, offset: Int)?

    init(_ file: MappedFile?, segment: Int32, sequence: UInt64, newest: Bool) {
      guard let file else {
        problems.append(SegmentScan.unreadable(sequence))
        return
      }
      let bytes = file.bytes
      // About one entry per 200 bytes.
      slots.reserveCapacity(bytes.count / 200)
      SegmentScan.frames(of: bytes, sequence: sequence, newest: newest, problems: &problems, torn: &torn) { frame in
        highest = max(highest, frame.generation)
        if frame.kind == .intent {
          for generation in SegmentFrame.generations(payload: frame.payload, in: bytes) {
            highest = max(highest, generation)
          }
        } else {
          count += 1
        }
        slots.append(
          Slot(
            hash: SegmentReplay.hash(bucket: frame.bucket, name: frame.name, in: bytes), generation: frame.generation,
            metageneration: frame.version.metageneration, offset: frame.frame.lowerBound, segment: segment, kind: frame.kind))
      }
    }
  }

  private static func hash(bucket: Range<Int>, name: Range<Int>, in bytes: UnsafeRawBufferPointer) -> Int {
    var hasher = Hasher()
    hasher.combine(bytes: UnsafeRawBufferPointer(rebasing: bytes[name]))
    hasher.combine(bytes: UnsafeRawBufferPointer(rebasing: bytes[bucket]))
    return hasher.finalize()
  }

  /// The frame of a slot (read again: it was checked by `read`).
  func frame(_ slot: Slot) -> (frame: SegmentFrame, bytes: UnsafeRawBufferPointer) {
    let bytes = bytes[Int(slot.segment)]
    guard case .frame(let frame) = SegmentFrame.parse(bytes, at: slot.offset, trusted: true) else {
      preconditionFailure("a frame read before is gone")
    }
    return (frame, bytes)
  }

  /// The bucket's and the name's bytes of a slot.
  func names(_ slot: Slot) -> (bucket: UnsafeRawBufferPointer, name: UnsafeRawBufferPointer) {
    SegmentFrame.names(at: slot.offset, in: bytes[Int(slot.segment)])
  }

  private func sameName(_ a: Slot, _ b: Slot) -> Bool {
    guard a.hash == b.hash else { return false }
    let (first, second) = (names(a), names(b))
    return first.name.elementsEqual(second.name) && first.bucket.elementsEqual(second.bucket)
  }

  /// Fills `table` with each name's winner (intents never win).
  private mutating func pick() {
    var capacity = 16
    while capacity < 2 * slots.count { capacity <<= 1 }
    var table = [Int32](repeating: 0, count: capacity)
    let mask = capacity - 1
    for number in slots.indices where slots[number].kind != .intent {
      let slot = slots[number]
      var position = slot.hash & mask
      while true {
        let held = Int(table[position])
        if held == 0 {
          table[position] = Int32(number + 1)
          break
        }
        if sameName(slots[held - 1], slot) {
          if slots[held - 1].version < slot.version { table[position] = Int32(number + 1) }
          break
        }
        position = (position + 1) & mask
      }
    }
    self.table = table
  }

  /// The number of the slot that won for slot `number`'s name, if any.
  func winner(of number: Int) -> Int? {
    let slot = slots[number]
    let mask = table.count - 1
    var position = slot.hash & mask
    while true {
      let held = Int(table[position])
      if held == 0 { return nil }
      if sameName(slots[held - 1], slot) { return held - 1 }
      position = (position + 1) & mask
    }
  }

  /// The live winners (records), by bucket (in bucket name order), each in key order (a bucket
  /// of more than `parallelAbove` sorted in two halves on two threads).
  func ordered(parallelAbove: Int = 65_536) -> [(bucket: String, objects: [Named])] {
    var groups: [(bucket: UnsafeRawBufferPointer, objects: [Named])] = []
    var group = 0
    // In the order the slots were read (the segments' order in memory), not the table's.
    var won = [Bool](repeating: false, count: slots.count)
    for held in table where held != 0 { won[Int(held) - 1] = true }
    for number in slots.indices where won[number] && slots[number].kind != .tombstone {
      let (bucket, name) = names(slots[number])
      if group == groups.count || !groups[group].bucket.elementsEqual(bucket) {
        group = groups.firstIndex { $0.bucket.elementsEqual(bucket) } ?? groups.count
        if group == groups.count { groups.append((bucket, [])) }
      }
      groups[group].objects.append(Named(name: name, slot: Int32(number)))
    }
    var ordered = groups.map { (bucket: String(decoding: $0.bucket, as: UTF8.self), objects: $0.objects) }
    ordered.sort { $0.bucket < $1.bucket }
    for index in ordered.indices {
      ordered[index].objects = Self.sorted(ordered[index].objects, parallelAbove: parallelAbove)
    }
    return ordered
  }

  /// `names` sorted, a large array in two halves on two threads, then merged.
  private static func sorted(_ names: [Named], parallelAbove: Int) -> [Named] {
    guard names.count > parallelAbove else { return names.sorted(by: Named.precedes) }
    let middle = names.count / 2
    let halves = Locked<[[Named]]>([[], []])
    FileBackend.onThreads(2) { half in
      let sorted = (half == 0 ? names[..<middle] : names[middle...]).sorted(by: Named.precedes)
      halves.withLock { $0[half] = sorted }
    }
    let (low, high) = halves.withLock { ($0[0], $0[1]) }
    var merged: [Named] = []
    merged.reserveCapacity(names.count)
    var (i, j) = (0, 0)
    while i < low.count && j < high.count {
      if Named.precedes(high[j], low[i]) {
        merged.append(high[j])
        j += 1
      } else {
        merged.append(low[i])
        i += 1
      }
    }
    merged += low[i...]
    merged += high[j...]
    return merged
  }

  /// The object of a winning record; nil when it is damaged (its metadata does not decode or does
  /// not match the entry).
  func object(_ named: Named, bucket: String) -> ObjectMetadata? {
    let slot = slots[Int(named.slot)]
    let (frame, bytes) = frame(slot)
    guard let parts = SegmentFrame.recordParts(frame.kind, payload: frame.payload, in: bytes) else { return nil }
    return SegmentScan.object(
      UnsafeRawBufferPointer(rebasing: bytes[parts.metadata]), body: parts.body, bucket: bucket, name: named.name,
      version: slot.version, sequence: sequences[Int(slot.segment)])
  }

  /// The data files intents and tombstones name that their name's winner does not use
  /// (`SegmentScan.isLeftover`); `damaged`: the slot numbers of winners found damaged.
  func leftovers(damaged: Set<Int32>) -> [(key: ObjectPath, generation: Int64)] {
    var leftovers: [(key: ObjectPath, generation: Int64)] = []
    for number in slots.indices where slots[number].kind == .intent || slots[number].kind == .tombstone {
      let slot = slots[number]
      let named: [(generation: Int64, created: Bool)]
      if slot.kind == .intent {
        let (frame, bytes) = frame(slot)
        named = SegmentFrame.generations(payload: frame.payload, in: bytes).map { ($0, $0 == slot.generation) }
      } else {
        named = [(slot.generation, false)]
      }
      let winner = self.winner(of: number).map { won in
        (damaged: damaged.contains(Int32(won)), generation: slots[won].kind == .tombstone ? nil : slots[won].generation)
      }
      for (generation, created) in named where SegmentScan.isLeftover(generation, created: created, winner: winner) {
        let (bucket, name) = names(slot)
        leftovers.append(
          (ObjectPath(bucket: String(decoding: bucket, as: UTF8.self), object: ObjectKey(bytes: Array(name))), generation))
      }
    }
    return leftovers
  }
}
