/// A generation that is no longer live, kept because its bucket has versioning enabled.
public struct NoncurrentObject: Sendable, Equatable {
  public var object: ObjectMetadata
  /// When it stopped being live (milliseconds since the epoch): GCS's `timeDeleted`.
  public var timeDeleted: Int64

  public init(object: ObjectMetadata, timeDeleted: Int64) {
    self.object = object
    self.timeDeleted = timeDeleted
  }
}
