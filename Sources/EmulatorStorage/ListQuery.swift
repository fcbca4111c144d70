/// List parameters (GCS objects.list).
public struct ListQuery: Sendable {
  public var prefix: String?
  public var delimiter: String?
  /// Items plus prefixes on one page, 1…1000.
  public var maxResults = 1000
  public var pageToken: String?
  /// Inclusive.
  public var startOffset: String?
  /// Exclusive.
  public var endOffset: String?
  /// Objects whose name ends in the delimiter are listed as items too.
  public var includeTrailingDelimiter = false
  public var matchGlob: String?
  /// Every generation, noncurrent ones too (`versions=true`), each counting as one item.
  public var versions = false

  public init() {}
}
