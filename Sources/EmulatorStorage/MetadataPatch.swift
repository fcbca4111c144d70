import EmulatorSupport

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
  /// A new ACL (the query's predefined ACL, or `acl` in the document); nil keeps it.
  public var acl: [AccessControl]?
  /// The storage class of a new generation (`storageClass` in an upload's or a rewrite's metadata).
  public var storageClass: String?

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
    /// The document describes a new generation, so `storageClass` is read; a metadata update
    /// cannot change it (a rewrite does), and ignores it as the read-only field it is there.
    public var newGeneration = true
    /// A `predefinedAcl` query parameter: the ACL, whatever `acl` the document has.
    public var predefinedAcl: String?

    public init(
      replace: Bool = false, customTimeWritable: Bool = true, tokensInCustomMetadata: Bool = true,
      newGeneration: Bool = true, predefinedAcl: String? = nil
    ) {
      self.replace = replace
      self.customTimeWritable = customTimeWritable
      self.tokensInCustomMetadata = tokensInCustomMetadata
      self.newGeneration = newGeneration
      self.predefinedAcl = predefinedAcl
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
    let latest = LastMembers(members)
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
    try readAccess(latest, options: options)
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
          let list = (text ?? "").split(separator: ",").map { $0.trimmingWhitespace() }
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
    if let acl { object.acl = acl }
    if let storageClass { object.storageClass = storageClass }
    switch tokens {
    case .keep: break
    case .replace(let list): object.downloadTokens = Self.unique(list)
    case .add(let list): object.downloadTokens = Self.unique(object.downloadTokens + list)
    }
  }

  /// `acl`, the predefined ACL and (for a new generation) `storageClass`.
  private mutating func readAccess(_ latest: LastMembers, options: Options) throws(StorageError) {
    // The predefined ACL wins: the clients send it with an empty `acl` beside it.
    if let name = options.predefinedAcl {
      acl = try AccessControl.predefined(name, scope: .object)
    } else if let value = latest["acl"], value != .null {
      acl = try AccessControl.list(json: value, scope: .object)
    }
    guard options.newGeneration, let value = latest["storageClass"], value != .null else { return }
    guard let text = value.stringValue, BucketSettings.storageClasses.contains(text.uppercased()) else {
      throw StorageError.invalid("Invalid storageClass: use STANDARD, NEARLINE, COLDLINE or ARCHIVE.")
    }
    storageClass = text.uppercased()
  }

  /// A document's members looked up by name, the last of a repeated name winning: a scan from the
  /// end (a document has a few members; hashing each of the dozen names looked up into a
  /// dictionary cost ~350 instructions a lookup, on every PATCH).
  struct LastMembers {
    let members: [(String, JSONValue)]
    init(_ members: [(String, JSONValue)]) { self.members = members }

    subscript(_ name: String) -> JSONValue? {
      var index = members.count - 1
      while index >= 0 {
        if members[index].0 == name { return members[index].1 }
        index -= 1
      }
      return nil
    }
  }

  private static func unique(_ list: [String]) -> [String] {
    var seen = Set<String>()
    return list.filter { seen.insert($0).inserted }
  }
}
