import EmulatorSupport

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// The snapshot's binary encoding: a buffered, checksummed writer and a bounds-checked reader.
extension IndexSnapshot {
  /// A buffered, checksummed writer.
  struct Sink {
    let fd: Int32
    var buffer: [UInt8] = []
    var crc = CRC32C()
    var failed: Int32?

    init(fd: Int32, capacity: Int = 1 << 20) {
      self.fd = fd
      buffer.reserveCapacity(capacity)
    }

    /// A sink that only appends to `buffer` (no file): encodes into bytes already there.
    init(buffer: [UInt8]) {
      fd = -1
      self.buffer = buffer
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
      utf8(value)
    }

    /// nil is 0; a string is its length + 1.
    mutating func optionalString(_ value: String?) {
      guard let value else { return varint(0) }
      varint(UInt64(value.utf8.count) + 1)
      utf8(value)
    }

    /// A string's bytes in one copy from its contiguous storage (the generic append of a
    /// `String.UTF8View` is several times slower, on every field of every record written).
    private mutating func utf8(_ value: String) {
      let copied: Void? = value.utf8.withContiguousStorageIfAvailable { buffer.append(contentsOf: $0) }
      if copied == nil { buffer.append(contentsOf: value.utf8) }
    }

    /// Three 64-bit fields, little-endian, in one append.
    mutating func u64s(_ first: UInt64, _ second: UInt64, _ third: UInt64) {
      withUnsafeBytes(of: (first.littleEndian, second.littleEndian, third.littleEndian)) {
        buffer.append(contentsOf: $0)
      }
    }

    mutating func optionalInt(_ value: Int64?) {
      buffer.append(value == nil ? 0 : 1)
      if let value { u64(UInt64(bitPattern: value)) }
    }

    /// `withBody`: the snapshot's objects say where their bytes are (a record's do not: its own
    /// frame says it).
    mutating func object(_ object: ObjectMetadata, withBody: Bool = false) {
      string(object.name)
      u64s(UInt64(bitPattern: object.generation), UInt64(bitPattern: object.metageneration), UInt64(bitPattern: object.size))
      if let digest = object.digest {
        varint(17)
        // The MD5's 16 bytes in order (each word big-endian).
        withUnsafeBytes(of: (digest.high.bigEndian, digest.low.bigEndian)) { buffer.append(contentsOf: $0) }
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
      let custom = object.custom
      varint(UInt64(custom.count))
      for (key, value) in custom.isEmpty ? [] : object.sortedCustom {
        string(key)
        string(value)
      }
      varint(UInt64(object.downloadTokens.count))
      for token in object.downloadTokens { string(token) }
      u64(UInt64(bitPattern: object.timeCreated))
      u64(UInt64(bitPattern: object.updated))
      optionalInt(object.componentCount.map(Int64.init))
      optionalString(object.storageClass)
      varint(UInt64(object.acl.count))
      for entry in object.acl {
        string(entry.entity)
        string(entry.role)
      }
      if withBody { varint(object.body.raw) }
    }

    mutating func flushIfFull() throws(StorageError) {
      if buffer.count >= 1 << 20 { try flush() }
    }

    mutating func flush() throws(StorageError) {
      buffer.withUnsafeBytes { crc.update($0) }
      // The checksum covers what is written before it; the checksum's own 4 bytes are written last.
      let code = buffer.withUnsafeBytes { SystemCall.writeAll(fd, $0) }
      guard code == 0 else { throw FileBackend.error("write the index snapshot", code) }
      buffer.removeAll(keepingCapacity: true)
    }
  }

  /// A bounds-checked reader: a damaged snapshot throws, never reads out of range.
  struct Source {
    let bytes: UnsafeRawBufferPointer
    var offset: Int
    /// The last content type decoded, and the last ACL with where its encoding is.
    private var lastContentType: String?
    private var lastACL: (bytes: Range<Int>, acl: [AccessControl])?

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

    /// One object. Its content type and ACL are most often the previous object's: then the
    /// previous one's strings are shared rather than made again (see `Interned`).
    mutating func object(bucket: String, withBody: Bool = false) throws(Damaged) -> ObjectMetadata {
      let name = try string()
      let generation = Int64(bitPattern: try u64())
      let metageneration = Int64(bitPattern: try u64())
      let size = Int64(bitPattern: try u64())
      let md5Length = try count()
      var digest: MD5Digest?
      if md5Length > 0 {
        guard md5Length == 17 else { throw Damaged(description: "it has an MD5 of \(md5Length - 1) bytes") }
        try need(16)
        digest = MD5Digest(bytes[offset..<(offset + 16)])
        offset += 16
      }
      let crc32c = try u32()
      var object = ObjectMetadata(
        bucket: bucket, name: name, generation: generation, size: size, md5: nil, crc32c: crc32c, now: 0)
      object.digest = digest
      object.metageneration = metageneration
      object.storedContentType = try sharedContentType()
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
      if tokenCount > 0 {
        var tokens: [String] = []
        for _ in 0..<tokenCount { tokens.append(try string()) }
        object.downloadTokens = tokens
      }
      object.timeCreated = Int64(bitPattern: try u64())
      object.updated = Int64(bitPattern: try u64())
      object.componentCount = try optionalInt().map { Int($0) }
      object.storageClass = try optionalString()
      object.storedACL = try sharedACL()
      if withBody {
        guard let body = BodyLocation(encoded: try varint()) else {
          throw Damaged(description: "it has an impossible object location")
        }
        object.body = body
      }
      return object
    }

    private mutating func sharedContentType() throws(Damaged) -> String? {
      let length = try count()
      guard length > 0 else { return nil }
      try need(length - 1)
      let text = UnsafeRawBufferPointer(rebasing: bytes[offset..<(offset + length - 1)])
      offset += length - 1
      if let last = lastContentType, last.utf8.count == text.count, last.utf8.elementsEqual(text) { return last }
      let made = Interned.contentTypes.intern(String(decoding: text, as: UTF8.self))
      lastContentType = made
      return made
    }

    private mutating func sharedACL() throws(Damaged) -> [AccessControl] {
      let start = offset
      let entries = try count()
      guard entries > 0 else { return [] }
      for _ in 0..<(entries * 2) {
        let length = try count()
        try need(length)
        offset += length
      }
      let encoded = UnsafeRawBufferPointer(rebasing: bytes[start..<offset])
      if let last = lastACL, last.bytes.count == encoded.count,
        UnsafeRawBufferPointer(rebasing: bytes[last.bytes]).elementsEqual(encoded)
      {
        return last.acl
      }
      var source = Source(bytes: bytes, offset: start)
      _ = try source.count()
      var acl: [AccessControl] = []
      acl.reserveCapacity(entries)
      for _ in 0..<entries { acl.append(AccessControl(entity: try source.string(), role: try source.string())) }
      let made = Interned.acls.intern(acl)
      lastACL = (start..<offset, made)
      return made
    }
  }
}
