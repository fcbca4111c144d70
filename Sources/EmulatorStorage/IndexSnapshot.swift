#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// A binary copy of the whole index (`index.snapshot` in the data folder), so start-up reads one
/// file instead of one record per object. It is only a cache of the records: each one belongs to
/// an *epoch*, and the journal (`index.journal`) names every object changed since it was written.
/// Start-up uses the snapshot only when the journal is of the same epoch, then re-reads the
/// records the journal names; anything unexpected (a bad checksum, a truncated file, another
/// version, a journal of another epoch) falls back to reading every record.
///
/// Layout: `magic`, epoch (u64), bucket count, per bucket its name, creation time and object
/// count, the damaged record paths, then every bucket's objects (in bucket, then name order), then
/// a CRC32C of everything before it. Integers are little-endian; strings a varint length and
/// UTF-8 bytes. The header comes first so the objects can be decoded on one thread while another
/// indexes them (`ObjectBatches`).
enum IndexSnapshot {
  static let magic = Array("storage-emulator index snapshot 2\n".utf8)

  struct Contents {
    var epoch: UInt64
    var state: LoadedState
    var damaged: [String]
  }

  struct Damaged: Error, CustomStringConvertible {
    var description: String
  }

  /// Writes the snapshot to `path` (the caller renames it into place).
  static func write(
    epoch: UInt64, buckets: [(info: BucketInfo, objects: [ObjectMetadata])], damaged: [String], to path: String,
    sync: Bool
  ) throws(StorageError) {
    let fd = Glibc.open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
    guard fd >= 0 else { throw FileBackend.error("write the index snapshot", errno) }
    defer { close(fd) }
    var sink = Sink(fd: fd)
    sink.bytes(magic)
    sink.u64(epoch)
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
        sink.object(object)
        try sink.flushIfFull()
      }
    }
    try sink.flush()
    sink.u32(sink.crc.value)
    try sink.flush()
    if sync && fsync(fd) != 0 { throw FileBackend.error("sync the index snapshot", errno) }
  }

  /// A snapshot file whose checksum matched, with its header decoded; its objects are decoded by
  /// `decodeObjects`.
  struct Opened: @unchecked Sendable {
    var epoch: UInt64
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
        var buckets: [(info: BucketInfo, count: Int)] = []
        for _ in 0..<(try source.count()) {
          let name = try source.string()
          let created = Int64(bitPattern: try source.u64())
          buckets.append((BucketInfo(name: name, timeCreated: created), try source.count()))
        }
        var damaged: [String] = []
        for _ in 0..<(try source.count()) { damaged.append(try source.string()) }
        return Opened(epoch: epoch, buckets: buckets, damaged: damaged, objectsOffset: source.offset)
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
            let object = try source.object(bucket: name)
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

  /// The whole snapshot at once (tests, tools).
  static func read(_ path: String) throws(Damaged) -> Contents {
    let opened = try open(path)
    var state = LoadedState()
    state.buckets = opened.buckets.map(\.info)
    try decodeObjects(opened, skip: { _, _ in false }) { state.objects.append(contentsOf: $0.objects) }
    return Contents(epoch: opened.epoch, state: state, damaged: opened.damaged)
  }

  static func readFile(_ path: String) -> [UInt8]? {
    let fd = Glibc.open(path, O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else { return nil }
    defer { close(fd) }
    var info = stat()
    guard fstat(fd, &info) == 0 else { return nil }
    let size = Int(info.st_size)
    var bytes = [UInt8](repeating: 0, count: size)
    var offset = 0
    let complete = bytes.withUnsafeMutableBytes { buffer -> Bool in
      while offset < size {
        let count = Glibc.read(fd, buffer.baseAddress! + offset, size - offset)
        if count < 0 && errno == EINTR { continue }
        guard count > 0 else { return false }
        offset += count
      }
      return true
    }
    return complete ? bytes : nil
  }

  /// A buffered, checksummed writer.
  private struct Sink {
    let fd: Int32
    var buffer: [UInt8] = []
    var crc = CRC32C()
    var failed: Int32?

    init(fd: Int32) {
      self.fd = fd
      buffer.reserveCapacity(1 << 20)
    }

    mutating func bytes(_ bytes: some Collection<UInt8>) { buffer.append(contentsOf: bytes) }
    mutating func u64(_ value: UInt64) { withUnsafeBytes(of: value.littleEndian) { buffer.append(contentsOf: $0) } }
    mutating func u32(_ value: UInt32) { withUnsafeBytes(of: value.littleEndian) { buffer.append(contentsOf: $0) } }

    mutating func varint(_ value: UInt64) {
      var rest = value
      while rest >= 0x80 {
        buffer.append(UInt8(rest & 0x7F) | 0x80)
        rest >>= 7
      }
      buffer.append(UInt8(rest))
    }

    mutating func string(_ value: String) {
      varint(UInt64(value.utf8.count))
      buffer.append(contentsOf: value.utf8)
    }

    /// nil is 0; a string is its length + 1.
    mutating func optionalString(_ value: String?) {
      guard let value else { return varint(0) }
      varint(UInt64(value.utf8.count) + 1)
      buffer.append(contentsOf: value.utf8)
    }

    mutating func optionalInt(_ value: Int64?) {
      buffer.append(value == nil ? 0 : 1)
      if let value { u64(UInt64(bitPattern: value)) }
    }

    mutating func object(_ object: ObjectMetadata) {
      string(object.name)
      u64(UInt64(bitPattern: object.generation))
      u64(UInt64(bitPattern: object.metageneration))
      u64(UInt64(bitPattern: object.size))
      if let md5 = object.md5 {
        varint(UInt64(md5.count) + 1)
        buffer.append(contentsOf: md5)
      } else {
        varint(0)
      }
      u32(object.crc32c)
      optionalString(object.contentType)
      optionalString(object.cacheControl)
      optionalString(object.contentDisposition)
      optionalString(object.contentEncoding)
      optionalString(object.contentLanguage)
      optionalInt(object.customTime)
      varint(UInt64(object.custom.count))
      for (key, value) in object.sortedCustom {
        string(key)
        string(value)
      }
      varint(UInt64(object.downloadTokens.count))
      for token in object.downloadTokens { string(token) }
      u64(UInt64(bitPattern: object.timeCreated))
      u64(UInt64(bitPattern: object.updated))
      optionalInt(object.componentCount.map(Int64.init))
    }

    mutating func flushIfFull() throws(StorageError) {
      if buffer.count >= 1 << 20 { try flush() }
    }

    mutating func flush() throws(StorageError) {
      buffer.withUnsafeBytes { crc.update($0) }
      // The checksum covers what is written before it; the checksum's own 4 bytes are written last.
      var offset = 0
      while offset < buffer.count {
        let written = buffer.withUnsafeBytes { Glibc.write(fd, $0.baseAddress! + offset, $0.count - offset) }
        if written < 0 && errno == EINTR { continue }
        guard written > 0 else { throw FileBackend.error("write the index snapshot", errno) }
        offset += written
      }
      buffer.removeAll(keepingCapacity: true)
    }
  }

  /// A bounds-checked reader: a damaged snapshot throws, never reads out of range.
  private struct Source {
    let bytes: UnsafeRawBufferPointer
    var offset: Int

    init(bytes: UnsafeRawBufferPointer, offset: Int) {
      self.bytes = bytes
      self.offset = offset
    }

    private func need(_ count: Int) throws(Damaged) {
      guard count >= 0, count <= bytes.count - offset else { throw Damaged(description: "it is truncated") }
    }

    mutating func u64() throws(Damaged) -> UInt64 {
      try need(8)
      defer { offset += 8 }
      return bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self).littleEndian
    }

    mutating func u32() throws(Damaged) -> UInt32 {
      try need(4)
      defer { offset += 4 }
      return bytes.loadUnaligned(fromByteOffset: offset, as: UInt32.self).littleEndian
    }

    mutating func byte() throws(Damaged) -> UInt8 {
      try need(1)
      defer { offset += 1 }
      return bytes[offset]
    }

    mutating func varint() throws(Damaged) -> UInt64 {
      var value: UInt64 = 0
      var shift: UInt64 = 0
      while true {
        let next = try byte()
        guard shift < 64 else { throw Damaged(description: "it has a malformed number") }
        value |= UInt64(next & 0x7F) << shift
        if next < 0x80 { return value }
        shift += 7
      }
    }

    mutating func count() throws(Damaged) -> Int {
      let value = try varint()
      guard value <= UInt64(bytes.count) else { throw Damaged(description: "it has an impossible count") }
      return Int(value)
    }

    mutating func text(_ length: Int) throws(Damaged) -> String {
      try need(length)
      defer { offset += length }
      return String(decoding: UnsafeRawBufferPointer(rebasing: bytes[offset..<(offset + length)]), as: UTF8.self)
    }

    mutating func string() throws(Damaged) -> String { try text(count()) }

    mutating func optionalString() throws(Damaged) -> String? {
      let length = try count()
      return length == 0 ? nil : try text(length - 1)
    }

    mutating func optionalInt() throws(Damaged) -> Int64? {
      try byte() == 0 ? nil : Int64(bitPattern: try u64())
    }

    mutating func object(bucket: String) throws(Damaged) -> ObjectMetadata {
      let name = try string()
      let generation = Int64(bitPattern: try u64())
      let metageneration = Int64(bitPattern: try u64())
      let size = Int64(bitPattern: try u64())
      let md5Length = try count()
      var md5: [UInt8]?
      if md5Length > 0 {
        try need(md5Length - 1)
        md5 = Array(bytes[offset..<(offset + md5Length - 1)])
        offset += md5Length - 1
      }
      let crc32c = try u32()
      var object = ObjectMetadata(
        bucket: bucket, name: name, generation: generation, size: size, md5: md5, crc32c: crc32c, now: 0)
      object.metageneration = metageneration
      object.contentType = try optionalString()
      object.cacheControl = try optionalString()
      object.contentDisposition = try optionalString()
      object.contentEncoding = try optionalString()
      object.contentLanguage = try optionalString()
      object.customTime = try optionalInt()
      let customCount = try count()
      if customCount > 0 {
        var custom: [String: String] = [:]
        custom.reserveCapacity(customCount)
        for _ in 0..<customCount {
          let key = try string()
          custom[key] = try string()
        }
        object.custom = custom
      }
      let tokenCount = try count()
      for _ in 0..<tokenCount { object.downloadTokens.append(try string()) }
      object.timeCreated = Int64(bitPattern: try u64())
      object.updated = Int64(bitPattern: try u64())
      object.componentCount = try optionalInt().map { Int($0) }
      return object
    }
  }
}

