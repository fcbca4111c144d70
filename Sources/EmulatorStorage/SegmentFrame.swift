import EmulatorSupport

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Where the parts of one log entry (`SegmentEntry`'s layout) sit in a buffer: positions, not
/// copies, so a segment mapped into memory is read without an allocation per entry.
struct SegmentFrame {
  var kind: SegmentEntry.Kind
  /// Where the bucket's and the object name's bytes are.
  var bucket: Range<Int>
  var name: Range<Int>
  /// The version the entry names (a tombstone's metageneration is `Int64.max`).
  var version: ObjectVersion
  var generation: Int64 { version.generation }
  /// The bytes after the fixed fields (see `SegmentEntry`), and the whole frame.
  var payload: Range<Int>
  var frame: Range<Int>

  /// What `parse` found at an offset (as `SegmentEntry.Parsed`).
  enum Parsed {
    case frame(SegmentFrame)
    case end
    case unreadable(at: Int)
    case damaged(Range<Int>)
  }

  /// The frame at `offset` of `bytes`, every length checked against the bytes left first.
  /// `trusted`: the frame's checksum was checked before (it is not computed again).
  static func parse(_ bytes: UnsafeRawBufferPointer, at offset: Int, trusted: Bool = false) -> Parsed {
    let left = bytes.count - offset
    if left == 0 { return .end }
    guard left >= 4 else { return .unreadable(at: offset) }
    let length = Int(load(bytes, at: offset, as: UInt32.self))
    guard length >= SegmentEntry.fixedBytes, length <= SegmentEntry.maximumLength, length <= left - 4 else {
      return .unreadable(at: offset)
    }
    let frame = offset..<(offset + 4 + length)
    var crc = CRC32C()
    if !trusted { crc.update(UnsafeRawBufferPointer(rebasing: bytes[(offset + 8)..<frame.upperBound])) }
    guard trusted || crc.value == load(bytes, at: offset + 4, as: UInt32.self),
      let kind = SegmentEntry.Kind(rawValue: bytes[offset + 8])
    else { return .damaged(frame) }
    var position = offset + 9
    let bucketCount = Int(load(bytes, at: position, as: UInt16.self))
    position += 2
    // Bucket, name length, name, two i64: all within the frame.
    guard bucketCount <= frame.upperBound - position - 20 else { return .damaged(frame) }
    let bucket = position..<(position + bucketCount)
    position += bucketCount
    let nameCount = Int(load(bytes, at: position, as: UInt32.self))
    position += 4
    guard nameCount <= frame.upperBound - position - 16 else { return .damaged(frame) }
    let name = position..<(position + nameCount)
    position += nameCount
    let generation = Int64(bitPattern: load(bytes, at: position, as: UInt64.self))
    let metageneration = Int64(bitPattern: load(bytes, at: position + 8, as: UInt64.self))
    return .frame(
      SegmentFrame(
        kind: kind, bucket: bucket, name: name,
        version: ObjectVersion(generation: generation, metageneration: metageneration),
        payload: (position + 16)..<frame.upperBound, frame: frame))
  }

  /// The bucket's and the name's bytes of the frame at `offset`, which `parse` accepted before
  /// (no length is checked again).
  static func names(at offset: Int, in bytes: UnsafeRawBufferPointer) -> (
    bucket: UnsafeRawBufferPointer, name: UnsafeRawBufferPointer
  ) {
    let bucketCount = Int(load(bytes, at: offset + 9, as: UInt16.self))
    let nameStart = offset + 15 + bucketCount
    let nameCount = Int(load(bytes, at: nameStart - 4, as: UInt32.self))
    return (
      UnsafeRawBufferPointer(rebasing: bytes[(offset + 11)..<(offset + 11 + bucketCount)]),
      UnsafeRawBufferPointer(rebasing: bytes[nameStart..<(nameStart + nameCount)])
    )
  }

  /// A record's encoded metadata and (inline) bytes within `payload` of `bytes`; nil when an
  /// inline record's metadata length does not fit its payload.
  static func recordParts(
    _ kind: SegmentEntry.Kind, payload: Range<Int>, in bytes: UnsafeRawBufferPointer
  ) -> (metadata: Range<Int>, body: Range<Int>?)? {
    guard kind == .inlineRecord else { return (payload, nil) }
    guard payload.count >= 4 else { return nil }
    let length = Int(load(bytes, at: payload.lowerBound, as: UInt32.self))
    let start = payload.lowerBound + 4
    guard length <= payload.upperBound - start else { return nil }
    return (start..<(start + length), (start + length)..<payload.upperBound)
  }

  /// The generations an intent's payload names.
  static func generations(payload: Range<Int>, in bytes: UnsafeRawBufferPointer) -> [Int64] {
    stride(from: payload.lowerBound, to: payload.upperBound - 7, by: 8).map {
      Int64(bitPattern: load(bytes, at: $0, as: UInt64.self))
    }
  }

  /// A little-endian integer at `offset` (the caller checked it is within `bytes`).
  static func load<Value: FixedWidthInteger>(_ bytes: UnsafeRawBufferPointer, at offset: Int, as: Value.Type) -> Value {
    Value(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: Value.self))
  }
}

/// A file mapped read-only into memory (a log segment at start-up): its pages are the page
/// cache's, so reading every segment holds no copy of the log, and `deinit` unmaps it.
final class MappedFile: @unchecked Sendable {
  /// Empty for an empty file.
  let bytes: UnsafeRawBufferPointer

  /// nil when the file cannot be opened or mapped.
  init?(path: String) {
    let fd = SystemCall.retrying { open(path, O_RDONLY | O_CLOEXEC) }
    guard fd >= 0 else { return nil }
    defer { close(fd) }
    var info = stat()
    guard SystemCall.retrying({ fstat(fd, &info) }) == 0 else { return nil }
    let size = Int(info.st_size)
    guard size > 0 else {
      bytes = UnsafeRawBufferPointer(start: nil, count: 0)
      return
    }
    guard let mapped = mmap(nil, size, PROT_READ, MAP_PRIVATE, fd, 0), mapped != MAP_FAILED else { return nil }
    bytes = UnsafeRawBufferPointer(start: mapped, count: size)
  }

  deinit {
    if let start = bytes.baseAddress { munmap(UnsafeMutableRawPointer(mutating: start), bytes.count) }
  }
}
