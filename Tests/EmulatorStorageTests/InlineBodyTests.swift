import Foundation
import Testing

@testable import EmulatorStorage

/// Small objects keep their bytes in their log record (`FileBackend.inlineLimit`): no data file,
/// one append per write. Their bytes must follow them through every path a record takes:
/// metadata changes, restarts with and without the snapshot, compaction, copies, versioning.
@Suite struct InlineBodyTests {
  func open(_ root: URL, inlineLimit: Int = 64) throws -> (FileBackend, ObjectStore) {
    let backend = try FileBackend(root: root, inlineLimit: inlineLimit)
    return (backend, try ObjectStore(backend: backend))
  }

  func dataFiles(_ root: URL) -> [String] {
    let objects = root.appendingPathComponent("buckets")
    let all = FileManager.default.enumerator(atPath: objects.path)?.allObjects as? [String] ?? []
    return all.filter { $0.hasSuffix(".data") }
  }

  /// Every object of "bkt" as "name bytes", read through the store.
  func contents(_ store: ObjectStore) throws -> [String] {
    try store.list(bucket: "bkt", query: ListQuery()).items.map {
      "\($0.name) \(try store.read(bucket: "bkt", name: $0.name).1)"
    }
  }

  /// Opens `root` three ways: as it is (snapshot or log), and without `index.snapshot` (every
  /// segment scanned), returning what each store holds.
  func reopenedContents(_ root: URL) throws -> [[String]] {
    var seen: [[String]] = []
    let (_, store) = try open(root)
    seen.append(try contents(store))
    try store.close()
    try? FileManager.default.removeItem(at: root.appendingPathComponent("index.snapshot"))
    let (backend, scanned) = try open(root)
    #expect(backend.loadedFrom == .scan)
    seen.append(try contents(scanned))
    return seen
  }

