import Foundation
import Testing

@testable import EmulatorStorage

/// XML multipart uploads live in the backend's upload space: on disk they survive a reopen
/// (a restart) with their metadata and parts, a torn part is never used, and they expire and are
/// capped as resumable sessions are. In memory the same limits hold.
@Suite struct MultipartUploadPersistenceTests {
  static let day: Int64 = 86_400_000

  /// A patch using every kind of change a record must keep.
  static func richPatch() -> MetadataPatch {
    var patch = MetadataPatch()
    patch.fields[.contentType] = .set("text/plain")
    patch.fields[.cacheControl] = .remove
    patch.clearCustom = true
    let removed: String? = nil
    patch.customUpdates = ["colour": "blue", "gone": removed]
    patch.tokens = .add(["t1", "t2"])
    return patch
  }

  func space(_ folder: TemporaryFolder) throws -> any UploadSpace {
    try FileBackend(root: folder.url.appendingPathComponent("data")).uploadSpace(.multipart)
  }

  @Test func anUploadAndItsPartsSurviveAReopenAndComplete() throws {
    let folder = TemporaryFolder()
    defer { folder.cleanUp() }
    let first = MultipartUploads(space: try space(folder), maxBytes: 1 << 20)
    let upload = try first.initiate(bucket: "bkt", name: "dir/obj", patch: Self.richPatch())
    let one = try first.putPart(
      upload.id, bucket: "bkt", name: "dir/obj", number: 1, bytes: Array("hello ".utf8), file: nil)
    // Part 2 arrives as a spooled body, which the space takes over.
    let spooled = folder.url.appendingPathComponent("spooled").path
    try Data("world".utf8).write(to: URL(fileURLWithPath: spooled))
    let two = try first.putPart(upload.id, bucket: "bkt", name: "dir/obj", number: 2, bytes: [], file: spooled)
    #expect(!FileManager.default.fileExists(atPath: spooled), "the spooled body was taken over")
    #expect(two.md5 == Digester.digest(Array("world".utf8)).md5)

    let reopened = MultipartUploads(space: try space(folder), maxBytes: 1 << 20)
    let loaded = try reopened.upload(upload.id, bucket: "bkt", name: "dir/obj")
    #expect(loaded.patch == Self.richPatch())
    #expect(loaded.initiated == upload.initiated)
    #expect(loaded.parts[1]?.md5 == one.md5 && loaded.parts[1]?.size == 6)
    #expect(loaded.parts[2]?.md5 == two.md5 && loaded.parts[2]?.size == 5)

    let store = try ObjectStore(backend: FileBackend(root: folder.url.appendingPathComponent("data")))
    _ = try store.createBucket("bkt")
    let object = try reopened.complete(upload.id, bucket: "bkt", name: "dir/obj", parts: [(1, one.md5), (2, nil)]) {
      upload, data throws(StorageError) in
      try store.insert(bucket: "bkt", name: "dir/obj", source: data, upload: ObjectStore.Upload(patch: upload.patch))
    }
    #expect(try store.read(bucket: "bkt", name: "dir/obj").1 == Array("hello world".utf8))
    #expect(object.contentType == "text/plain")
    #expect(reopened.count == 0)
    #expect(try space(folder).names().isEmpty, "completing removed the record and the parts")
  }

