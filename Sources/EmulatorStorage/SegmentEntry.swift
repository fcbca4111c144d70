/// One entry of a log segment (see `SegmentLog`): a binary frame a scan can pick winners from
/// without parsing JSON.
///
///     [length u32][crc32c u32][kind u8][bucket length u16][bucket][name length u32][name]
///     [generation i64][metageneration i64][payload]
///
/// Integers are little-endian. `length` counts every byte after itself; the CRC32C covers every
/// byte after itself. Payloads: a record's metadata in the snapshot's binary encoding
/// (`IndexSnapshot.encode`: decoding it costs a few times less than parsing the JSON record, which
/// decides how fast a folder without a snapshot starts); an intent's generations (i64 each) of
/// data files the change creates or drops; a tombstone's is empty (its metageneration is
/// `Int64.max`, so it beats a record of the same generation under the plain (generation,
/// metageneration) order). An inline record's payload is `[metadata length u32][metadata][bytes]`:
/// a small object's bytes travel in every record of it (`FileBackend.inlineLimit`).
struct SegmentEntry {
  enum Kind: UInt8 {
    /// The object's metadata: this version is live unless a larger one exists.
    case record = 1
    /// The object is gone as of `generation`.
    case tombstone = 2
    /// Data files named before they are created (or dropped): start-up removes those that the
    /// winning version does not use.
    case intent = 3
    /// A record followed by the object's bytes.
    case inlineRecord = 4
  }

  /// Bytes before the payload, after the length field, for empty bucket and name.
  static let fixedBytes = 4 + 1 + 2 + 4 + 8 + 8
  /// No entry is larger (a record's JSON is bounded far below it): a larger length is damage.
  static let maximumLength = 64 << 20

  var kind: Kind
  var bucket: ArraySlice<UInt8>
  var name: ArraySlice<UInt8>
  var generation: Int64
  var metageneration: Int64
  var payload: ArraySlice<UInt8>
  /// Where the whole frame sits in the buffer it was parsed from.
  var frame: Range<Int>

  var key: ObjectPath { ObjectPath(bucket: String(decoding: bucket, as: UTF8.self), object: ObjectKey(bytes: Array(name))) }

  /// (generation, metageneration): the larger version wins (`Int64.max` for a tombstone).
  var version: ObjectVersion { ObjectVersion(generation: generation, metageneration: metageneration) }

  /// The frame of an entry.
  static func encode(
    _ kind: Kind, bucket: String, name: String, generation: Int64, metageneration: Int64, payload: [UInt8] = []
  ) -> [UInt8] {
    var frame = beginFrame(
      kind, bucket: bucket, name: name, generation: generation, metageneration: metageneration,
      payloadCapacity: payload.count)
    frame += payload
    finishFrame(&frame)
    return frame
  }

  /// A frame's bytes up to its payload, with room reserved for `payloadCapacity` more; the
  /// length and checksum are filled in by `finishFrame` once the payload is appended.
  private static func beginFrame(
    _ kind: Kind, bucket: String, name: String, generation: Int64, metageneration: Int64, payloadCapacity: Int
  ) -> [UInt8] {
    let bucketCount = bucket.utf8.count
    let nameCount = name.utf8.count
    var frame: [UInt8] = []
    frame.reserveCapacity(4 + fixedBytes + bucketCount + nameCount + payloadCapacity)
    append(UInt32(0), to: &frame)
    append(UInt32(0), to: &frame)
    frame.append(kind.rawValue)
    append(UInt16(truncatingIfNeeded: bucketCount), to: &frame)
    frame.append(contentsOf: bucket.utf8)
    append(UInt32(nameCount), to: &frame)
    frame.append(contentsOf: name.utf8)
    append(UInt64(bitPattern: generation), to: &frame)
    append(UInt64(bitPattern: metageneration), to: &frame)
    return frame
  }

  /// Fills in the length (every byte after it) and the CRC32C (every byte after it).
  private static func finishFrame(_ frame: inout [UInt8]) {
    put(UInt32(frame.count - 4), at: 0, in: &frame)
    put(checksum(frame[8...]), at: 4, in: &frame)
  }

  private static func put(_ value: UInt32, at offset: Int, in bytes: inout [UInt8]) {
    withUnsafeBytes(of: value.littleEndian) { raw in
      for position in 0..<4 { bytes[offset + position] = raw[position] }
    }
  }

  /// Room reserved for an object's encoded metadata (more is grown into).
  private static let metadataCapacity = 384

  static func record(_ object: ObjectMetadata) -> [UInt8] {
    var sink = IndexSnapshot.Sink(
      buffer: beginFrame(
        .record, bucket: object.bucket, name: object.name, generation: object.generation,
        metageneration: object.metageneration, payloadCapacity: metadataCapacity))
    sink.object(object)
    finishFrame(&sink.buffer)
    return sink.buffer
  }

