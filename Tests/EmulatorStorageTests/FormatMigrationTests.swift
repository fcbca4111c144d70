import Foundation
import Testing

@testable import EmulatorStorage

/// A format-1 folder (a record file per object, `index.journal`) is migrated into log segments,
/// and every step of the migration survives a kill.
@Suite struct FormatMigrationTests {
  static let composed = "caf\u{e9}"
  static let decomposed = "cafe\u{301}"

  /// Builds a format-1 folder by hand: bucket `bkt` with three objects (two canonically
  /// equivalent names) and a leftover data file no record names.
  func makeFormatOne(_ root: URL) throws -> [(name: String, bytes: [UInt8])] {
    try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
    try Data("storage-emulator data format 1\n".utf8).write(to: root.appendingPathComponent("FORMAT"))
    let probe = try FileBackend(root: root)  // paths only: no load
    let bucket = root.appendingPathComponent("buckets/bkt")
    try FileManager.default.createDirectory(at: bucket, withIntermediateDirectories: true)
    try Data(#"{"name":"bkt","timeCreated":"5"}"#.utf8).write(to: bucket.appendingPathComponent("bucket.json"))
    // (Not a dictionary: as `String` keys the two cafés would be one.)
    let objects: [(name: String, bytes: [UInt8])] = [
      (Self.composed, [1]), (Self.decomposed, [2, 2]), ("dir/plain", [3, 3, 3]),
    ]
    var generation: Int64 = 100
    for (name, bytes) in objects {
      generation += 1
      let digest = Digester.digest(bytes)
      let object = ObjectMetadata(
        bucket: "bkt", name: name, generation: generation, size: Int64(bytes.count), md5: digest.md5,
        crc32c: digest.crc32c, now: 1000)
      let base = probe.objectBase(object)
      try FileManager.default.createDirectory(atPath: base.dir, withIntermediateDirectories: true)
      try Data(object.recordJSON()).write(to: URL(fileURLWithPath: base.dir + "/" + base.stem + ".json"))
      try Data(bytes).write(to: URL(fileURLWithPath: probe.dataPath(object)))
      // An upload killed before its record was written.
      try Data([9]).write(to: URL(fileURLWithPath: base.dir + "/" + base.stem + ".999.data"))
    }
    try Data("storage-emulator index journal 1\n".utf8).write(to: root.appendingPathComponent("index.journal"))
    return objects
  }

  func check(_ store: ObjectStore, holds objects: [(name: String, bytes: [UInt8])]) throws {
    let names = try store.list(bucket: "bkt", query: ListQuery()).items.map(\.name)
    #expect(names.count == objects.count)
    for (name, bytes) in objects { #expect(try store.read(bucket: "bkt", name: name).1 == bytes) }
  }

  func files(_ root: URL) -> [String] {
    let enumerator = FileManager.default.enumerator(atPath: root.path)
    var files: [String] = []
    while let path = enumerator?.nextObject() as? String { files.append(path) }
    return files
  }

  @Test func migrationFromFormatOneKeepsEveryObjectAndRemovesTheOldFiles() throws {
    let folder = TemporaryFolder()
    defer { folder.cleanUp() }
    let root = folder.url.appendingPathComponent("data")
    let objects = try makeFormatOne(root)
    let lines = LogLines()
    do {
      let backend = try FileBackend(root: root)
      let store = try ObjectStore(backend: backend, log: { lines.append($0) })
      try check(store, holds: objects)
      #expect(lines.all.contains { $0.contains("3 object records moved") })
    }
    #expect(try String(contentsOf: root.appendingPathComponent("FORMAT"), encoding: .utf8) == FileBackend.formatLine)
    let left = files(root)
    #expect(!left.contains { $0.hasSuffix(".json") && $0.contains("/objects/") }, "\(left)")
    #expect(!left.contains { $0.hasSuffix(".999.data") }, "leftovers of format 1 are removed too")
    #expect(!left.contains("index.journal") && !left.contains("log/" + FileBackend.migrationMarker))
    #expect(left.contains { $0.hasPrefix("log/") && $0.hasSuffix(".seg") })
    // Killed after: from the snapshot, then from the log alone.
    for scan in [false, true] {
      if scan { try FileManager.default.removeItem(at: root.appendingPathComponent("index.snapshot")) }
      let backend = try FileBackend(root: root)
      try check(try ObjectStore(backend: backend), holds: objects)
      #expect(backend.loadedFrom == (scan ? .scan : .snapshot(replayed: 0)))
    }
  }

  @Test func killedBeforeTheFormatChangedTheMigrationStartsOver() throws {
    let folder = TemporaryFolder()
    defer { folder.cleanUp() }
    let root = folder.url.appendingPathComponent("data")
    let objects = try makeFormatOne(root)
    // A first attempt killed while writing: a half-written log.migrating/, and one already
    // renamed to log/ (killed before FORMAT was replaced).
    for leftover in ["log.migrating", "log"] {
      let dir = root.appendingPathComponent(leftover)
      try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
      try Data(SegmentLog.header + [1, 2, 3]).write(to: dir.appendingPathComponent(SegmentLog.fileName(1)))
    }
    let store = try ObjectStore(backend: try FileBackend(root: root))
    try check(store, holds: objects)
    #expect(!FileManager.default.fileExists(atPath: root.appendingPathComponent("log.migrating").path))
  }

  @Test func killedAfterTheFormatChangedTheCleanupIsFinished() throws {
    let folder = TemporaryFolder()
    defer { folder.cleanUp() }
    let root = folder.url.appendingPathComponent("data")
    let objects = try makeFormatOne(root)
    _ = try ObjectStore(backend: try FileBackend(root: root))
    // As if killed before the old records were removed: one is back, and the marker.
    let stray = root.appendingPathComponent("buckets/bkt/objects/ab/" + String(repeating: "ab", count: 32) + ".json")
    try FileManager.default.createDirectory(at: stray.deletingLastPathComponent(), withIntermediateDirectories: true)
    try Data("{}".utf8).write(to: stray)
    try Data().write(to: root.appendingPathComponent("log/" + FileBackend.migrationMarker))
    let store = try ObjectStore(backend: try FileBackend(root: root))
    try check(store, holds: objects)
    #expect(!FileManager.default.fileExists(atPath: stray.path))
    #expect(!FileManager.default.fileExists(atPath: root.appendingPathComponent("log/" + FileBackend.migrationMarker).path))
  }
}
