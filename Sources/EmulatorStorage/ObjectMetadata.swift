import EmulatorSupport

/// Everything stored about one object besides its bytes.
public struct ObjectMetadata: Sendable, Equatable {
  public var bucket: String
  public var name: String
  /// Microseconds since the epoch when this data was written; strictly increasing per object.
  public var generation: Int64
  /// 1 for a new generation, +1 for every metadata change.
  public var metageneration: Int64
  public var size: Int64
  /// MD5 of the bytes; nil for composite objects (as in GCS).
  public var md5: [UInt8]?
  public var crc32c: UInt32
  public var contentType: String?
  public var cacheControl: String?
  public var contentDisposition: String?
  public var contentEncoding: String?
  public var contentLanguage: String?
  /// Milliseconds since the epoch.
  public var customTime: Int64?
  /// Custom key/value metadata (the SDKs' `customMetadata`).
  public var custom: [String: String]
  /// Firebase download tokens, kept beside the custom metadata.
  public var downloadTokens: [String]
  /// Milliseconds since the epoch.
  public var timeCreated: Int64
  /// Milliseconds since the epoch.
  public var updated: Int64
  public var componentCount: Int?
  /// The storage class; nil (records from before it was kept) reads as STANDARD.
  public var storageClass: String?
  /// The object's ACL (`AccessControl`); kept, returned with `projection=full`, never enforced.
  public var acl: [AccessControl] = []

  public init(
    bucket: String, name: String, generation: Int64, size: Int64, md5: [UInt8]?, crc32c: UInt32,
    now: Int64
  ) {
    self.bucket = bucket
    self.name = name
    self.generation = generation
    self.metageneration = 1
    self.size = size
    self.md5 = md5
    self.crc32c = crc32c
    self.custom = [:]
    self.downloadTokens = []
    self.timeCreated = now
    self.updated = now
  }

  /// Derived from generation and metageneration the way GCS does (a base64 protobuf of the two
  /// varints), so it changes whenever either changes.
  public var etag: String { Base64.encode(etagBytes) }

  /// The bytes `etag` encodes.
  public var etagBytes: [UInt8] {
    var bytes: [UInt8] = [0x08]
    Self.appendVarint(UInt64(generation), to: &bytes)
    bytes.append(0x10)
    Self.appendVarint(UInt64(metageneration), to: &bytes)
    return bytes
  }

  public var md5Base64: String? { md5.map { Base64.encode($0) } }

  public var crc32cBase64: String { Base64.encode(crc32cBytes) }

  /// The CRC32C big-endian, as GCS encodes it.
  public var crc32cBytes: [UInt8] {
    [UInt8(crc32c >> 24), UInt8((crc32c >> 16) & 0xFF), UInt8((crc32c >> 8) & 0xFF), UInt8(crc32c & 0xFF)]
  }

  /// Custom metadata keys in a stable order.
  public var sortedCustom: [(key: String, value: String)] {
    custom.sorted { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }
  }

  /// Field by field, the name (and every string) by its bytes: Swift's `String` equality would
  /// call a precomposed and a decomposed "é" equal, and these are two objects.
  public static func == (lhs: ObjectMetadata, rhs: ObjectMetadata) -> Bool {
    func same(_ a: String?, _ b: String?) -> Bool {
      switch (a, b) {
      case (nil, nil): true
      case (let a?, let b?): a.utf8.elementsEqual(b.utf8)
      default: false
      }
    }
    return lhs.generation == rhs.generation && lhs.metageneration == rhs.metageneration && lhs.size == rhs.size
      && lhs.md5 == rhs.md5 && lhs.crc32c == rhs.crc32c && same(lhs.bucket, rhs.bucket) && same(lhs.name, rhs.name)
      && same(lhs.contentType, rhs.contentType) && same(lhs.cacheControl, rhs.cacheControl)
      && same(lhs.contentDisposition, rhs.contentDisposition) && same(lhs.contentEncoding, rhs.contentEncoding)
      && same(lhs.contentLanguage, rhs.contentLanguage) && lhs.customTime == rhs.customTime
      && lhs.custom.count == rhs.custom.count
      && lhs.custom.allSatisfy { key, value in
        guard let index = rhs.custom.index(forKey: key) else { return false }
        return same(rhs.custom[index].key, key) && same(rhs.custom[index].value, value)
      }
      && lhs.downloadTokens.elementsEqual(rhs.downloadTokens, by: same)
      && lhs.timeCreated == rhs.timeCreated && lhs.updated == rhs.updated && lhs.componentCount == rhs.componentCount
      && lhs.storageClass == rhs.storageClass && lhs.acl == rhs.acl
  }

  static func appendVarint(_ value: UInt64, to bytes: inout [UInt8]) {
    var rest = value
    while rest >= 0x80 {
      bytes.append(UInt8(rest & 0x7F) | 0x80)
      rest >>= 7
    }
    bytes.append(UInt8(rest))
  }
}
