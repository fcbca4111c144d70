import EmulatorSupport

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// A binary copy of the whole index (`index.snapshot` in the data folder), so start-up reads one
/// file instead of every log segment. It covers the log up to a position: its *epoch* is the
/// sequence of the first segment it may not hold (start-up replays that segment and every later
/// one over it). Anything unexpected (a bad checksum, a truncated file, another version) falls
/// back to reading every segment.
///
/// Layout: `magic`, epoch (u64), the highest generation the store had made (u64), the older
/// segments and their record counts (a count, then sequence u64 and count varint each), bucket
/// count, per bucket its name, creation time and object count, the damaged record paths, then
/// every bucket's objects (in bucket, then name order, each with where its bytes are: a
/// `BodyLocation`), then a CRC32C of everything before it. Integers are little-endian; strings a varint length and
/// UTF-8 bytes. The header comes first so the objects can be decoded on one thread while another
/// indexes them (`ObjectBatches`).
enum IndexSnapshot {
  static let magic = Array("storage-emulator index snapshot 5\n".utf8)

  struct Contents {
    var epoch: UInt64
    var state: LoadedState
    var damaged: [String]
  }

  struct Damaged: Error, CustomStringConvertible {
    var description: String
  }

  /// Writes the snapshot to `path` (the caller renames it into place).
  static func write<Objects: Collection<ObjectMetadata>>(
    epoch: UInt64, highest: Int64 = 0, segments: [(sequence: UInt64, entries: Int)] = [],
    buckets: [(info: BucketInfo, objects: Objects)], damaged: [String], to path: String, sync: Bool
  ) throws(StorageError) {
    let fd = SystemCall.retrying { Glibc.open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644) }
    guard fd >= 0 else { throw FileBackend.error("write the index snapshot", errno) }
    defer { close(fd) }
    var sink = Sink(fd: fd)
    sink.bytes(magic)
    sink.u64(epoch)
    sink.u64(UInt64(bitPattern: highest))
    sink.varint(UInt64(segments.count))
    for segment in segments {
      sink.u64(segment.sequence)
      sink.varint(UInt64(segment.entries))
    }
    sink.varint(UInt64(buckets.count))
    for bucket in buckets {
      sink.string(bucket.info.name)
      sink.u64(UInt64(bitPattern: bucket.info.timeCreated))
      sink.varint(UInt64(bucket.objects.count))
    }
    sink.varint(UInt64(damaged.count))
    for path in damaged { sink.string(path) }
    for bucket in buckets {
      for object in bucket.objects {
        sink.object(object, withBody: true)
        try sink.flushIfFull()
      }
    }
    try sink.flush()
    sink.u32(sink.crc.value)
    try sink.flush()
    if sync && SystemCall.retrying({ fsync(fd) }) != 0 { throw FileBackend.error("sync the index snapshot", errno) }
  }

  /// A snapshot file whose checksum matched, with its header decoded; its objects are decoded by
  /// `decodeObjects`.
  struct Opened: @unchecked Sendable {
    var epoch: UInt64
    var highest: Int64 = 0
    var segments: [UInt64: Int] = [:]
    var buckets: [(info: BucketInfo, count: Int)]
    var damaged: [String]
    fileprivate var bytes: [UInt8] = []
    fileprivate var objectsOffset: Int
  }

  static func open(_ path: String) throws(Damaged) -> Opened {
    guard let bytes = readFile(path) else { throw Damaged(description: "it cannot be read") }
    guard bytes.count >= magic.count + 12, bytes.starts(with: magic) else {
      throw Damaged(description: "it is not a snapshot of this version")
    }
    let header = bytes.withUnsafeBytes { raw -> Result<Opened, Damaged> in
      Result { () throws(Damaged) -> Opened in
        let body = UnsafeRawBufferPointer(rebasing: raw[0..<(raw.count - 4)])
        let stored = raw.loadUnaligned(fromByteOffset: raw.count - 4, as: UInt32.self).littleEndian
        var crc = CRC32C()
        crc.update(body)
        guard crc.value == stored else { throw Damaged(description: "its checksum does not match") }
        var source = Source(bytes: body, offset: magic.count)
        let epoch = try source.u64()
        let highest = Int64(bitPattern: try source.u64())
        var segments: [UInt64: Int] = [:]
        for _ in 0..<(try source.count()) {
          let sequence = try source.u64()
          segments[sequence] = Int(clamping: try source.varint())
        }
        var buckets: [(info: BucketInfo, count: Int)] = []
        for _ in 0..<(try source.count()) {
          let name = try source.string()
          let created = Int64(bitPattern: try source.u64())
          buckets.append((BucketInfo(name: name, timeCreated: created), try source.count()))
        }
        var damaged: [String] = []
        for _ in 0..<(try source.count()) { damaged.append(try source.string()) }
        return Opened(
          epoch: epoch, highest: highest, segments: segments, buckets: buckets, damaged: damaged,
          objectsOffset: source.offset)
      }
    }
    var opened = try header.get()
    opened.bytes = bytes
    return opened
  }

  /// Decodes every object, in order, handing them over in batches (one bucket each, with their
  /// keys); objects for which `skip` (bucket, name) is true are left out.
  static func decodeObjects(
    _ opened: Opened, skip: (String, ObjectKey) -> Bool, batchSize: Int = 16_384,
    deliver: (ObjectBatch) -> Void
  ) throws(Damaged) {
    let result = opened.bytes.withUnsafeBytes { raw -> Result<Void, Damaged> in
      Result { () throws(Damaged) in
        let body = UnsafeRawBufferPointer(rebasing: raw[0..<(raw.count - 4)])
        var source = Source(bytes: body, offset: opened.objectsOffset)
        for bucket in opened.buckets {
          let name = bucket.info.name
          var batch = ObjectBatch(bucket: name)
          batch.keys.reserveCapacity(min(batchSize, bucket.count))
          batch.objects.reserveCapacity(min(batchSize, bucket.count))
          for _ in 0..<bucket.count {
            let object = try source.object(bucket: name, withBody: true)
            let key = ObjectKey(object.name)
            if skip(name, key) { continue }
            batch.keys.append(key)
            batch.objects.append(object)
            if batch.objects.count == batchSize {
              deliver(batch)
              batch.keys.removeAll(keepingCapacity: true)
              batch.objects.removeAll(keepingCapacity: true)
            }
          }
          if !batch.objects.isEmpty { deliver(batch) }
        }
        guard source.offset == body.count else { throw Damaged(description: "it has trailing bytes") }
      }
    }
    try result.get()
  }

  /// One object in the snapshot's encoding: a log record's payload (`SegmentEntry`).
  static func encode(_ object: ObjectMetadata) -> [UInt8] {
    var sink = Sink(fd: -1, capacity: 256)
    sink.object(object)
    return sink.buffer
  }

  /// The object `encode` wrote, of `bucket`; every byte must belong to it.
  static func decode(_ payload: ArraySlice<UInt8>, bucket: String) throws(Damaged) -> ObjectMetadata {
    let result = payload.withUnsafeBytes { raw -> Result<ObjectMetadata, Damaged> in
      Result { () throws(Damaged) -> ObjectMetadata in
        var source = Source(bytes: raw, offset: 0)
        let object = try source.object(bucket: bucket)
        guard source.offset == raw.count else { throw Damaged(description: "it has trailing bytes") }
        return object
      }
    }
    return try result.get()
  }

  /// The whole snapshot at once (tests, tools).
  static func read(_ path: String) throws(Damaged) -> Contents {
    let opened = try open(path)
    var state = LoadedState()
    state.buckets = opened.buckets.map(\.info)
    try decodeObjects(opened, skip: { _, _ in false }) { state.objects.append(contentsOf: $0.objects) }
    return Contents(epoch: opened.epoch, state: state, damaged: opened.damaged)
  }

  static func readFile(_ path: String) -> [UInt8]? {
    let fd = SystemCall.retrying { Glibc.open(path, O_RDONLY | O_CLOEXEC) }
    guard fd >= 0 else { return nil }
    defer { close(fd) }
    var info = stat()
    guard SystemCall.retrying({ fstat(fd, &info) }) == 0 else { return nil }
    let size = Int(info.st_size)
    var bytes = [UInt8](repeating: 0, count: size)
    var offset = 0
    let complete = bytes.withUnsafeMutableBytes { buffer -> Bool in
      while offset < size {
        let count = SystemCall.retrying { Glibc.read(fd, buffer.baseAddress! + offset, size - offset) }
        guard count > 0 else { return false }
        offset += count
      }
      return true
    }
    return complete ? bytes : nil
  }
}
