import Foundation
import Testing

@testable import EmulatorStorage

/// A data folder written in format 1 is committed under Fixtures/: a later change that cannot
/// migrate it fails here instead of silently orphaning users' data.
@Suite struct DataFormatTests {
  @Test func migratesTheCommittedFormat1Folder() throws {
    let fixture = try #require(Bundle.module.url(forResource: "Fixtures/format-1", withExtension: nil))
    let folder = TemporaryFolder()
    defer { folder.cleanUp() }
    let root = folder.url.appendingPathComponent("data")
    try FileManager.default.copyItem(at: fixture, to: root)
    let lines = LogLines()
    let store = try ObjectStore(backend: FileBackend(root: root), log: { lines.append($0) })
    #expect(lines.all.allSatisfy { $0.hasPrefix("migration:") } && lines.all.count == 2, "\(lines.all)")
    #expect(store.listBuckets().map(\.name) == ["empty-bucket", "fixture-bucket"])
    let (hello, bytes) = try store.read(bucket: "fixture-bucket", name: "dir/hello.txt")
    #expect(bytes == Array("hello world".utf8))
    #expect(hello.generation == 1_795_323_521_007_906)
    #expect(hello.metageneration == 2)
    #expect(hello.md5Base64 == "XrY7u+Ae7tCTyyK7j1rNww==")
    #expect(hello.crc32c == 3_381_945_770)
    #expect(hello.contentType == "text/plain")
    #expect(hello.cacheControl == "no-cache")
    #expect(hello.custom == ["k": "v"])
    #expect(hello.downloadTokens == ["eb233eea-13a0-49c2-89af-418c3c28aed2"])
    #expect(hello.timeCreated == 1_795_323_521_007 && hello.updated == 1_795_323_521_024)
    let (empty, none) = try store.read(bucket: "fixture-bucket", name: "empty")
    #expect(empty.size == 0 && none.isEmpty)
    // And it stays writable.
    let next = try store.update(bucket: "fixture-bucket", name: "dir/hello.txt", patch: MetadataPatch())
    #expect(next.metageneration == 3)
    // Migrated: read again from the log alone.
    try FileManager.default.removeItem(at: root.appendingPathComponent("index.snapshot"))
    let reopened = try ObjectStore(backend: FileBackend(root: root))
    #expect(try reopened.read(bucket: "fixture-bucket", name: "dir/hello.txt").0.metageneration == 3)
    #expect(try reopened.read(bucket: "fixture-bucket", name: "empty").1.isEmpty)
  }
}

/// Races on one name (PROTOCOL.md §3–§4, issue: durability and concurrency).
@Suite struct RaceTests {
  @Test(arguments: BackendKind.allCases)
  func thirtyTwoCreatesWithIfGenerationMatchZeroHaveOneWinner(_ kind: BackendKind) async throws {
    let folder = TemporaryFolder()
    defer { folder.cleanUp() }
    let backend = try kind.makeBackend(in: folder)
    let store = try ObjectStore(backend: backend)
    let winners = await withTaskGroup(of: UInt8?.self) { group in
      for index in 0..<32 {
        group.addTask {
          let created = try? store.insert(
            bucket: "bkt", name: "once", data: [UInt8](repeating: UInt8(index), count: 100),
            conditions: Preconditions(ifGenerationMatch: 0))
          return created == nil ? nil : UInt8(index)
        }
      }
      var all: [UInt8] = []
      for await winner in group { if let winner { all.append(winner) } }
      return all
    }
    #expect(winners.count == 1)
    let (object, bytes) = try store.read(bucket: "bkt", name: "once")
    #expect(bytes == [UInt8](repeating: winners[0], count: 100))
    #expect(object.metageneration == 1)
  }

  @Test(arguments: BackendKind.allCases)
  func patchDeleteAndUploadRacingNeverSplitMetadataFromData(_ kind: BackendKind) async throws {
    let folder = TemporaryFolder()
    defer { folder.cleanUp() }
    let root = folder.url.appendingPathComponent("data")
    let backend: any StorageBackend = kind == .memory ? MemoryBackend() : try FileBackend(root: root)
    let store = try ObjectStore(backend: backend)
    await withTaskGroup(of: Void.self) { group in
      for worker in 0..<6 {
        group.addTask {
          for step in 0..<60 {
            switch (worker + step) % 3 {
            case 0:
              _ = try? store.insert(bucket: "bkt", name: "hot", data: [UInt8](repeating: UInt8(step), count: 1000))
            case 1:
              var patch = MetadataPatch()
              patch.customUpdates = ["w\(worker)": "\(step)"]
              _ = try? store.update(bucket: "bkt", name: "hot", patch: patch)
            default:
              try? store.delete(bucket: "bkt", name: "hot")
            }
            if let (object, bytes) = try? store.read(bucket: "bkt", name: "hot") {
              // Whatever version is live, its bytes are the ones its metadata describes.
              #expect(Int64(bytes.count) == object.size)
              #expect(CRC32C.checksum(bytes) == object.crc32c)
            }
          }
        }
      }
    }
    if kind == .file {
      // No data file without its live record (records are in the log, not files).
      let files = TemporaryFolder.files(under: root.appendingPathComponent("buckets/bkt/objects"))
      let data = files.filter { $0.hasSuffix(".data") }
      let live = try? store.metadata(bucket: "bkt", name: "hot")
      #expect(!files.contains { $0.hasSuffix(".json") })
      // A small live object's bytes are in its record (`FileBackend.inlineLimit`).
      #expect(data.count == (live.map { $0.body.isInline ? 0 : 1 } ?? 0))
      let reopened = try ObjectStore(backend: FileBackend(root: root))
      #expect((try? reopened.metadata(bucket: "bkt", name: "hot")) == (try? store.metadata(bucket: "bkt", name: "hot")))
    }
  }
}

extension TemporaryFolder {
  static func files(under url: URL) -> [String] {
    let enumerator = FileManager.default.enumerator(atPath: url.path)
    var files: [String] = []
    while let path = enumerator?.nextObject() as? String {
      var isDirectory: ObjCBool = false
      if FileManager.default.fileExists(atPath: url.appendingPathComponent(path).path, isDirectory: &isDirectory),
        !isDirectory.boolValue
      {
        files.append(path)
      }
    }
    return files
  }
}