  @Test func aTornPartAStrayPartAndADamagedRecordAreNeverUsed() throws {
    let folder = TemporaryFolder()
    defer { folder.cleanUp() }
    let uploads = MultipartUploads(space: try space(folder), maxBytes: 1 << 20)
    let upload = try uploads.initiate(bucket: "bkt", name: "obj", patch: MetadataPatch())
    _ = try uploads.putPart(upload.id, bucket: "bkt", name: "obj", number: 1, bytes: [1, 2, 3], file: nil)
    let space = try space(folder)
    // A crash while part 2 was being written leaves only its temporary entry.
    try space.create(MultipartUploads.partTemp(upload.id, 2))
    try space.append(MultipartUploads.partTemp(upload.id, 2), bytes: [9, 9][...])
    // A part whose upload record is gone, a damaged record, a finished upload's hand-off.
    try space.replace(MultipartUploads.partName("abcdef01", 1), with: [7], temp: ".x")
    try space.replace(MultipartUploads.recordName("0badc0de"), with: Array("{\"id\":".utf8), temp: ".y")
    try space.replace(MultipartUploads.handOffName(upload.id), with: [1], temp: ".z")

    let reopened = MultipartUploads(space: space, maxBytes: 1 << 20)
    let loaded = try reopened.upload(upload.id, bucket: "bkt", name: "obj")
    #expect(Array(loaded.parts.keys) == [1], "the torn part 2 is not listed")
    #expect(reopened.count == 1)
    #expect(
      space.names().sorted()
        == [MultipartUploads.partName(upload.id, 1), MultipartUploads.recordName(upload.id)].sorted())
  }

  @Test(arguments: [true, false])
  func abandonedUploadsExpireAtStartUpAndBySweep(_ onDisk: Bool) throws {
    let folder = TemporaryFolder()
    defer { folder.cleanUp() }
    let space: any UploadSpace = onDisk ? try space(folder) : MemoryUploadSpace()
    let uploads = MultipartUploads(space: space, maxBytes: 1 << 20, ttlSeconds: 3600)
    let old = try uploads.initiate(bucket: "bkt", name: "a", patch: MetadataPatch())
    _ = try uploads.putPart(old.id, bucket: "bkt", name: "a", number: 3, bytes: [1], file: nil)
    let later = Timestamp.nowMilliseconds() + 2 * 3_600_000
    if onDisk {
      let reopened = MultipartUploads(space: space, maxBytes: 1 << 20, ttlSeconds: 3600, now: later)
      #expect(reopened.count == 0)
      #expect(space.names().isEmpty, "the expired upload's record and part were removed at start-up")
      return
    }
    #expect(uploads.sweep(now: Timestamp.nowMilliseconds()) == 0, "not yet expired")
    #expect(uploads.sweep(now: later) == 1)
    #expect(throws: StorageError.uploadNotFound(old.id)) { try uploads.upload(old.id, bucket: "bkt", name: "a") }
    #expect(space.names().isEmpty)
  }

  @Test(arguments: [true, false])
  func uploadFloodAndOversizedPartsAreRefusedInMemoryAndOnDisk(_ onDisk: Bool) throws {
    let folder = TemporaryFolder()
    defer { folder.cleanUp() }
    let space: any UploadSpace = onDisk ? try space(folder) : MemoryUploadSpace()
    let uploads = MultipartUploads(space: space, maxUploads: 2, maxBytes: 10, ttlSeconds: 3600)
    let first = try uploads.initiate(bucket: "bkt", name: "a", patch: MetadataPatch())
    _ = try uploads.initiate(bucket: "bkt", name: "b", patch: MetadataPatch())
    #expect(throws: StorageError.tooManyUploadSessions(limit: 2, retryAfterSeconds: 60)) {
      try uploads.initiate(bucket: "bkt", name: "c", patch: MetadataPatch())
    }
    _ = try uploads.putPart(
      first.id, bucket: "bkt", name: "a", number: 1, bytes: Array(repeating: 1, count: 6), file: nil)
    let before = space.names().sorted()
    #expect(throws: StorageError.self) {
      try uploads.putPart(
        first.id, bucket: "bkt", name: "a", number: 2, bytes: Array(repeating: 1, count: 5), file: nil)
    }
    #expect(space.names().sorted() == before, "a part past the budget is refused before it is written")
    // Replacing part 1 counts its new size only.
    _ = try uploads.putPart(
      first.id, bucket: "bkt", name: "a", number: 1, bytes: Array(repeating: 2, count: 10), file: nil)
    // Expired uploads make room for a new one.
    _ = try uploads.initiate(
      bucket: "bkt", name: "c", patch: MetadataPatch(), now: Timestamp.nowMilliseconds() + 2 * 3_600_000)
    #expect(uploads.count == 1)
  }

  @Test func aFailedCompleteKeepsTheUploadAndItsParts() throws {
    let folder = TemporaryFolder()
    defer { folder.cleanUp() }
    let space = try space(folder)
    let uploads = MultipartUploads(space: space, maxBytes: 1 << 20)
    let upload = try uploads.initiate(bucket: "bkt", name: "obj", patch: MetadataPatch())
    _ = try uploads.putPart(upload.id, bucket: "bkt", name: "obj", number: 1, bytes: [1], file: nil)
    _ = try uploads.putPart(upload.id, bucket: "bkt", name: "obj", number: 2, bytes: [2], file: nil)
    #expect(throws: StorageError.conditionNotMet("no")) {
      try uploads.complete(upload.id, bucket: "bkt", name: "obj", parts: [(1, nil), (2, nil)]) {
        _, _ throws(StorageError) -> ObjectMetadata in throw StorageError.conditionNotMet("no")
      }
    }
    #expect(try uploads.upload(upload.id, bucket: "bkt", name: "obj").parts.count == 2)
    #expect(!space.names().contains(MultipartUploads.handOffName(upload.id)), "the hand-off was removed")
  }

  @Test func recordsOfAnotherShapeAreDamagedNotTrusted() {
    var record = Self.richPatchRecord()
    #expect(MultipartUploads.Upload(record: record)?.patch == Self.richPatch())
    record = Array(String(decoding: record, as: UTF8.self).replacingOccurrences(of: "\"add\"", with: "\"drop\"").utf8)
    #expect(MultipartUploads.Upload(record: record) == nil, "an unknown token mode")
    #expect(MultipartUploads.parse(name: "ab.10001.part") == .leftover, "part numbers stop at 10 000")
    #expect(MultipartUploads.parse(name: "ab.+5.part") == .leftover)
    #expect(MultipartUploads.parse(name: "ab.7.part") == .part(id: "ab", number: 7))
    #expect(MultipartUploads.parse(name: ".ab.tmp") == .leftover)
  }

  static func richPatchRecord() -> [UInt8] {
    MultipartUploads.Upload(id: "ab", bucket: "b", name: "n", patch: richPatch(), initiated: 5).record
  }
}
