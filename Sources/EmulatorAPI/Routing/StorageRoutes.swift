import EmulatorHTTP

/// Everything the storage API answers, one entry per line: methods, path, the flags that choose
/// between entries of one path (`when:` all of them, `unless:` none of them), the body it takes
/// and where it runs. The first entry of a path that applies and takes the method wins; a path
/// with entries but none for the method is a 405 whose `Allow` lists theirs. The emulator's own
/// routes (`/internal/…`, `/ui/…`) are added by their owners through `FrontDoor`.
///
/// Adding a route: one entry here (or in its owner's list) and its handler.
extension StorageAPI {
  /// The GCS JSON surfaces with buckets: `/storage/v1/b…` and the bare `/b…`.
  private static let gcs: [Surface] = [.json, .bare]
  /// The surfaces with object metadata: the GCS ones and Firebase `/v0/b…`.
  private static let metadataSurfaces: [Surface] = [.json, .bare, .firebase]

  public static let routes: [RouteEntry] = bucketRoutes + objectRoutes + xmlRoutes + ownRoutes + clientRoutes

  // MARK: JSON: buckets (`/storage/v1/b`, `/b`)

  static let bucketRoutes: [RouteEntry] = [
    RouteEntry("GET HEAD", .storage(gcs, .buckets), runs: .memory, .json(StorageAPI.listBuckets)),
    RouteEntry("POST", .storage(gcs, .buckets), body: .document, .json(StorageAPI.createBucket)),
    RouteEntry("GET HEAD", .storage(gcs, .bucket), runs: .memory, .json(StorageAPI.getBucket)),
    RouteEntry("PATCH PUT", .storage(gcs, .bucket), body: .document, .json(StorageAPI.updateBucket)),
    RouteEntry("DELETE", .storage(gcs, .bucket), .json(StorageAPI.deleteBucket)),
    RouteEntry("GET HEAD", .storage(gcs, .storageLayout), runs: .memory, .json(StorageAPI.storageLayout)),
    RouteEntry("GET HEAD", .storage(gcs, .managedFolders), runs: .memory, .json(StorageAPI.managedFolders)),
    RouteEntry(
      "POST", .storage(gcs, .managedFolders), body: .document, runs: .memory,
      .json(StorageAPI.managedFolders)),
  ]

  // MARK: JSON: objects (`…/b/{bucket}/o`, `…/o/{name}`)

  static let objectRoutes: [RouteEntry] = [
    // Resumable sessions: the session URL is the bucket's /o with ?upload_id=.
    RouteEntry(
      "PUT POST", .storage([.firebase], .objects), when: .session, body: .objectData,
      .json(StorageAPI.firebaseResumableCommand)),
    RouteEntry(
      "PUT POST DELETE", .storage([.upload], .objects), when: .session, body: .objectData,
      .json(StorageAPI.gcsResumableChunk)),
    RouteEntry(
      "PUT POST", .storage([.json], .objects), when: .session, body: .objectData,
      .json(StorageAPI.gcsResumableChunk)),
    // Listing; uploads (the start of a resumable one carries the metadata document).
    RouteEntry("GET HEAD", .storage(gcs, .objects), unless: .session, runs: .memory, .json(StorageAPI.list)),
    RouteEntry("GET HEAD", .storage([.firebase], .objects), unless: .session, .json(StorageAPI.list)),
    RouteEntry(
      "POST", .storage([.firebase, .upload], .objects), when: .resumableStart, unless: .session, body: .document,
      .json(StorageAPI.upload)),
    RouteEntry(
      "POST", .storage([.firebase, .upload], .objects), unless: .session, body: .objectData, runs: .smallWrite,
      .json(StorageAPI.upload)),
    RouteEntry(
      "POST", .storage(gcs, .objects), when: [.uploadType, .resumableStart], unless: .session, body: .document,
      .json(StorageAPI.upload)),
    RouteEntry(
      "POST", .storage(gcs, .objects), when: .uploadType, unless: .session, body: .objectData, runs: .smallWrite,
      .json(StorageAPI.upload)),
    // Paths that only say where to go instead (every method: 404).
    RouteEntry(
      "", .storage([.download], .objects), unless: .session, runs: .memory,
      notFound("Downloads need an object name: /download/storage/v1/b/{bucket}/o/{object}.")),
    RouteEntry(
      "", .storage([.upload], .object), runs: .memory,
      notFound("Uploads go to /upload/storage/v1/b/{bucket}/o?uploadType=…&name=….")),
    // One object: downloads, metadata, updates, Firebase tokens and uploads, copies, deletes.
    RouteEntry("GET HEAD", .storage([.download], .object), .json(StorageAPI.download)),
    RouteEntry("GET HEAD", .storage(metadataSurfaces, .object), when: .media, .json(StorageAPI.download)),
    RouteEntry("GET HEAD", .storage(gcs, .object), runs: .memory, .json(StorageAPI.getMetadata)),
    // Firebase reads may create the first download token: a write.
    RouteEntry("GET HEAD", .storage([.firebase], .object), .json(StorageAPI.getMetadata)),
    RouteEntry(
      "PATCH", .storage(metadataSurfaces, .object), body: .document, runs: .deferred,
      .jsonLater(StorageAPI.merge)),
    RouteEntry(
      "PUT", .storage(gcs, .object), body: .document, runs: .deferred,
      .jsonLater(StorageAPI.replace)),
    RouteEntry(
      "POST", .storage([.firebase], .object), when: .tokenCommand, body: .document,
      .json(StorageAPI.tokenCommand)),
    RouteEntry(
      "POST", .storage([.firebase], .object), when: .resumableStart, unless: .tokenCommand, body: .document,
      .json(StorageAPI.upload)),
    RouteEntry(
      "POST", .storage([.firebase], .object), body: .objectData, runs: .smallWrite, .json(StorageAPI.upload)),
    RouteEntry(
      "POST", .storage(gcs, .object), when: .action, body: .document, .json(StorageAPI.objectAction)),
    RouteEntry("DELETE", .storage(metadataSurfaces, .object), .json(StorageAPI.deleteObject)),
  ]

