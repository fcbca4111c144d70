import Foundation
import Testing

@testable import EmulatorStorage

/// The compact in-memory index (issue #22 target 1: at most 400 bytes of memory per object):
/// `ObjectMetadata`'s compact fields, `ObjectTable`, and the restart that fills them.
@Suite struct CompactIndexTests {
  func upload(_ name: String, bucket: String = "bkt") -> ObjectMetadata {
    var object = ObjectMetadata(
      bucket: bucket, name: name, generation: 1_795_000_000_000_001, size: 1, md5: Array(100..<116), crc32c: 7,
      now: 1_795_000_000_000)
    object.contentType = "application/octet-stream"
    object.storageClass = "STANDARD"
    object.acl = try! AccessControl.predefined("projectPrivate", scope: .object)
    return object
  }

  /// Where a string's bytes live (nil for one stored inline): two strings with the same address
  /// share one allocation.
  func address(_ text: String?) -> UnsafeRawPointer? {
    var copy = text
    return copy?.withUTF8 { $0.count > 15 ? UnsafeRawPointer($0.baseAddress) : nil } ?? nil
  }

  @Test func anUploadedObjectFitsInlineWithoutABox() {
    #expect(MemoryLayout<ObjectMetadata>.stride <= 136, "128 bytes of metadata and where the bytes are")
    let object = upload("p/0000/0000001")
    #expect(object.rare == nil, "content type, storage class and ACL are not rare fields")
    #expect(object.md5 == Array(100..<116))
    #expect(object.storageClass == "STANDARD")
    #expect(object.acl.count == 3)
  }

  @Test func rareFieldsLiveInABoxThatGoesWhenTheyAreCleared() {
    var object = upload("a")
    object.cacheControl = nil
    object.custom = [:]
    #expect(object.rare == nil, "clearing what is not set makes no box")
    object.cacheControl = "no-cache"
    object.custom["k"] = "v"
    object.downloadTokens = ["t"]
    object.componentCount = 2
    object.customTime = 5
    #expect(object.rare != nil)
    let copy = object
    object.custom["k"] = "changed"
    #expect(copy.custom == ["k": "v"], "a copy keeps its own fields (the box is never changed in place)")
    object.cacheControl = nil
    object.custom = [:]
    object.downloadTokens = []
    object.componentCount = nil
    #expect(object.rare != nil)
    object.customTime = nil
    #expect(object.rare == nil)
    #expect(object == upload("a"))
  }

  @Test func storageClassesOutsideTheFourCodesAreKeptAsText() {
    var object = upload("a")
    for text in ["NEARLINE", "COLDLINE", "ARCHIVE", "STANDARD"] {
      object.storageClass = text
      #expect(object.storageClass == text)
      #expect(object.rare == nil)
    }
    object.storageClass = "DURABLE_REDUCED_AVAILABILITY"
    #expect(object.storageClass == "DURABLE_REDUCED_AVAILABILITY")
    #expect(object != upload("a"))
    object.storageClass = "STANDARD"
    #expect(object.rare == nil, "the text goes when a code replaces it")
    object.storageClass = nil
    #expect(object.storageClass == nil)
  }

  @Test func fieldsCompareByTheirBytesNotByUnicodeEquivalence() {
    var composed = upload("a")
    var decomposed = upload("a")
    composed.contentType = "text/caf\u{E9}"
    decomposed.contentType = "text/cafe\u{301}"
    #expect(composed != decomposed)
    composed.contentType = decomposed.contentType
    composed.contentDisposition = "\u{E9}"
    decomposed.contentDisposition = "e\u{301}"
    #expect(composed != decomposed)
    #expect(MD5Digest(Array(0..<16)).bytes == Array(0..<16))
  }