/// The names of objects and buckets changed since the snapshot of its epoch: one line each,
/// appended *before* the change reaches the folder, so after any interruption the journal names
/// at least every object whose record may differ from the snapshot. A line also names the data
/// files the change creates or drops (by generation), so replaying it can remove what an
/// interrupted change left without listing the object's folder; `*` asks for that listing.
///
///     storage-emulator index journal <epoch in hex>
///     o <bucket> <object name as hex UTF-8> [<generation>|* ...]
///     b <bucket>
enum IndexJournal {
  static let headerPrefix = "storage-emulator index journal "

  /// An object compared by the bytes of its name: as Swift `String`s, a precomposed and a
  /// decomposed "é" would be one key, and replay would bring back only one of the two objects.
  struct Key: Hashable {
    var bucket: String
    var object: ObjectKey

    init(bucket: String, name: String) { self.init(bucket: bucket, object: ObjectKey(name)) }
    init(bucket: String, object: ObjectKey) {
      self.bucket = bucket
      self.object = object
    }

    var name: String { object.name }
  }

  /// The data files a replay checks for one object.
  struct DataFiles: Equatable {
    var generations: Set<Int64> = []
    /// Every data file of the object's name is checked (a listing of its folder).
    var all = false
  }

  struct Contents {
    var epoch: UInt64
    var objects: [Key: DataFiles] = [:]
    var buckets: Set<String> = []
    /// Lines after the header (a name changed N times has N lines).
    var lineCount = 0
  }

