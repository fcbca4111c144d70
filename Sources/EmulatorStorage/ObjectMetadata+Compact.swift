/// The compact parts of `ObjectMetadata` (see there for why).

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// An MD5 in two words instead of a 16-element array (an array is a heap allocation per object).
struct MD5Digest: Sendable, Equatable {
  var high: UInt64
  var low: UInt64

  /// The first 16 bytes (an MD5 is always 16; shorter input is padded with zeros).
  init(_ bytes: some Collection<UInt8>) {
    var high: UInt64 = 0
    var low: UInt64 = 0
    for (position, byte) in bytes.prefix(16).enumerated() {
      if position < 8 {
        high |= UInt64(byte) << (56 - 8 * UInt64(position))
      } else {
        low |= UInt64(byte) << (56 - 8 * UInt64(position - 8))
      }
    }
    (self.high, self.low) = (high, low)
  }

  var bytes: [UInt8] {
    (0..<16).map { position in
      UInt8(truncatingIfNeeded: (position < 8 ? high : low) >> (56 - 8 * UInt64(position % 8)))
    }
  }
}

/// A storage class in one byte: the four GCS classes by code, anything else (records of older
/// versions) kept as text in `RareFields`.
enum StorageClassCode: UInt8, Sendable {
  case none, standard, nearline, coldline, archive, other

  init(_ text: String?) {
    switch text {
    case nil: self = .none
    case "STANDARD": self = .standard
    case "NEARLINE": self = .nearline
    case "COLDLINE": self = .coldline
    case "ARCHIVE": self = .archive
    default: self = .other
    }
  }

  /// nil for `none` and `other`.
  var text: String? {
    switch self {
    case .none, .other: nil
    case .standard: "STANDARD"
    case .nearline: "NEARLINE"
    case .coldline: "COLDLINE"
    case .archive: "ARCHIVE"
    }
  }
}

/// The fields few objects set, in one immutable box shared by the copies of a metadata value.
final class RareFields: Sendable {
  struct Fields: Sendable {
    var cacheControl: String?
    var contentDisposition: String?
    var contentEncoding: String?
    var contentLanguage: String?
    var customTime: Int64?
    var custom: [String: String] = [:]
    var downloadTokens: [String] = []
    var componentCount: Int?
    /// A storage class outside the four codes.
    var storageClass: String?

    var isEmpty: Bool {
      cacheControl == nil && contentDisposition == nil && contentEncoding == nil && contentLanguage == nil
        && customTime == nil && custom.isEmpty && downloadTokens.isEmpty && componentCount == nil
        && storageClass == nil
    }

    /// Every string by its bytes (see `ObjectMetadata.==`).
    func same(as other: Fields) -> Bool {
      Interned.same(cacheControl, other.cacheControl) && Interned.same(contentDisposition, other.contentDisposition)
        && Interned.same(contentEncoding, other.contentEncoding)
        && Interned.same(contentLanguage, other.contentLanguage) && customTime == other.customTime
        && componentCount == other.componentCount && Interned.same(storageClass, other.storageClass)
        && downloadTokens.elementsEqual(other.downloadTokens) { Interned.same($0, $1) }
        && custom.count == other.custom.count
        && custom.allSatisfy { key, value in
          guard let index = other.custom.index(forKey: key) else { return false }
          return Interned.same(other.custom[index].key, key) && Interned.same(other.custom[index].value, value)
        }
    }
  }

  let fields: Fields

  init(_ fields: Fields) { self.fields = fields }
}

/// Values many objects share, kept once: a content type or an ACL (every new object gets its
/// bucket's default object ACL, three entries of strings longer than fit inline) decoded for a
/// million objects would otherwise be a million copies. At most `limit` distinct values are
/// kept (the first ones met); others are stored as they come. Compared by bytes, never by
/// `String` equality.
final class Interner<Value: Sendable>: Sendable {
  private let values = Locked<[Value]>([])
  private let limit: Int
  private let same: @Sendable (Value, Value) -> Bool

  init(limit: Int, same: @escaping @Sendable (Value, Value) -> Bool) {
    self.limit = limit
    self.same = same
  }

  func intern(_ value: Value) -> Value {
    values.withLock { values in
      if let found = values.first(where: { same($0, value) }) { return found }
      if values.count < limit { values.append(value) }
      return value
    }
  }
}

/// The process's interners, and comparisons by bytes.
enum Interned {
  static let contentTypes = Interner<String>(limit: 64) { Interned.same($0, $1) }
  static let acls = Interner<[AccessControl]>(limit: 16) { Interned.same($0, $1) }

  /// By length first (most strings that differ do), then the bytes at once.
  static func same(_ a: String, _ b: String) -> Bool {
    let count = a.utf8.count
    guard count == b.utf8.count else { return false }
    guard count > 0 else { return true }
    let compared = a.utf8.withContiguousStorageIfAvailable { left in
      b.utf8.withContiguousStorageIfAvailable { right in memcmp(left.baseAddress!, right.baseAddress!, count) == 0 }
    }
    return (compared ?? nil) ?? a.utf8.elementsEqual(b.utf8)
  }

  static func same(_ a: String?, _ b: String?) -> Bool {
    switch (a, b) {
    case (nil, nil): true
    case (let a?, let b?): same(a, b)
    default: false
    }
  }

  static func same(_ a: [AccessControl], _ b: [AccessControl]) -> Bool {
    guard a.count == b.count else { return false }
    // Interned: most often the very same storage.
    if a.withUnsafeBufferPointer({ $0.baseAddress }) == b.withUnsafeBufferPointer({ $0.baseAddress }) { return true }
    return a.elementsEqual(b) { same($0.entity, $1.entity) && same($0.role, $1.role) }
  }
}
