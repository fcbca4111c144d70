/// Bytes written ahead of a commit (a temporary file, or memory), not yet visible. Made by the
/// backends of this module (with the memberwise initializer).
public struct StagedData: Sendable {
  public let id: String
  public let size: Int64
}