  static func header(epoch: UInt64) -> [UInt8] { Array((headerPrefix + String(epoch, radix: 16) + "\n").utf8) }

  /// `generations` nil: every data file of the name.
  static func objectLine(bucket: String, name: String, generations: [Int64]? = []) -> [UInt8] {
    let digits = Array("0123456789abcdef".utf8)
    var line = Array("o \(bucket) ".utf8)
    line.reserveCapacity(line.count + name.utf8.count * 2 + 40)
    for byte in name.utf8 {
      line.append(digits[Int(byte >> 4)])
      line.append(digits[Int(byte & 15)])
    }
    if let generations {
      for generation in generations { line.append(contentsOf: " \(generation)".utf8) }
    } else {
      line.append(contentsOf: " *".utf8)
    }
    line.append(10)
    return line
  }

  static func bucketLine(_ bucket: String) -> [UInt8] { Array("b \(bucket)\n".utf8) }

  /// nil when the file is missing or any complete line is malformed. A last line without its
  /// newline is ignored: that append never completed, so its change never started.
  static func read(_ path: String) -> Contents? {
    guard let bytes = IndexSnapshot.readFile(path) else { return nil }
    var lines = bytes.split(separator: 10, omittingEmptySubsequences: false)
    lines.removeLast()  // after the final newline: empty, or an unfinished append
    guard let first = lines.first else { return nil }
    let header = String(decoding: first, as: UTF8.self)
    guard header.hasPrefix(headerPrefix), let epoch = UInt64(header.dropFirst(headerPrefix.count), radix: 16) else {
      return nil
    }
    var contents = Contents(epoch: epoch)
    contents.lineCount = lines.count - 1
    for line in lines.dropFirst() {
      let fields = line.split(separator: 32, omittingEmptySubsequences: false)
      switch (fields.first.map { Array($0) }, fields.count) {
      case ([UInt8(ascii: "b")], 2):
        contents.buckets.insert(String(decoding: fields[1], as: UTF8.self))
      case ([UInt8(ascii: "o")], 3...):
        guard let name = decodeHex(fields[2]) else { return nil }
        var files = DataFiles()
        for field in fields.dropFirst(3) {
          if field.elementsEqual("*".utf8) {
            files.all = true
          } else if let generation = Int64(String(decoding: field, as: UTF8.self)) {
            files.generations.insert(generation)
          } else {
            return nil
          }
        }
        let key = Key(bucket: String(decoding: fields[1], as: UTF8.self), object: ObjectKey(bytes: name))
        var merged = contents.objects[key] ?? DataFiles()
        merged.generations.formUnion(files.generations)
        merged.all = merged.all || files.all
        contents.objects[key] = merged
      default:
        return nil
      }
    }
    return contents
  }

  /// The bytes of a name written as hex; nil unless they are UTF-8.
  private static func decodeHex(_ hex: ArraySlice<UInt8>) -> [UInt8]? {
    guard hex.count % 2 == 0 else { return nil }
    func nibble(_ byte: UInt8) -> UInt8? {
      switch byte {
      case 48...57: byte - 48
      case 97...102: byte - 87
      default: nil
      }
    }
    var bytes: [UInt8] = []
    bytes.reserveCapacity(hex.count / 2)
    var index = hex.startIndex
    while index < hex.endIndex {
      guard let high = nibble(hex[index]), let low = nibble(hex[index + 1]) else { return nil }
      bytes.append(high << 4 | low)
      index += 2
    }
    return String(validating: bytes, as: UTF8.self) == nil ? nil : bytes
  }
}
