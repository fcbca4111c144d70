import EmulatorSupport

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
    try Self.check(ifGenerationMatch, matches: object.generation, "ifGenerationMatch", "generation")
    try Self.check(ifMetagenerationMatch, matches: object.metageneration, "ifMetagenerationMatch", "metageneration")
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
      if value != 0 { try Self.check(value, matches: object?.generation, "ifGenerationMatch", "generation") }
    }
    try Self.check(ifGenerationNotMatch, differsFrom: object?.generation, "ifGenerationNotMatch", "generation")
    try Self.check(ifMetagenerationMatch, matches: object?.metageneration, "ifMetagenerationMatch", "metageneration")
    try Self.check(
      ifMetagenerationNotMatch, differsFrom: object?.metageneration, "ifMetagenerationNotMatch", "metageneration")
  }

  /// A `…Match` condition: `current` (nil: no live object) must equal `value`.
  private static func check(
    _ value: Int64?, matches current: Int64?, _ condition: String, _ field: String
  ) throws(StorageError) {
    guard let value, current != value else { return }
    throw StorageError.conditionNotMet(
      "\(condition): the object's \(field) is \(current.map { String($0) } ?? "none (no live object)"), not \(value).")
  }

  /// A `…NotMatch` condition on a write: there must be a live object, its `current` not `value`.
  private static func check(
    _ value: Int64?, differsFrom current: Int64?, _ condition: String, _ field: String
  ) throws(StorageError) {
    guard let value else { return }
    guard let current else { throw StorageError.conditionNotMet("\(condition): there is no live object.") }
    if current == value { throw StorageError.conditionNotMet("\(condition): the object's \(field) is \(value).") }
  }

  private static func matches(_ tags: [String], _ etag: String) -> Bool {
    tags.contains { tag in
      var tag = tag.trimmingWhitespace()
      if tag == "*" { return true }
      if tag.hasPrefix("W/") { tag.removeFirst(2) }
      if tag.count >= 2 && tag.hasPrefix("\"") && tag.hasSuffix("\"") { tag = String(tag.dropFirst().dropLast()) }
      return tag == etag
    }
  }
}