  /// A record carrying the object's bytes; they are the frame's last `body.count` bytes. Built
  /// in one buffer: the metadata is encoded in place, its length filled in after.
  static func inlineRecord(_ object: ObjectMetadata, body: [UInt8]) -> [UInt8] {
    var frame = beginFrame(
      .inlineRecord, bucket: object.bucket, name: object.name, generation: object.generation,
      metageneration: object.metageneration, payloadCapacity: 4 + metadataCapacity + body.count)
    let lengthAt = frame.count
    append(UInt32(0), to: &frame)
    var sink = IndexSnapshot.Sink(buffer: frame)
    frame = []
    sink.object(object)
    frame = sink.buffer
    sink.buffer = []
    put(UInt32(frame.count - lengthAt - 4), at: lengthAt, in: &frame)
    frame += body
    finishFrame(&frame)
    return frame
  }

  /// A record's encoded metadata and (inline) bytes; nil when an inline record's metadata length
  /// does not fit its payload.
  var recordParts: (metadata: ArraySlice<UInt8>, body: ArraySlice<UInt8>?)? {
    let base = payload.startIndex
    let parts = payload.withUnsafeBytes { SegmentFrame.recordParts(kind, payload: 0..<$0.count, in: $0) }
    guard let parts else { return nil }
    let metadata = payload[(base + parts.metadata.lowerBound)..<(base + parts.metadata.upperBound)]
    return (metadata, parts.body.map { payload[(base + $0.lowerBound)..<(base + $0.upperBound)] })
  }

  static func tombstone(bucket: String, name: String, generation: Int64) -> [UInt8] {
    encode(.tombstone, bucket: bucket, name: name, generation: generation, metageneration: .max)
  }

  static func intent(bucket: String, name: String, generations: [Int64]) -> [UInt8] {
    var payload: [UInt8] = []
    for generation in generations { append(UInt64(bitPattern: generation), to: &payload) }
    return encode(.intent, bucket: bucket, name: name, generation: generations.first ?? 0, metageneration: 0, payload: payload)
  }

  /// The generations an intent names.
  var generations: [Int64] { payload.withUnsafeBytes { SegmentFrame.generations(payload: 0..<$0.count, in: $0) } }

  private static func append<Value: FixedWidthInteger>(_ value: Value, to bytes: inout [UInt8]) {
    withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
  }

  /// What `parse` found at an offset.
  enum Parsed {
    case entry(SegmentEntry)
    /// No bytes left.
    case end
    /// A length that does not fit the bytes left (or is impossible): nothing after it can be
    /// trusted. In the newest segment, a torn last append.
    case unreadable(at: Int)
    /// A frame whose length fits but whose checksum (or layout) does not match: skipped.
    case damaged(Range<Int>)
  }

  /// The frame at `offset` of `bytes`, every length checked against the bytes left first.
  static func parse(_ bytes: [UInt8], at offset: Int) -> Parsed {
    switch bytes.withUnsafeBytes({ SegmentFrame.parse($0, at: offset) }) {
    case .frame(let frame): .entry(SegmentEntry(frame, in: bytes))
    case .end: .end
    case .unreadable(let at): .unreadable(at: at)
    case .damaged(let frame): .damaged(frame)
    }
  }

  /// CRC32C of a slice, without copying it.
  static func checksum(_ bytes: ArraySlice<UInt8>) -> UInt32 {
    var crc = CRC32C()
    bytes.withUnsafeBytes { crc.update($0) }
    return crc.value
  }
}

extension SegmentEntry {
  /// The entry whose parts `frame` locates in `bytes`.
  init(_ frame: SegmentFrame, in bytes: [UInt8]) {
    self.init(
      kind: frame.kind, bucket: bytes[frame.bucket], name: bytes[frame.name], generation: frame.version.generation,
      metageneration: frame.version.metageneration, payload: bytes[frame.payload], frame: frame.frame)
  }
}

/// An object compared by the bytes of its name: as Swift `String`s, a precomposed and a
/// decomposed "é" would be one key, and replay would bring back only one of the two objects.
struct ObjectPath: Hashable, Sendable {
  var bucket: String
  var object: ObjectKey

  init(bucket: String, name: String) { self.init(bucket: bucket, object: ObjectKey(name)) }
  init(bucket: String, object: ObjectKey) {
    self.bucket = bucket
    self.object = object
  }

  var name: String { object.name }

  /// The name's bytes and the bucket's length: bucket names are few, and hashing a `String`
  /// (Unicode-aware) for each of a million entries at start-up costs more than the name's bytes.
  func hash(into hasher: inout Hasher) {
    object.hash(into: &hasher)
    hasher.combine(bucket.utf8.count)
  }

  static func == (a: ObjectPath, b: ObjectPath) -> Bool {
    a.object == b.object && a.bucket.utf8.elementsEqual(b.bucket.utf8)
  }
}

/// The order in which versions of one object win: generation, then metageneration.
public struct ObjectVersion: Comparable, Sendable {
  public var generation: Int64
  public var metageneration: Int64

  public static func < (a: ObjectVersion, b: ObjectVersion) -> Bool {
    a.generation != b.generation ? a.generation < b.generation : a.metageneration < b.metageneration
  }
}
