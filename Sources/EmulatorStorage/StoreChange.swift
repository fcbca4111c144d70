/// What happened to an object, in the terms of Cloud Storage's notifications.
public enum StoreChangeKind: String, Sendable {
  /// A new generation was written (upload, copy, compose, import, seed).
  case finalized
  /// The live object was deleted.
  case deleted
  /// Its metadata changed (PATCH, PUT, download tokens): one per new metageneration.
  case metadataUpdated
}

public struct StoreChange: Sendable {
  public var kind: StoreChangeKind
  /// The object after the change (for `deleted`, as it was).
  public var object: ObjectMetadata

  public init(kind: StoreChangeKind, object: ObjectMetadata) {
    self.kind = kind
    self.object = object
  }
}