  @Test func aSmallObjectHasNoDataFileAndItsBytesSurviveEveryKindOfRestart() throws {
    let folder = TemporaryFolder()
    defer { folder.cleanUp() }
    let root = folder.url.appendingPathComponent("data")
    let (_, store) = try open(root)
    let small = try store.insert(bucket: "bkt", name: "small", data: Array("tiny".utf8))
    _ = try store.insert(bucket: "bkt", name: "empty", data: [])
    _ = try store.insert(bucket: "bkt", name: "large", data: Array(repeating: 7, count: 65))
    #expect(small.body.isInline)
    #expect(dataFiles(root).count == 1, "only the object over the limit has a data file")
    #expect(try store.read(bucket: "bkt", name: "small").1 == Array("tiny".utf8))
    guard case .bytes(let bytes) = try store.open(bucket: "bkt", name: "small").1 else {
      Issue.record("an inline object is served from memory")
      return
    }
    #expect(bytes == Array("tiny".utf8))
    let expected = try contents(store)
    // Not closed: as after kill -9 (the log alone).
    for seen in try reopenedContents(root) { #expect(seen == expected) }
  }

  @Test func aMetadataChangeCarriesTheBytesIntoItsRecord() throws {
    let folder = TemporaryFolder()
    defer { folder.cleanUp() }
    let root = folder.url.appendingPathComponent("data")
    let (_, store) = try open(root)
    _ = try store.insert(bucket: "bkt", name: "o", data: [1, 2, 3])
    var patch = MetadataPatch()
    patch.fields[.contentType] = .set("text/plain")
    for _ in 0..<3 { _ = try store.update(bucket: "bkt", name: "o", patch: patch) }
    #expect(try store.read(bucket: "bkt", name: "o").1 == [1, 2, 3])
    for seen in try reopenedContents(root) { #expect(seen == ["o [1, 2, 3]"]) }
    let (_, reopened) = try open(root)
    #expect(try reopened.metadata(bucket: "bkt", name: "o").metageneration == 4)
    #expect(try reopened.metadata(bucket: "bkt", name: "o").contentType == "text/plain")
  }

  /// Compaction copies live inline records into the active segment and removes the old one: the
  /// index must point at the copies, and so must a restart from the new snapshot or the log.
  @Test func compactionMovesTheBytesAndTheIndexFollows() throws {
    let folder = TemporaryFolder()
    defer { folder.cleanUp() }
    let root = folder.url.appendingPathComponent("data")
    let (backend, store) = try open(root)
    backend.segments.rollBytes = 1024
    backend.compactionSlack = 0
    _ = try store.insert(bucket: "bkt", name: "kept", data: Array("keep me".utf8))
    var patch = MetadataPatch()
    patch.customUpdates["k"] = "v"
    _ = try store.update(bucket: "bkt", name: "kept", patch: patch)
    for round in 0..<40 {
      for n in 0..<4 { _ = try store.insert(bucket: "bkt", name: "churn\(n)", data: [UInt8(round), UInt8(n)]) }
    }
    let firstSegment = try #require(backend.segments.oldestSealed)
    let before = try #require(try store.lookup("bkt", "kept")).body
    try backend.saveSnapshot(store.snapshotState())
    store.compactWhileDue()
    let after = try #require(try store.lookup("bkt", "kept")).body
    #expect(after.sequence > before.sequence, "the record moved to a newer segment")
    #expect(backend.segments.oldestSealed.map { $0 > firstSegment } ?? true, "its old segment was removed")
    #expect(try store.read(bucket: "bkt", name: "kept").1 == Array("keep me".utf8))
    let expected = try contents(store)
    for seen in try reopenedContents(root) { #expect(seen == expected) }
  }

  @Test func replacingMovesBetweenADataFileAndTheRecordBothWays() throws {
    let folder = TemporaryFolder()
    defer { folder.cleanUp() }
    let root = folder.url.appendingPathComponent("data")
    let (_, store) = try open(root)
    _ = try store.insert(bucket: "bkt", name: "o", data: Array(repeating: 1, count: 100))
    #expect(dataFiles(root).count == 1)
    _ = try store.insert(bucket: "bkt", name: "o", data: [2])
    #expect(dataFiles(root).isEmpty, "the replaced data file is removed")
    #expect(try store.read(bucket: "bkt", name: "o").1 == [2])
    _ = try store.insert(bucket: "bkt", name: "o", data: Array(repeating: 3, count: 100))
    #expect(dataFiles(root).count == 1)
    #expect(try store.read(bucket: "bkt", name: "o").1 == Array(repeating: 3, count: 100))
    try store.delete(bucket: "bkt", name: "o")
    _ = try store.insert(bucket: "bkt", name: "p", data: [4])
    try store.delete(bucket: "bkt", name: "p")
    #expect(dataFiles(root).isEmpty)
    for seen in try reopenedContents(root) { #expect(seen.isEmpty) }
  }

  @Test func copiesAndComposesReadInlineSources() throws {
    let folder = TemporaryFolder()
    defer { folder.cleanUp() }
    let root = folder.url.appendingPathComponent("data")
    let (_, store) = try open(root)
    _ = try store.insert(bucket: "bkt", name: "a", data: Array("ab".utf8))
    _ = try store.insert(bucket: "bkt", name: "big", data: Array(repeating: 0x7A, count: 70))
    let copy = try store.copy(from: "bkt", "a", to: "bkt", "copy")
    #expect(copy.body.isInline)
    let small = try store.compose(bucket: "bkt", name: "small", sources: [.init(name: "a"), .init(name: "a")])
    #expect(small.body.isInline)
    let mixed = try store.compose(bucket: "bkt", name: "mixed", sources: [.init(name: "a"), .init(name: "big")])
    #expect(!mixed.body.isInline, "over the limit: a data file")
    #expect(try store.read(bucket: "bkt", name: "copy").1 == Array("ab".utf8))
    #expect(try store.read(bucket: "bkt", name: "small").1 == Array("abab".utf8))
    #expect(try store.read(bucket: "bkt", name: "mixed").1 == Array("ab".utf8) + Array(repeating: 0x7A, count: 70))
    let expected = try contents(store)
    for seen in try reopenedContents(root) { #expect(seen == expected) }
  }

  /// A replaced inline generation in a versioned bucket gets a noncurrent data file: its record
  /// is no longer live, and compaction drops it.
  @Test func aNoncurrentGenerationOfASmallObjectOutlivesItsRecord() throws {
    let folder = TemporaryFolder()
    defer { folder.cleanUp() }
    let root = folder.url.appendingPathComponent("data")
    let (backend, store) = try open(root)
    backend.segments.rollBytes = 512
    backend.compactionSlack = 0
    _ = try store.createBucket("ver", resource: .object([("versioning", .object([("enabled", .bool(true))]))]))
    let first = try store.insert(bucket: "ver", name: "v", data: [1])
    _ = try store.insert(bucket: "ver", name: "v", data: [2])
    for round in 0..<30 { _ = try store.insert(bucket: "bkt", name: "churn", data: [UInt8(round)]) }
    try backend.saveSnapshot(store.snapshotState())
    store.compactWhileDue()
    var old = Preconditions()
    old.generation = first.generation
    #expect(try store.read(bucket: "ver", name: "v", conditions: old).1 == [1])
    try store.close()
    let (_, reopened) = try open(root)
    #expect(try reopened.read(bucket: "ver", name: "v", conditions: old).1 == [1])
    #expect(try reopened.read(bucket: "ver", name: "v").1 == [2])
  }

  /// An inline record whose bytes do not match its size (written by hand: a bug or damage) is
  /// reported damaged, never served short.
  @Test func anInlineRecordWhoseBytesDoNotMatchItsSizeIsDamage() throws {
    var object = ObjectMetadata(bucket: "bkt", name: "o", generation: 5, size: 10, md5: nil, crc32c: 0, now: 0)
    object.metageneration = 1
    let frame = SegmentEntry.inlineRecord(object, body: [1, 2, 3])
    guard case .entry(let entry) = SegmentEntry.parse(frame, at: 0) else {
      Issue.record("the frame parses")
      return
    }
    var scan = SegmentScan()
    scan.add(entry, key: entry.key, sequence: 1)
    #expect(scan.winners[entry.key]?.damaged == true)
    // A metadata length past the payload is damage too.
    var lying = frame
    lying[lying.count - 3 - IndexSnapshot.encode(object).count - 4] = 0xFF
    let fixed = SegmentEntry.encode(
      .inlineRecord, bucket: "bkt", name: "o", generation: 5, metageneration: 1,
      payload: Array(lying[(frame.count - 3 - IndexSnapshot.encode(object).count - 4)...]))
    guard case .entry(let bad) = SegmentEntry.parse(fixed, at: 0) else {
      Issue.record("the frame parses")
      return
    }
    #expect(bad.recordParts == nil)
    var second = SegmentScan()
    second.add(bad, key: bad.key, sequence: 1)
    #expect(second.winners[bad.key]?.damaged == true)
  }

  /// A metadata record of an inline object written without its bytes would win over the record
  /// that holds them: the backend refuses it, and the object keeps its bytes.
  @Test func aMetadataRecordWithoutTheBytesOfAnInlineObjectIsRefused() throws {
    let folder = TemporaryFolder()
    defer { folder.cleanUp() }
    let root = folder.url.appendingPathComponent("data")
    let (backend, store) = try open(root)
    let object = try store.insert(bucket: "bkt", name: "o", data: [5, 6])
    var changed = object
    changed.metageneration += 1
    #expect(throws: StorageError.self) { try backend.commit(changed, data: nil, previous: object, carrying: nil) }
    let (_, reopened) = try open(root)
    #expect(try reopened.read(bucket: "bkt", name: "o").1 == [5, 6])
    #expect(try reopened.metadata(bucket: "bkt", name: "o").metageneration == 1)
  }

  @Test func aFormatTwoFolderIsOpenedAndMarkedFormatThree() throws {
    let folder = TemporaryFolder()
    defer { folder.cleanUp() }
    let root = folder.url.appendingPathComponent("data")
    do {
      let (_, store) = try open(root, inlineLimit: 0)
      _ = try store.insert(bucket: "bkt", name: "old", data: [1])
      try store.close()
    }
    try Data(FileBackend.formatTwoLine.utf8).write(to: root.appendingPathComponent("FORMAT"))
    let (_, store) = try open(root)
    #expect(try store.read(bucket: "bkt", name: "old").1 == [1])
    #expect(try String(contentsOf: root.appendingPathComponent("FORMAT"), encoding: .utf8) == FileBackend.formatLine)
  }

  /// Metadata changes race compaction: the writer of a change reads the bytes it carries under
  /// the object's lock, where compaction moves them, so no change fails and no byte is lost.
  @Test func metadataChangesDuringCompactionNeverLoseTheBytes() throws {
    let folder = TemporaryFolder()
    defer { folder.cleanUp() }
    let root = folder.url.appendingPathComponent("data")
    let (backend, store) = try open(root)
    backend.segments.rollBytes = 700
    backend.snapshotLines = 20
    backend.compactionSlack = 0
    for n in 0..<4 { _ = try store.insert(bucket: "bkt", name: "o\(n)", data: Array("bytes \(n)".utf8)) }
    let failures = Locked(0)
    DispatchQueue.concurrentPerform(iterations: 4) { n in
      var patch = MetadataPatch()
      for round in 0..<150 {
        patch.customUpdates["round"] = String(round)
        do {
          _ = try store.update(bucket: "bkt", name: "o\(n)", patch: patch)
          guard try store.read(bucket: "bkt", name: "o\(n)").1 == Array("bytes \(n)".utf8) else {
            failures.withLock { $0 += 1 }
            continue
          }
        } catch {
          failures.withLock { $0 += 1 }
        }
      }
    }
    // Closed, not just idle: a change's completion may start one more snapshot and compaction in
    // the background, which must not run on while another store opens the folder.
    #expect(try store.close())
    #expect(failures.withLock { $0 } == 0)
    let expected = (0..<4).map { "o\($0) \(Array("bytes \($0)".utf8))" }
    #expect(try contents(store) == expected)
    for seen in try reopenedContents(root) { #expect(seen == expected) }
  }
}
