import Foundation

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
  }

  private static func appendVarint(_ value: UInt64, to bytes: inout [UInt8]) {
    var rest = value
    while rest >= 0x80 {
      bytes.append(UInt8(rest & 0x7F) | 0x80)
      rest >>= 7
    }
    bytes.append(UInt8(rest))
  }
}

/// The writable scalar fields.
public enum WritableField: String, CaseIterable, Sendable {
  case cacheControl, contentDisposition, contentEncoding, contentLanguage, contentType, customTime
}

/// A change to an object's writable metadata: what PATCH, PUT and upload metadata describe.
public struct MetadataPatch: Sendable, Equatable {
  public enum Change: Sendable, Equatable {
    case set(String)
    case remove
  }

  public enum TokenChange: Sendable, Equatable {
    case keep
    case replace([String])
    case add([String])
  }

  public var fields: [WritableField: Change] = [:]
  /// Remove every custom key before applying `customUpdates`.
  public var clearCustom = false
  /// Per key: a value sets it, nil deletes it.
  public var customUpdates: [String: String?] = [:]
  public var tokens: TokenChange = .keep

  public init() {}

  /// How a JSON metadata document is read.
  public struct Options: Sendable {
    /// PUT semantics: writable fields missing from the document are cleared.
    public var replace = false
    /// `customTime` is writable (the GCS surfaces).
    public var customTimeWritable = true
    /// Download tokens appear as the custom key `firebaseStorageDownloadTokens` (the GCS
    /// surfaces, as in production), so `metadata: null` removes them. On the Firebase surface they
    /// live beside custom metadata and survive it.
    public var tokensInCustomMetadata = true

    public init(replace: Bool = false, customTimeWritable: Bool = true, tokensInCustomMetadata: Bool = true) {
      self.replace = replace
      self.customTimeWritable = customTimeWritable
      self.tokensInCustomMetadata = tokensInCustomMetadata
    }
  }

  public static let tokensKey = "firebaseStorageDownloadTokens"

  /// Reads a PATCH/PUT/upload metadata document. Read-only and unknown keys are ignored whatever
  /// their value; a writable field must be a string or null; custom values may be strings, numbers
  /// or booleans (stored as their text) or null (delete).
  public init(json document: JSONValue, options: Options) throws(StorageError) {
    guard case .object(let members) = document else {
      throw StorageError.invalid("The metadata must be a JSON object.")
    }
    var latest: [String: JSONValue] = [:]
    for (key, value) in members { latest[key] = value }
    for field in WritableField.allCases {
      if field == .customTime && !options.customTimeWritable { continue }
      switch latest[field.rawValue] {
      case nil:
        if options.replace { fields[field] = .remove }
      case .null:
        fields[field] = .remove
      case .string(let value):
        if field == .customTime {
          guard let millis = Timestamp.parse(value) else {
            throw StorageError.invalid("customTime must be an RFC 3339 date-time, got '\(value)'.")
          }
          fields[field] = .set(Timestamp.format(milliseconds: millis))
        } else {
          fields[field] = .set(value)
        }
      default:
        throw StorageError.invalid("Field '\(field.rawValue)' must be a string or null.")
      }
    }
    switch latest["metadata"] {
    case nil:
      if options.replace {
        clearCustom = true
        if options.tokensInCustomMetadata { tokens = .replace([]) }
      }
    case .null:
      clearCustom = true
      if options.tokensInCustomMetadata { tokens = .replace([]) }
    case .object(let entries):
      // An empty object clears the custom metadata on the GCS surfaces: gcloud's
      // `--clear-custom-metadata` (and `--remove-custom-metadata` of the last key) sends exactly
      // that and nothing else.
      if options.replace || (entries.isEmpty && options.tokensInCustomMetadata) {
        clearCustom = true
        if options.tokensInCustomMetadata { tokens = .replace([]) }
      }
      for (key, value) in entries {
        let text: String?
        switch value {
        case .null: text = nil
        case .string(let string): text = string
        case .number(let literal): text = literal
        case .bool(let flag): text = flag ? "true" : "false"
        case .array, .object:
          throw StorageError.invalid(
            "Custom metadata value for key '\(key)' must be a string, number, boolean or null.")
        }
        if key == Self.tokensKey {
          let list = (text ?? "").split(separator: ",").map { String($0).trimmingCharacters(in: .whitespaces) }
            .filter { !$0.isEmpty }
          if options.tokensInCustomMetadata {
            tokens = .replace(list)
          } else if !list.isEmpty {
            tokens = .add(list)
          }
          continue
        }
        customUpdates[key] = .some(text)
      }
    default:
      throw StorageError.invalid("Field 'metadata' must be an object of string values, or null.")
    }
  }

  /// Applies the change. Does not touch generation, metageneration or times.
  public func apply(to object: inout ObjectMetadata) {
    for (field, change) in fields {
      let value: String?
      switch change {
      case .set(let text): value = text
      case .remove: value = nil
      }
      switch field {
      case .cacheControl: object.cacheControl = value
      case .contentDisposition: object.contentDisposition = value
      case .contentEncoding: object.contentEncoding = value
      case .contentLanguage: object.contentLanguage = value
      case .contentType: object.contentType = value
      case .customTime: object.customTime = value.flatMap(Timestamp.parse)
      }
    }
    if clearCustom { object.custom = [:] }
    for (key, value) in customUpdates {
      if let value { object.custom[key] = value } else { object.custom.removeValue(forKey: key) }
    }
    switch tokens {
    case .keep: break
    case .replace(let list): object.downloadTokens = Self.unique(list)
    case .add(let list): object.downloadTokens = Self.unique(object.downloadTokens + list)
    }
  }

  private static func unique(_ list: [String]) -> [String] {
    var seen = Set<String>()
    return list.filter { seen.insert($0).inserted }
  }
}
