/// GCS limits an object's custom metadata to 8 KiB: the UTF-8 bytes of every key and value
/// together (the JSON API's `MAX_CUSTOM_METADATA_TOTAL_SIZE_BYTES`). Firebase download tokens
/// are custom metadata in production (`firebaseStorageDownloadTokens`, comma-separated), so
/// they count too (which also bounds how many `create_token` can add). Checked on the object as
/// it would be after a change (a PATCH merges into what is there), so a change that removes
/// keys is accepted and one that grows past the limit changes nothing.
extension ObjectMetadata {
  public static let maxCustomMetadataBytes = 8 * 1024

  /// Keys and values of `custom`, in UTF-8 bytes.
  public var customMetadataBytes: Int { Self.size(of: custom, tokens: downloadTokens) }

  func checkCustomMetadataSize() throws(StorageError) {
    try Self.checkSize(of: custom, tokens: downloadTokens)
  }

  static func size(of custom: [String: String], tokens: [String]) -> Int {
    let tokenBytes =
      tokens.isEmpty
      ? 0 : MetadataPatch.tokensKey.utf8.count + tokens.reduce(tokens.count - 1) { $0 + $1.utf8.count }
    return custom.reduce(tokenBytes) { $0 + $1.key.utf8.count + $1.value.utf8.count }
  }

  static func checkSize(of custom: [String: String], tokens: [String]) throws(StorageError) {
    let size = size(of: custom, tokens: tokens)
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
    var tokens: [String] = []
    switch self.tokens {
    case .keep: break
    case .replace(let list), .add(let list): tokens = list
    }
    try ObjectMetadata.checkSize(of: customUpdates.compactMapValues { $0 }, tokens: tokens)
  }
}
