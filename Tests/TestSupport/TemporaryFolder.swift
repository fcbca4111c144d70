import Foundation

/// Unique paths under the system's temporary directory, for tests that need a data folder or a
/// file of their own.
public enum TemporaryFolder {
  /// A unique path named `<prefix>-<UUID><suffix>`, not created.
  public static func path(_ prefix: String, suffix: String = "") -> URL {
    FileManager.default.temporaryDirectory.appendingPathComponent("\(prefix)-\(UUID().uuidString)\(suffix)")
  }

  /// A new, empty folder named `<prefix>-<UUID>`.
  public static func make(_ prefix: String) throws -> URL {
    let folder = path(prefix)
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    return folder
  }
}