  @Test func contentTypesAndACLsDecodedFromASnapshotAreSharedBetweenObjects() throws {
    let folder = TemporaryFolder()
    defer { folder.cleanUp() }
    let path = folder.url.appendingPathComponent("snap").path
    var odd = upload("c")
    odd.contentType = "application/x-something-else"
    odd.acl = [AccessControl(entity: "user-someone@example.com", role: "OWNER")]
    odd.storageClass = "REGIONAL"
    let objects = [upload("a"), upload("b"), odd, upload("d")]
    try IndexSnapshot.write(
      epoch: 1, buckets: [(BucketInfo(name: "bkt", timeCreated: 1), objects)], damaged: [], to: path, sync: false)
    let decoded = try IndexSnapshot.read(path).state.objects
    #expect(decoded == objects)
    #expect(decoded[2].storageClass == "REGIONAL")
    let first = try #require(address(decoded[0].contentType))
    #expect(address(decoded[1].contentType) == first)
    #expect(address(decoded[3].contentType) == first, "shared again after a different one")
    #expect(address(decoded[2].contentType) != first)
    func base(_ acl: [AccessControl]) -> UnsafeRawPointer? { acl.withUnsafeBytes { $0.baseAddress } }
    #expect(base(decoded[0].acl) == base(decoded[1].acl))
    #expect(base(decoded[0].acl) == base(decoded[3].acl))
    #expect(decoded[2].acl == odd.acl)
  }

  @Test func anObjectTableBehavesLikeADictionary() {
    var table = ObjectTable()
    var reference: [ObjectKey: ObjectMetadata] = [:]
    var random = SystemRandomNumberGenerator()
    for step in 0..<5_000 {
      let name = "n\(Int.random(in: 0..<300, using: &random))"
      let key = ObjectKey(name)
      if Bool.random(using: &random) {
        var object = upload(name)
        object.generation = Int64(step)
        #expect(table.updateValue(object, forKey: key) == reference.updateValue(object, forKey: key))
      } else {
        #expect(table.removeValue(forKey: key) == reference.removeValue(forKey: key))
      }
      #expect(table.count == reference.count)
    }
    for index in 0..<300 {
      let key = ObjectKey("n\(index)")
      #expect(table[key] == reference[key])
    }
    #expect(table.isEmpty == reference.isEmpty)
  }

  /// The table grows a shard at a time: that bounds the pause only if the names of one folder, as
  /// uploads and seed scripts make them, spread over the shards evenly.
  @Test func namesOfOneFolderSpreadOverTheShards() {
    let long = String(repeating: "deep/", count: 20)
    for prefix in ["fb/1-", "up/", long, ""] {
      var perShard = [Int](repeating: 0, count: ObjectTable.shardCount)
      let names = 64 * ObjectTable.shardCount
      for n in 0..<names { perShard[ObjectTable.shard(of: ObjectKey("\(prefix)\(n)"))] += 1 }
      let average = names / ObjectTable.shardCount
      #expect(perShard.max()! <= average * 2, "prefix \(prefix): \(perShard.max()!) in one shard")
      #expect(perShard.min()! >= average / 2, "prefix \(prefix): \(perShard.min()!) in one shard")
    }
  }

  @Test func aReservedTableTakesMoreThanItReserved() {
    var table = ObjectTable()
    table.reserveCapacity(1_000)
    for n in 0..<5_000 { table.updateValue(upload("r\(n)"), forKey: ObjectKey("r\(n)")) }
    #expect(table.count == 5_000)
    #expect(table[ObjectKey("r4999")].map(\.name) == "r4999")
    #expect(table.removeValue(forKey: ObjectKey("r0"))?.name == "r0")
    #expect(table.count == 4_999)
  }

