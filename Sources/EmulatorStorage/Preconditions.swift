import Foundation

/// Conditions a request puts on the object's current state (PROTOCOL.md §4).
public struct Preconditions: Sendable, Equatable {
  /// `generation=`: address this generation; only the live one is kept, so another is not found.
  public var generation: Int64?
  public var ifGenerationMatch: Int64?
  public var ifGenerationNotMatch: Int64?
  public var ifMetagenerationMatch: Int64?
  public var ifMetagenerationNotMatch: Int64?
  /// `If-Match` entity tags (reads); `*` matches any.
  public var ifMatch: [String]?
  /// `If-None-Match` entity tags (reads); `*` matches any.
  public var ifNoneMatch: [String]?

  public init(
    generation: Int64? = nil, ifGenerationMatch: Int64? = nil, ifGenerationNotMatch: Int64? = nil,
    ifMetagenerationMatch: Int64? = nil, ifMetagenerationNotMatch: Int64? = nil,
    ifMatch: [String]? = nil, ifNoneMatch: [String]? = nil
  ) {
    self.generation = generation
    self.ifGenerationMatch = ifGenerationMatch
    self.ifGenerationNotMatch = ifGenerationNotMatch
    self.ifMetagenerationMatch = ifMetagenerationMatch
    self.ifMetagenerationNotMatch = ifMetagenerationNotMatch
    self.ifMatch = ifMatch
    self.ifNoneMatch = ifNoneMatch
  }

  /// On a read of an existing object: a failed `…Match` is `conditionNotMet` (412), a failed
  /// `…NotMatch` or a matching `If-None-Match` is `notModified` (304).
  public func checkRead(_ object: ObjectMetadata) throws(StorageError) {
    if let generation, generation != object.generation {
      throw StorageError.objectNotFound(bucket: object.bucket, name: object.name)
    }
    if let value = ifGenerationMatch, value != object.generation {
      throw StorageError.conditionNotMet(
        "ifGenerationMatch: the object's generation is \(object.generation), not \(value).")
    }
    if let value = ifMetagenerationMatch, value != object.metageneration {
      throw StorageError.conditionNotMet(
        "ifMetagenerationMatch: the object's metageneration is \(object.metageneration), not \(value).")
    }
    if let tags = ifMatch, !Self.matches(tags, object.etag) {
      throw StorageError.conditionNotMet("If-Match: the object's ETag is \(object.etag).")
    }
    if let value = ifGenerationNotMatch, value == object.generation { throw StorageError.notModified }
    if let value = ifMetagenerationNotMatch, value == object.metageneration { throw StorageError.notModified }
    if let tags = ifNoneMatch, Self.matches(tags, object.etag) { throw StorageError.notModified }
  }

  /// On a write: `object` is the live object, nil when there is none. `ifGenerationMatch=0` means
  /// "must not exist"; every other condition needs a live object.
  public func checkWrite(_ object: ObjectMetadata?, bucket: String, name: String) throws(StorageError) {
    if let generation, object?.generation != generation {
      throw StorageError.objectNotFound(bucket: bucket, name: name)
    }
    if let value = ifGenerationMatch {
      if value == 0, let object {
        throw StorageError.conditionNotMet(
          "ifGenerationMatch=0: the object already exists (generation \(object.generation)).")
      }
      if value != 0 && object?.generation != value {
        throw StorageError.conditionNotMet(
          "ifGenerationMatch: the object's generation is \(object.map { String($0.generation) } ?? "none (no live object)"), not \(value)."
        )
      }
    }
    if let value = ifGenerationNotMatch {
      guard let object else { throw StorageError.conditionNotMet("ifGenerationNotMatch: there is no live object.") }
      if object.generation == value {
        throw StorageError.conditionNotMet("ifGenerationNotMatch: the object's generation is \(value).")
      }
    }
    if let value = ifMetagenerationMatch {
      guard let object, object.metageneration == value else {
        throw StorageError.conditionNotMet(
          "ifMetagenerationMatch: the object's metageneration is \(object.map { String($0.metageneration) } ?? "none (no live object)"), not \(value)."
        )
      }
    }
    if let value = ifMetagenerationNotMatch {
      guard let object else { throw StorageError.conditionNotMet("ifMetagenerationNotMatch: there is no live object.") }
      if object.metageneration == value {
        throw StorageError.conditionNotMet("ifMetagenerationNotMatch: the object's metageneration is \(value).")
      }
    }
  }

  private static func matches(_ tags: [String], _ etag: String) -> Bool {
    tags.contains { tag in
      var tag = tag.trimmingCharacters(in: .whitespaces)
      if tag == "*" { return true }
      if tag.hasPrefix("W/") { tag.removeFirst(2) }
      if tag.count >= 2 && tag.hasPrefix("\"") && tag.hasSuffix("\"") { tag = String(tag.dropFirst().dropLast()) }
      return tag == etag
    }
  }
}
