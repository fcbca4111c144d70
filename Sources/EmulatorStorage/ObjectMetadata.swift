import EmulatorSupport

/// Everything stored about one object besides its bytes.
///
/// Compact, because the index holds one per object (a million objects must fit in a few hundred
/// MB): 136 bytes inline, and no heap allocation of its own for a typical object. The MD5 is
/// two words, the storage class a one-byte code, the content type and the ACL shared between
/// the objects that have the same ones (`Interned`), and the fields few objects set (cache
/// control, disposition, encoding, language, custom time, custom metadata, download tokens,
/// component count) sit together in one optional box (`RareFields`). The public properties are
/// the same as with plain stored fields.
public struct ObjectMetadata: Sendable, Equatable {
  public var bucket: String
  public var name: String
  /// Microseconds since the epoch when this data was written; strictly increasing per object.
  public var generation: Int64
  /// 1 for a new generation, +1 for every metadata change.
  public var metageneration: Int64
  public var size: Int64
  /// Milliseconds since the epoch.
  public var timeCreated: Int64
  /// Milliseconds since the epoch.
  public var updated: Int64
  /// `md5` as two words (nil for composite objects).
  var digest: MD5Digest?
  /// `storageClass` as a code (see `StorageClassCode`); `other` keeps the text in `rare`.
  var storageClassCode: StorageClassCode
  public var crc32c: UInt32
  var storedContentType: String?
  var storedACL: [AccessControl]
  /// The rarely set fields; nil when none is.
  var rare: RareFields?
  /// Where the bytes are (`FileBackend`); not part of the metadata: `==` ignores it.
  var body = BodyLocation.dataFile

  public init(
    bucket: String, name: String, generation: Int64, size: Int64, md5: [UInt8]?, crc32c: UInt32,
    now: Int64
  ) {
    self.bucket = bucket
    self.name = name
    self.generation = generation
    self.metageneration = 1
    self.size = size
    self.digest = md5.map { MD5Digest($0) }
    self.storageClassCode = .none
    self.crc32c = crc32c
    self.storedContentType = nil
    self.storedACL = []
    self.rare = nil
    self.timeCreated = now
    self.updated = now
  }

  /// MD5 of the bytes; nil for composite objects (as in GCS).
  public var md5: [UInt8]? {
    get { digest?.bytes }
    set { digest = newValue.map { MD5Digest($0) } }
  }

  public var contentType: String? {
    get { storedContentType }
    set { storedContentType = newValue.map { Interned.contentTypes.intern($0) } }
  }

  /// The object's ACL (`AccessControl`); kept, returned with `projection=full`, never enforced.
  public var acl: [AccessControl] {
    get { storedACL }
    set { storedACL = newValue.isEmpty ? [] : Interned.acls.intern(newValue) }
  }

  /// The storage class; nil (records from before it was kept) reads as STANDARD.
  public var storageClass: String? {
    get { storageClassCode.text ?? rare?.fields.storageClass }
    set {
      storageClassCode = StorageClassCode(newValue)
      let other = storageClassCode == .other ? newValue : nil
      if other != nil || rare?.fields.storageClass != nil { changeRare { $0.storageClass = other } }
    }
  }

  public var cacheControl: String? { get { rare?.fields.cacheControl } set { setRare(\.cacheControl, newValue) } }
  public var contentDisposition: String? {
    get { rare?.fields.contentDisposition }
    set { setRare(\.contentDisposition, newValue) }
  }
  public var contentEncoding: String? { get { rare?.fields.contentEncoding } set { setRare(\.contentEncoding, newValue) } }
  public var contentLanguage: String? { get { rare?.fields.contentLanguage } set { setRare(\.contentLanguage, newValue) } }
  /// Milliseconds since the epoch.
  public var customTime: Int64? { get { rare?.fields.customTime } set { setRare(\.customTime, newValue) } }
  /// Custom key/value metadata (the SDKs' `customMetadata`).
  public var custom: [String: String] {
    get { rare?.fields.custom ?? [:] }
    set { changeRare(unless: newValue.isEmpty) { $0.custom = newValue } }
  }
  /// Firebase download tokens, kept beside the custom metadata.
  public var downloadTokens: [String] {
    get { rare?.fields.downloadTokens ?? [] }
    set { changeRare(unless: newValue.isEmpty) { $0.downloadTokens = newValue } }
  }
  public var componentCount: Int? { get { rare?.fields.componentCount } set { setRare(\.componentCount, newValue) } }

  /// Sets an optional rare field (nil on an object without a box changes nothing).
  private mutating func setRare<Value>(_ field: WritableKeyPath<RareFields.Fields, Value?>, _ value: Value?) {
    changeRare(unless: value == nil) { $0[keyPath: field] = value }
  }

  /// Replaces the box with a changed copy (the box is shared between copies of the metadata,
  /// so it is never changed in place); none is made for a change that sets nothing on an object
  /// that has no box.
  private mutating func changeRare(unless clearing: Bool = false, _ change: (inout RareFields.Fields) -> Void) {
    if clearing && rare == nil { return }
    var fields = rare?.fields ?? RareFields.Fields()
    change(&fields)
    rare = fields.isEmpty ? nil : RareFields(fields)
  }

  /// Derived from generation and metageneration the way GCS does (a base64 protobuf of the two
  /// varints), so it changes whenever either changes.
  public var etag: String { Base64.encode(etagBytes) }

  /// The bytes `etag` encodes.
  public var etagBytes: [UInt8] {
    var bytes: [UInt8] = []
    bytes.reserveCapacity(22)  // two tags and two varints of 10 bytes at most: no regrowth
    bytes.append(0x08)
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
    lhs.generation == rhs.generation && lhs.metageneration == rhs.metageneration && lhs.size == rhs.size
      && lhs.digest == rhs.digest && lhs.crc32c == rhs.crc32c && Interned.same(lhs.bucket, rhs.bucket)
      && Interned.same(lhs.name, rhs.name) && Interned.same(lhs.contentType, rhs.contentType)
      && lhs.timeCreated == rhs.timeCreated && lhs.updated == rhs.updated
      && lhs.storageClassCode == rhs.storageClassCode && Interned.same(lhs.acl, rhs.acl)
      && (lhs.rare === rhs.rare || (lhs.rare?.fields ?? .init()).same(as: rhs.rare?.fields ?? .init()))
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