  @Test func batchesFromTwoProducersAreAllDeliveredBeforeAFailureIsReported() throws {
    let batches = ObjectBatches(producers: 2)
    let failing = Thread {
      for n in 0..<20 {
        var batch = ObjectBatch(bucket: "bkt")
        batch.objects = [ObjectMetadata(bucket: "bkt", name: "f\(n)", generation: 1, size: 0, md5: nil, crc32c: 0, now: 0)]
        batch.keys = [ObjectKey("f\(n)")]
        batches.push(batch)
      }
      batches.finish(failure: "broken")
    }
    let replaying = Thread {
      batches.report("a line")
      for n in 0..<20 {
        let object = ObjectMetadata(bucket: "bkt", name: "r\(n)", generation: 1, size: 0, md5: nil, crc32c: 0, now: 0)
        batches.push(ObjectBatch(unordered: [object]))
      }
      batches.finish()
    }
    failing.start()
    replaying.start()
    var delivered = 0
    #expect(throws: StorageError.self) {
      while let batch = try batches.next() { delivered += batch.objects.count }
    }
    #expect(delivered == 40, "the consumer drains every producer before it throws")
    #expect(batches.takeMessages() == ["a line"])
  }

  @Test func namesReplayedAfterAKillAreListedInOrderAmongTheSnapshotsNames() throws {
    let folder = TemporaryFolder()
    defer { folder.cleanUp() }
    let root = folder.url.appendingPathComponent("data")
    do {
      let store = try ObjectStore(backend: FileBackend(root: root))
      for n in stride(from: 0, to: 200, by: 2) {
        _ = try store.insert(bucket: "bkt", name: String(format: "k%03d", n), data: [UInt8(n)])
      }
      try store.close()
    }
    do {
      // Killed after these: new names between the snapshot's, a replaced and a deleted one.
      let store = try ObjectStore(backend: FileBackend(root: root))
      for n in stride(from: 1, to: 200, by: 10) {
        _ = try store.insert(bucket: "bkt", name: String(format: "k%03d", n), data: [UInt8(n)])
      }
      _ = try store.insert(bucket: "bkt", name: "k004", data: [44])
      try store.delete(bucket: "bkt", name: "k006")
      _ = try store.insert(bucket: "bkt", name: "a-first", data: [1])
      _ = try store.insert(bucket: "bkt", name: "z-last", data: [1])
    }
    let backend = try FileBackend(root: root)
    let store = try ObjectStore(backend: backend)
    #expect(backend.loadedFrom == .snapshot(replayed: 24))
    var expected = stride(from: 0, to: 200, by: 2).map { String(format: "k%03d", $0) }
    expected += stride(from: 1, to: 200, by: 10).map { String(format: "k%03d", $0) }
    expected += ["a-first", "z-last"]
    expected.removeAll { $0 == "k006" }
    var query = ListQuery()
    query.maxResults = 1000
    let names = try store.list(bucket: "bkt", query: query).items.map(\.name)
    #expect(names == expected.sorted())
    #expect(try store.read(bucket: "bkt", name: "k004").1 == [44])
    #expect(try store.read(bucket: "bkt", name: "k011").1 == [11])
  }

  @Test func aDamagedRecordMetDuringTheReplayIsLoggedAndTheObjectCanBeDeleted() throws {
    let folder = TemporaryFolder()
    defer { folder.cleanUp() }
    let root = folder.url.appendingPathComponent("data")
    do {
      let store = try ObjectStore(backend: FileBackend(root: root))
      _ = try store.insert(bucket: "bkt", name: "kept", data: [1])
      try store.close()
    }
    let generation: Int64
    do {
      let store = try ObjectStore(backend: FileBackend(root: root))
      generation = try store.insert(bucket: "bkt", name: "torn", data: [2]).generation
    }
    // A newer record of it whose checksum matches but whose JSON does not parse.
    try SegmentLogTests.appendToNewestSegment(
      in: root,
      SegmentEntry.encode(
        .record, bucket: "bkt", name: "torn", generation: generation, metageneration: 2,
        payload: Array("{\"format\": 1, \"bucket\"".utf8)))
    let lines = LogLines()
    let backend = try FileBackend(root: root)
    let store = try ObjectStore(backend: backend, log: { lines.append($0) })
    #expect(backend.loadedFrom == .snapshot(replayed: 1))
    #expect(lines.all.contains { $0.contains("torn in the log is damaged") })
    #expect(try store.read(bucket: "bkt", name: "kept").1 == [1])
    #expect(backend.isDamaged(bucket: "bkt", name: "torn"))
    #expect(throws: StorageError.self) { try store.metadata(bucket: "bkt", name: "torn") }
    try store.delete(bucket: "bkt", name: "torn")
    #expect(!backend.isDamaged(bucket: "bkt", name: "torn"))
    let reopened = try FileBackend(root: root)
    _ = try ObjectStore(backend: reopened)
    #expect(!reopened.isDamaged(bucket: "bkt", name: "torn"), "the tombstone beats the damaged record")
  }
}
