import Testing

@testable import EmulatorStorage

private func patch(_ json: String, _ options: MetadataPatch.Options = .init()) throws -> MetadataPatch {
  try MetadataPatch(json: JSONValue.parse(Array(json.utf8)), options: options)
}

private func sample() -> ObjectMetadata {
  var object = ObjectMetadata(bucket: "bkt", name: "o", generation: 7, size: 1, md5: nil, crc32c: 0, now: 0)
  object.contentType = "text/plain"
  object.cacheControl = "no-cache"
  object.custom = ["a": "1", "b": "2"]
  object.downloadTokens = ["t1"]
  return object
}

@Suite struct MetadataPatchTests {
  @Test func absentKeysStayStringsReplaceNullsDelete() throws {
    var object = sample()
    try patch(#"{"contentType": "image/png", "cacheControl": null}"#).apply(to: &object)
    #expect(object.contentType == "image/png")
    #expect(object.cacheControl == nil)
    #expect(object.custom == ["a": "1", "b": "2"])
  }

  @Test func customMetadataMergesKeyByKey() throws {
    var object = sample()
    try patch(#"{"metadata": {"a": null, "c": "3", "n": 5, "t": true, "f": 1.50}}"#).apply(to: &object)
    #expect(object.custom == ["b": "2", "c": "3", "n": "5", "t": "true", "f": "1.50"])
  }

  @Test func metadataNullClearsCustomButKeepsTokensOnFirebase() throws {
    var object = sample()
    try patch(#"{"metadata": null}"#, .init(customTimeWritable: false, tokensInCustomMetadata: false)).apply(
      to: &object)
    #expect(object.custom.isEmpty)
    #expect(object.downloadTokens == ["t1"])
  }

  @Test func metadataNullOnGCSAlsoRemovesTokens() throws {
    var object = sample()
    try patch(#"{"metadata": null}"#).apply(to: &object)
    #expect(object.custom.isEmpty)
    #expect(object.downloadTokens.isEmpty)
  }

  @Test func tokensAsTheCustomKeyOnGCS() throws {
    var object = sample()
    try patch(#"{"metadata": {"firebaseStorageDownloadTokens": "x,y"}}"#).apply(to: &object)
    #expect(object.downloadTokens == ["x", "y"])
    #expect(object.custom["firebaseStorageDownloadTokens"] == nil)
  }

  @Test func readOnlyAndUnknownKeysAreIgnoredWhateverTheirValue() throws {
    var object = sample()
    let before = object
    try patch(
      #"{"bucket": "", "size": 5, "kind": null, "etag": null, "downloadTokens": null, "timeCreated": null, "name": {"x": 1}, "generation": "9", "md5Hash": [1]}"#
    ).apply(to: &object)
    #expect(object == before)
  }

  @Test func writableFieldsMustBeStringsOrNull() {
    #expect(throws: StorageError.self) { try patch(#"{"contentType": 5}"#) }
    #expect(throws: StorageError.self) { try patch(#"{"cacheControl": {"a": 1}}"#) }
    #expect(throws: StorageError.self) { try patch(#"{"metadata": {"k": {"nested": 1}}}"#) }
    #expect(throws: StorageError.self) { try patch(#"{"metadata": {"k": [1]}}"#) }
    #expect(throws: StorageError.self) { try patch(#"{"metadata": "x"}"#) }
    #expect(throws: StorageError.self) { try patch("[1]") }
    #expect(throws: StorageError.self) { try patch(#"{"customTime": "not a time"}"#) }
  }

  @Test func replaceClearsEverythingAbsent() throws {
    var object = sample()
    try patch(#"{"contentLanguage": "en", "metadata": {"z": "26"}}"#, .init(replace: true)).apply(to: &object)
    #expect(object.contentType == nil)
    #expect(object.cacheControl == nil)
    #expect(object.contentLanguage == "en")
    #expect(object.custom == ["z": "26"])
    #expect(object.downloadTokens.isEmpty)
  }

  @Test func customTimeIsNormalisedAndOnlyWritableOnGCS() throws {
    var object = sample()
    try patch(#"{"customTime": "2024-01-02T03:04:05Z"}"#).apply(to: &object)
    #expect(object.customTime == Timestamp.parse("2024-01-02T03:04:05.000Z"))
    var firebase = sample()
    try patch(#"{"customTime": "2024-01-02T03:04:05Z"}"#, .init(customTimeWritable: false)).apply(to: &firebase)
    #expect(firebase.customTime == nil)
  }

  @Test func etagChangesWithGenerationAndMetageneration() {
    var object = sample()
    let first = object.etag
    object.metageneration += 1
    let second = object.etag
    object.generation += 1
    #expect(Set([first, second, object.etag]).count == 3)
  }
}

@Suite struct PreconditionTests {
  let object = sample()

  @Test func writeConditions() throws {
    try Preconditions(ifGenerationMatch: 7).checkWrite(object, bucket: "bkt", name: "o")
    try Preconditions(ifGenerationMatch: 0).checkWrite(nil, bucket: "bkt", name: "o")
    try Preconditions(ifGenerationNotMatch: 0).checkWrite(object, bucket: "bkt", name: "o")
    try Preconditions(ifMetagenerationMatch: 1, ifMetagenerationNotMatch: 2).checkWrite(
      object, bucket: "bkt", name: "o")
    let failing: [(Preconditions, ObjectMetadata?)] = [
      (Preconditions(ifGenerationMatch: 0), object),
      (Preconditions(ifGenerationMatch: 8), object),
      (Preconditions(ifGenerationMatch: 8), nil),
      (Preconditions(ifGenerationNotMatch: 7), object),
      (Preconditions(ifGenerationNotMatch: 3), nil),
      (Preconditions(ifMetagenerationMatch: 2), object),
      (Preconditions(ifMetagenerationMatch: 1), nil),
      (Preconditions(ifMetagenerationNotMatch: 1), object),
    ]
    for (conditions, current) in failing {
      #expect(throws: StorageError.self) { try conditions.checkWrite(current, bucket: "bkt", name: "o") }
      do {
        try conditions.checkWrite(current, bucket: "bkt", name: "o")
      } catch {
        guard case .conditionNotMet = error else {
          Issue.record("expected conditionNotMet, got \(error)")
          continue
        }
      }
    }
    #expect(throws: StorageError.objectNotFound(bucket: "bkt", name: "o")) {
      try Preconditions(generation: 6).checkWrite(object, bucket: "bkt", name: "o")
    }
  }

  @Test func readConditionsGive412Or304() {
    #expect(throws: StorageError.notModified) { try Preconditions(ifGenerationNotMatch: 7).checkRead(object) }
    #expect(throws: StorageError.notModified) { try Preconditions(ifMetagenerationNotMatch: 1).checkRead(object) }
    #expect(throws: StorageError.notModified) {
      try Preconditions(ifNoneMatch: ["\"\(object.etag)\""]).checkRead(object)
    }
    #expect(throws: StorageError.notModified) { try Preconditions(ifNoneMatch: ["*"]).checkRead(object) }
    #expect(throws: StorageError.self) { try Preconditions(ifGenerationMatch: 1).checkRead(object) }
    #expect(throws: StorageError.self) { try Preconditions(ifMatch: ["other"]).checkRead(object) }
    #expect(throws: Never.self) { try Preconditions(ifMatch: [object.etag], ifNoneMatch: ["x"]).checkRead(object) }
    #expect(throws: StorageError.objectNotFound(bucket: "bkt", name: "o")) {
      try Preconditions(generation: 1).checkRead(object)
    }
  }
}
