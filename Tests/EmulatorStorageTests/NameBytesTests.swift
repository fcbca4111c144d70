import Foundation
import Testing

@testable import EmulatorStorage

/// Object names are byte strings end to end. Swift's `String` equality, hashing and ordering
/// treat canonically equivalent strings as one; these tests use a precomposed and a decomposed
/// "café", which GCS stores as two objects.
@Suite struct NameBytesTests {
  /// `ObjectKey`'s `memcmp` order is byte order: the same as comparing the bytes one by one,
  /// prefixes first, bytes above 0x7F after ASCII.
  @Test func keyOrderIsByteOrderForEveryPair() {
    var generator = SystemRandomNumberGenerator()
    let alphabet: [UInt8] = [0x00, 0x2F, 0x61, 0x62, 0x7F, 0x80, 0xC3, 0xFF]
    let keys = (0..<200).map { _ in
      ObjectKey(bytes: (0..<Int.random(in: 0...5, using: &generator)).map { _ in alphabet.randomElement(using: &generator)! })
    }
    for a in keys {
      for b in keys {
        #expect((a < b) == a.bytes.lexicographicallyPrecedes(b.bytes), "\(a.bytes) < \(b.bytes)")
      }
    }
  }

  static let composed = "caf\u{E9}"  // 63 61 66 c3 a9
  static let decomposed = "cafe\u{301}"  // 63 61 66 65 cc 81

  func expectBoth(_ store: ObjectStore, sourceLocation: SourceLocation = #_sourceLocation) throws {
    let (first, firstBytes) = try store.read(bucket: "bkt", name: Self.composed)
    let (second, secondBytes) = try store.read(bucket: "bkt", name: Self.decomposed)
    #expect(Array(first.name.utf8) == Array(Self.composed.utf8), sourceLocation: sourceLocation)
    #expect(Array(second.name.utf8) == Array(Self.decomposed.utf8), sourceLocation: sourceLocation)
    #expect(firstBytes == Array("composed".utf8), sourceLocation: sourceLocation)
    #expect(secondBytes == Array("decomposed".utf8), sourceLocation: sourceLocation)
    let names = try store.list(bucket: "bkt", query: ListQuery()).items.map { Array($0.name.utf8) }
    #expect(names.filter { $0.starts(with: Array("caf".utf8)) }.count == 2, sourceLocation: sourceLocation)
  }

  func writeBoth(_ store: ObjectStore) throws {
    _ = try store.insert(bucket: "bkt", name: Self.composed, data: Array("composed".utf8))
    _ = try store.insert(bucket: "bkt", name: Self.decomposed, data: Array("decomposed".utf8))
  }

  @Test func canonicallyEquivalentNamesWrittenAfterASnapshotBothSurviveAKill() throws {
    let folder = TemporaryFolder()
    defer { folder.cleanUp() }
    let root = folder.url.appendingPathComponent("data")
    let first = try ObjectStore(backend: FileBackend(root: root))
    _ = try first.createBucket("bkt")
    try first.close()  // a snapshot and nothing to replay
    let second = try ObjectStore(backend: FileBackend(root: root))
    try writeBoth(second)
    // No close: like kill -9, only the log holds the two writes.
    let backend = try FileBackend(root: root)
    let reopened = try ObjectStore(backend: backend)
    #expect(backend.loadedFrom == .snapshot(replayed: 2))
    try expectBoth(reopened)
  }

  @Test func oneNameInTheSnapshotAndItsEquivalentInTheLogBothSurviveAKill() throws {
    let folder = TemporaryFolder()
    defer { folder.cleanUp() }
    let root = folder.url.appendingPathComponent("data")
    let first = try ObjectStore(backend: FileBackend(root: root))
    _ = try first.insert(bucket: "bkt", name: Self.composed, data: Array("composed".utf8))
    try first.close()
    let second = try ObjectStore(backend: FileBackend(root: root))
    _ = try second.insert(bucket: "bkt", name: Self.decomposed, data: Array("decomposed".utf8))
    try expectBoth(try ObjectStore(backend: FileBackend(root: root)))
  }

  @Test func canonicallyEquivalentNamesSurviveASnapshotRoundTrip() throws {
    let folder = TemporaryFolder()
    defer { folder.cleanUp() }
    let root = folder.url.appendingPathComponent("data")
    let first = try ObjectStore(backend: FileBackend(root: root))
    try writeBoth(first)
    try first.close()
    let backend = try FileBackend(root: root)
    try expectBoth(try ObjectStore(backend: backend))
    #expect(backend.loadedFrom == .snapshot(replayed: 0))
    // And by a full scan of the log.
    try FileManager.default.removeItem(at: root.appendingPathComponent("index.snapshot"))
    let scanned = try FileBackend(root: root)
    try expectBoth(try ObjectStore(backend: scanned))
    #expect(scanned.loadedFrom == .scan)
  }

  @Test func theLogScanKeepsCanonicallyEquivalentNamesApart() throws {
    var scan = SegmentScan()
    for (name, generation) in [(Self.composed, Int64(1)), (Self.decomposed, 2)] {
      let frame = SegmentEntry.record(
        ObjectMetadata(bucket: "bkt", name: name, generation: generation, size: 0, md5: nil, crc32c: 0, now: 0))
      guard case .entry(let entry) = SegmentEntry.parse(frame, at: 0) else { throw StorageError.io("parse") }
      scan.add(entry, key: entry.key, sequence: 1)
    }
    #expect(scan.winners.count == 2)
    #expect(scan.winners[ObjectPath(bucket: "bkt", name: Self.composed)]?.version.generation == 1)
    #expect(scan.winners[ObjectPath(bucket: "bkt", name: Self.decomposed)]?.version.generation == 2)
  }

  @Test(arguments: BackendKind.allCases)
  func listingIsInUTF8ByteOrder(_ kind: BackendKind) throws {
    let folder = TemporaryFolder()
    defer { folder.cleanUp() }
    let store = try ObjectStore(backend: try kind.makeBackend(in: folder))
    // Swift's order would put "cafz" first and call the two cafés equal.
    for name in [Self.composed, "cafz", Self.decomposed] { _ = try store.insert(bucket: "bkt", name: name, data: []) }
    let names = try store.list(bucket: "bkt", query: ListQuery()).items.map { Array($0.name.utf8) }
    #expect(names == [Array(Self.decomposed.utf8), Array("cafz".utf8), Array(Self.composed.utf8)])
    var query = ListQuery()
    query.startOffset = Self.composed
    #expect(
      try store.list(bucket: "bkt", query: query).items.map { Array($0.name.utf8) } == [Array(Self.composed.utf8)])
    query = ListQuery()
    query.maxResults = 1
    var seen: [[UInt8]] = []
    repeat {
      let page = try store.list(bucket: "bkt", query: query)
      seen += page.items.map { Array($0.name.utf8) }
      query.pageToken = page.nextPageToken
    } while query.pageToken != nil && seen.count < 10
    #expect(seen == names, "page tokens resume after the right one of the two")
  }

  @Test func metadataOfCanonicallyEquivalentNamesIsNotEqual() {
    let composed = ObjectMetadata(bucket: "b", name: Self.composed, generation: 1, size: 0, md5: nil, crc32c: 0, now: 0)
    var decomposed = composed
    decomposed.name = Self.decomposed
    #expect(composed != decomposed)
    #expect(composed == composed)
    var other = composed
    other.custom = ["k": "v"]
    #expect(composed != other)
  }
}