  /// A path that exists only to say where to go instead.
  private static func notFound(_ message: String) -> RouteHandler {
    .json { _ in { (_: RequestContext) throws -> HTTPResponse in throw APIError(404, .notFound, message) } }
  }

  // MARK: XML API (`/<bucket>/<object>`, `Host: <bucket>.<xml_virtual_host>`), POST policies

  static let xmlRoutes: [RouteEntry] = [
    RouteEntry("GET HEAD", .xml(.service), .xml(StorageAPI.xmlListBuckets)),
    RouteEntry("GET HEAD", .xml(.bucket), .xml(StorageAPI.xmlList)),
    RouteEntry("PUT", .xml(.bucket), body: .document, .xml(StorageAPI.xmlCreateBucket)),
    RouteEntry("DELETE", .xml(.bucket), .xml(StorageAPI.xmlDeleteBucket)),
    RouteEntry("GET HEAD DELETE", .xml(.object), when: .xmlMultipart, .xml(StorageAPI.xmlMultipart)),
    RouteEntry("PUT", .xml(.object), when: .xmlMultipart, body: .objectData, .xml(StorageAPI.xmlMultipart)),
    RouteEntry("POST", .xml(.object), when: .xmlMultipart, body: .document, .xml(StorageAPI.xmlMultipart)),
    RouteEntry("GET HEAD", .xml(.object), unless: .xmlMultipart, .xml(StorageAPI.xmlGet)),
    RouteEntry("PUT", .xml(.object), when: .xmlCopy, unless: .xmlMultipart, .xml(StorageAPI.xmlCopy)),
    RouteEntry("PUT", .xml(.object), unless: .xmlMultipart, body: .objectData, .xml(StorageAPI.xmlPut)),
    RouteEntry(
      "POST", .xml(.object), when: .xmlResumableStart, unless: .xmlMultipart, body: .document,
      .xml(StorageAPI.xmlResumableStart(_:))),
    RouteEntry("DELETE", .xml(.object), unless: .xmlMultipart, .xml(StorageAPI.xmlDelete)),
    RouteEntry("POST", .postPolicy, body: .objectData, .api(StorageAPI.postPolicyUpload)),
  ]

  // MARK: The API's own paths

  static let ownRoutes: [RouteEntry] = [
    // What `@firebase/rules-unit-testing` calls to replace the security rules.
    RouteEntry("PUT", .path(setRulesPath), body: .document, runs: .memory, .api(StorageAPI.setRules))
  ]
}
