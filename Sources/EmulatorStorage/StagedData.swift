/// Bytes written ahead of a commit (a temporary file, or memory), not yet visible. Made by the
/// backends of this module (with the memberwise initializer).
public struct StagedData: Sendable {
  /// The temporary file (`FileBackend`) or memory entry (`MemoryBackend`); empty when `bytes`
  /// holds the data instead.
  public let id: String
  public let size: Int64
  /// A small body not written anywhere yet: `FileBackend.commit` writes it straight to the
  /// object's final `.data` name (after an intent entry names that generation, before the record
  /// that makes it live), so it costs one file instead of a temporary file and a rename.
  var bytes: [UInt8]? = nil
}
