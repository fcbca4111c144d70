import Foundation
import Testing

@testable import EmulatorStorage

/// The store's change notifications: one per new generation, metageneration and delete, in order.
@Suite struct ChangeHookTests {
  @Test(arguments: BackendKind.allCases)
  func everyChangeIsReportedOnceInOrder(_ kind: BackendKind) throws {
    let folder = TemporaryFolder()
    defer { folder.cleanUp() }
    let store = try ObjectStore(backend: try kind.makeBackend(in: folder))
    let seen = Locked<[(StoreChangeKind, String, Int64)]>([])
    store.changes.add { change in seen.withLock { $0.append((change.kind, change.object.name, change.object.metageneration)) } }
    _ = try store.insert(bucket: "bkt", name: "a", data: [1])
    var patch = MetadataPatch()
    patch.fields[.cacheControl] = .set("x")
    _ = try store.update(bucket: "bkt", name: "a", patch: patch)
    _ = try store.update(bucket: "bkt", name: "a", patch: MetadataPatch())
    _ = try store.ensureDownloadToken(bucket: "bkt", name: "a")
    _ = try store.ensureDownloadToken(bucket: "bkt", name: "a")  // has one: no change, no event
    _ = try store.copy(from: "bkt", "a", to: "bkt", "b")
    try store.delete(bucket: "bkt", name: "a")
    #expect(throws: StorageError.self) { try store.delete(bucket: "bkt", name: "a") }  // nothing deleted, no event
    let events = seen.withLock { $0 }
    #expect(events.map { "\($0.0.rawValue) \($0.1) \($0.2)" } == [
      "finalized a 1", "metadataUpdated a 2", "metadataUpdated a 3", "metadataUpdated a 4", "finalized b 1",
      "deleted a 4",
    ])
  }

  @Test func racingPatchesOfOneObjectAreReportedOncePerMetagenerationInOrder() throws {
    let store = try ObjectStore(backend: MemoryBackend())
    _ = try store.insert(bucket: "bkt", name: "x", data: [])
    let seen = Locked<[Int64]>([])
    store.changes.add { change in seen.withLock { $0.append(change.object.metageneration) } }
    // Started without waiting, so they queue behind each other's record writes and are committed
    // in groups (blocking calls from Dispatch's pool could starve the group writer of threads).
    let group = DispatchGroup()
    for index in 0..<200 {
      var patch = MetadataPatch()
      patch.customUpdates["k"] = .some(String(index))
      group.enter()
      store.update(bucket: "bkt", name: "x", patch: patch) { _ in group.leave() }
    }
    #expect(group.wait(timeout: .now() + 30) == .success)
    #expect(seen.withLock { $0 } == Array(2...201))
  }
}
