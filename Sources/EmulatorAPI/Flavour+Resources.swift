import EmulatorHTTP
import EmulatorStorage

/// What the flavours mean for buckets, rules, signed URLs, tokens, uploads and resource JSON.
extension Flavour {
  /// Whether a write creates a missing bucket: Firebase always (its emulator creates the default
  /// bucket); GCS only with `lenientBuckets`, otherwise 404 as on GCS.
  func createsBucket(lenient: Bool) -> Bool { self == .firebase || lenient }

  /// Security rules apply (when rules are loaded).
  var checksRules: Bool { self == .firebase }

  /// Signed-URL parameters are verified (the GCS surfaces; Firebase has its own tokens).
  var checksSignedURLs: Bool { self == .gcs }

  /// Objects carry download tokens: a metadata read gives an object without one its first token,
  /// and a download's `?token=` must be one of them.
  var usesDownloadTokens: Bool { self == .firebase }

  /// `?generation=` reads may return a noncurrent version (GCS object versioning).
  var readsNoncurrentVersions: Bool { self == .gcs }

  /// Uploads speak X-Goog-Upload (raw, multipart, resumable) instead of `uploadType=`.
  var usesGoogUploadProtocol: Bool { self == .firebase }

  /// Upload defaults: a download token and an inline `Content-Disposition`.
  var setsUploadDefaults: Bool { self == .firebase }

  /// How a body's metadata applies: GCS lets `customTime` be written; Firebase keeps download
  /// tokens out of custom metadata.
  func patchOptions(replace: Bool) -> MetadataPatch.Options {
    MetadataPatch.Options(replace: replace, customTimeWritable: self == .gcs, tokensInCustomMetadata: self == .gcs)
  }

  func object(_ json: ResourceJSON, _ object: ObjectMetadata) -> [UInt8] {
    self == .firebase ? json.firebaseObject(object) : json.gcsObject(object)
  }

  func list(_ json: ResourceJSON, _ page: ListPage) -> [UInt8] {
    self == .firebase ? json.firebaseList(page) : json.gcsList(page)
  }
}

extension Surface {
  public var flavour: Flavour { self == .firebase ? .firebase : .gcs }
}
