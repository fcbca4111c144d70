import EmulatorStorage

/// Object resources rendered as the API renders them, for the emulator's own features (the web
/// UI shows both flavours; notifications carry the GCS one). Rendering has no side effects: the
/// Firebase flavour of an object without a download token shows none (a Firebase GET would
/// create one).
public enum ObjectJSON {
  /// The GCS JSON API resource, with links under `baseURL` (`http://host:port`).
  public static func gcs(_ object: ObjectMetadata, baseURL: String) -> [UInt8] {
    ResourceJSON(baseURL: baseURL, fields: nil).gcsObject(object)
  }

  /// The Firebase Storage resource.
  public static func firebase(_ object: ObjectMetadata, baseURL: String) -> [UInt8] {
    ResourceJSON(baseURL: baseURL, fields: nil).firebaseObject(object)
  }
}
