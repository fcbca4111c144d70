import Foundation
import Testing

@testable import EmulatorStorage

/// The two upload spaces behave alike, so resumable sessions and multipart uploads keep the same
/// limits in memory as on disk; the backend decides which one a caller gets.
@Suite struct UploadSpaceTests {
  enum Kind: String, CaseIterable, CustomTestStringConvertible {
    case memory, file
    var testDescription: String { rawValue }

    func space(in folder: TemporaryFolder) throws -> any UploadSpace {
      switch self {
      case .memory: try MemoryBackend().uploadSpace(.sessions)
      case .file: try FileBackend(root: folder.url.appendingPathComponent("data")).uploadSpace(.sessions)
      }
    }
  }

  @Test(arguments: Kind.allCases)
  func entriesAreReplacedAppendedAndHandedOver(_ kind: Kind) throws {
    let folder = TemporaryFolder()
    defer { folder.cleanUp() }
    let space = try kind.space(in: folder)
    try space.replace("a.json", with: [1, 2], temp: ".a.tmp")
    try space.replace("a.json", with: [3], temp: ".a.tmp")
    #expect(space.contents("a.json") == [3])
    try space.create("a.part")
    try space.append("a.part", bytes: [4, 5, 6][1...])
    let spooled = folder.url.appendingPathComponent("body").path
    try Data([7, 8, 9]).write(to: URL(fileURLWithPath: spooled))
    #expect(try space.append("a.part", file: spooled, from: 1) == 2)
    #expect(space.contents("a.part") == [5, 6, 8, 9])
    #expect(space.info("a.part")?.size == 4)
    #expect(try space.digest("a.part").md5 == Digester.digest([5, 6, 8, 9]).md5)
    guard case .file = try space.handOff(["a.part"], as: "a.commit") else {
      #expect(kind == .memory, "the file space hands over a file")
      #expect(space.names().sorted() == ["a.json", "a.part"], "memory hands over a copy")
      return
    }
    #expect(space.contents("a.commit") == [5, 6, 8, 9])
    guard case .file(let joined) = try space.handOff(["a.json", "a.part"], as: "j.commit") else {
      Issue.record("a file space hands over a file")
      return
    }
    #expect(FileManager.default.contents(atPath: joined).map(Array.init) == [3, 5, 6, 8, 9])
    space.remove("a.commit")
    space.remove("j.commit")
    #expect(space.names().sorted() == ["a.json", "a.part"], "temporary entries were renamed away")
  }

  @Test(arguments: Kind.allCases)
  func resumableSessionsKeepTheirCapAndLifetimeInEitherSpace(_ kind: Kind) throws {
    let folder = TemporaryFolder()
    defer { folder.cleanUp() }
    let sessions = UploadSessions(space: try kind.space(in: folder), options: .init(ttlSeconds: 600, maxOpen: 2))
    let template = UploadSession(
      bucket: "bkt", name: "obj", metadata: Array("{}".utf8), conditions: Preconditions(), expectedSize: nil,
      contentType: nil, firebase: false)
    let id = try sessions.create(template).id
    _ = try sessions.create(template)
    #expect(throws: StorageError.self) { try sessions.create(template) }
    try sessions.append(id, at: 0, bytes: Array("abc".utf8), allowOverlap: false)
    let store = try ObjectStore(backend: MemoryBackend())
    _ = try store.createBucket("bkt")
    let object = try sessions.complete(id) { data, _ throws(StorageError) -> ObjectMetadata in
      try store.insert(bucket: "bkt", name: "obj", source: data)
    }
    #expect(object.size == 3)
    #expect(try store.read(bucket: "bkt", name: "obj").1 == Array("abc".utf8))
    #expect(sessions.counts == (active: 1, finished: 1))
    #expect(sessions.sweep(now: Timestamp.nowMilliseconds() + 601_000) == 2)
    #expect(sessions.space.names().isEmpty, "expired sessions leave nothing behind")
  }

  @Test func theBackendOwnsTheLayout() throws {
    let folder = TemporaryFolder()
    defer { folder.cleanUp() }
    let backend = try FileBackend(root: folder.url)
    // The folder earlier versions kept multipart parts in, for one process's life, is dropped.
    let legacy = folder.url.appendingPathComponent("uploads-xml-multipart/0123/1")
    try FileManager.default.createDirectory(at: legacy.deletingLastPathComponent(), withIntermediateDirectories: true)
    try Data([1]).write(to: legacy)
    let sessions = try #require(try backend.uploadSpace(.sessions) as? FileUploadSpace)
    let multipart = try #require(try backend.uploadSpace(.multipart) as? FileUploadSpace)
    #expect(sessions.directory == backend.root.path + "/uploads")
    #expect(multipart.directory == backend.root.path + "/multipart")
    #expect(backend.spoolDirectory == backend.root.path + "/tmp")
    #expect(!FileManager.default.fileExists(atPath: folder.url.appendingPathComponent("uploads-xml-multipart").path))
    let memory = MemoryBackend()
    #expect(memory.spoolDirectory == nil)
    #expect(try memory.uploadSpace(.sessions) is MemoryUploadSpace)
    #expect(try memory.uploadSpace(.sessions) as AnyObject === memory.uploadSpace(.sessions) as AnyObject)
    #expect(try memory.uploadSpace(.sessions) as AnyObject !== memory.uploadSpace(.multipart) as AnyObject)
  }
}
