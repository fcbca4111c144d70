/// One page of a listing (GCS objects.list).
public struct ListPage: Sendable {
  public var items: [ObjectMetadata] = []
  public var prefixes: [String] = []
  public var nextPageToken: String?
  /// With `versions`: for each item, when it became noncurrent (nil: live). Empty otherwise.
  public var timeDeleted: [Int64?] = []

  public init() {}
}
