/// GCS limits an object's custom metadata to 8 KiB: the UTF-8 bytes of every key and value
/// together (the JSON API's `MAX_CUSTOM_METADATA_TOTAL_SIZE_BYTES`). Checked on the object as
/// it would be after a change (a PATCH merges into what is there), so a change that removes
/// keys is accepted and one that grows past the limit changes nothing.
extension ObjectMetadata {
  public static let maxCustomMetadataBytes = 8 * 1024

  /// Keys and values of `custom`, in UTF-8 bytes.
  public var customMetadataBytes: Int { Self.size(of: custom) }

  func checkCustomMetadataSize() throws(StorageError) {
    try Self.checkSize(of: custom)
  }

  static func size(of custom: [String: String]) -> Int {
    custom.reduce(0) { $0 + $1.key.utf8.count + $1.value.utf8.count }
  }

  static func checkSize(of custom: [String: String]) throws(StorageError) {
    let size = size(of: custom)
    if size > maxCustomMetadataBytes {
      throw StorageError.invalid(
        "Custom metadata is too large: its keys and values add up to \(size) bytes; at most \(maxCustomMetadataBytes) are allowed."
      )
    }
  }
}

extension MetadataPatch {
  /// Checks the custom metadata this change would give a new object (the start of a resumable
  /// upload checks it then, not only when its last byte has arrived).
  public func checkCustomMetadataSize() throws(StorageError) {
    try ObjectMetadata.checkSize(of: customUpdates.compactMapValues { $0 })
  }
}
