import Foundation
import Synchronization
import Testing

@testable import EmulatorStorage

/// A backend whose metadata commits are slow and counted, to see group commit at work.
final class SlowCountingBackend: StorageBackend {
  let inner = MemoryBackend()
  let metadataCommits = Atomic<Int>(0)
  let failNextCommits = Atomic<Int>(0)

  func load(log: @Sendable (String) -> Void) throws(StorageError) -> LoadedState { try inner.load(log: log) }
  func saveBucket(_ bucket: BucketInfo) throws(StorageError) { try inner.saveBucket(bucket) }
  func removeBucket(_ name: String) throws(StorageError) { try inner.removeBucket(name) }
  func stage(_ bytes: [UInt8]) throws(StorageError) -> StagedData { try inner.stage(bytes) }
  func stage(file path: String) throws(StorageError) -> StagedData { try inner.stage(file: path) }
  func stageConcatenation(of objects: [ObjectMetadata]) throws(StorageError) -> StagedData {
    try inner.stageConcatenation(of: objects)
  }
  func digest(_ staged: StagedData) throws(StorageError) -> (md5: [UInt8], crc32c: UInt32) {
    try inner.digest(staged)
  }
  func discard(_ staged: StagedData) { inner.discard(staged) }
  func commit(_ object: ObjectMetadata, data: StagedData?, previous: ObjectMetadata?) throws(StorageError) {
    if data == nil {
      metadataCommits.add(1, ordering: .relaxed)
      usleep(2000)
      if failNextCommits.load(ordering: .relaxed) > 0 {
        failNextCommits.subtract(1, ordering: .relaxed)
        throw StorageError.io("injected failure")
      }
    }
    try inner.commit(object, data: data, previous: previous)
  }
  func remove(_ object: ObjectMetadata) throws(StorageError) { try inner.remove(object) }
  func read(_ object: ObjectMetadata) throws(StorageError) -> [UInt8] { try inner.read(object) }
  func isDamaged(bucket: String, name: String) -> Bool { inner.isDamaged(bucket: bucket, name: name) }
  func removeDamaged(bucket: String, name: String) throws(StorageError) {
    try inner.removeDamaged(bucket: bucket, name: name)
  }
  func open(_ object: ObjectMetadata) throws(StorageError) -> ObjectData { try inner.open(object) }
}

/// Runs `body(worker)` on `count` threads at once and waits for all.
func onThreads(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) {
  let group = DispatchGroup()
  for worker in 0..<count {
    group.enter()
    Thread {
      body(worker)
      group.leave()
    }.start()
  }
  group.wait()
}

@Suite struct GroupCommitTests {
  @Test func racingPatchesAreAllAppliedInOrderWithFarFewerWrites() throws {
    let backend = SlowCountingBackend()
    let store = try ObjectStore(backend: backend)
    _ = try store.insert(bucket: "bkt", name: "hot", data: [1, 2, 3])
    let answered = Locked<[Int64]>([])
    onThreads(16) { worker in
      for step in 0..<10 {
        var patch = MetadataPatch()
        patch.customUpdates = ["w\(worker)": "\(step)"]
        if let object = try? store.update(bucket: "bkt", name: "hot", patch: patch) {
          // What a PATCH answers includes its own change.
          #expect(object.custom["w\(worker)"] == "\(step)")
          answered.withLock { $0.append(object.metageneration) }
        }
      }
    }
    let metagenerations = answered.withLock { $0 }
    #expect(metagenerations.count == 160)
    #expect(Set(metagenerations).count == 160, "every change gets its own metageneration")
    let final = try store.metadata(bucket: "bkt", name: "hot")
    #expect(final.metageneration == 161)
    for worker in 0..<16 { #expect(final.custom["w\(worker)"] == "9") }
    let writes = backend.metadataCommits.load(ordering: .relaxed)
    #expect(writes < 100, "160 racing changes took \(writes) record writes")
  }

  @Test func aPreconditionIsCheckedAgainstTheNewestAcceptedVersion() throws {
    let store = try ObjectStore(backend: SlowCountingBackend())
    _ = try store.insert(bucket: "bkt", name: "hot", data: [1])
    let winners = Atomic<Int>(0)
    onThreads(16) { worker in
      var patch = MetadataPatch()
      patch.customUpdates = ["winner": "\(worker)"]
      if (try? store.update(
        bucket: "bkt", name: "hot", patch: patch, conditions: Preconditions(ifMetagenerationMatch: 1)))
        != nil
      {
        winners.add(1, ordering: .relaxed)
      }
    }
    #expect(winners.load(ordering: .relaxed) == 1)
    #expect(try store.metadata(bucket: "bkt", name: "hot").metageneration == 2)
  }

  @Test func aFailedWriteFailsTheChangesBuiltOnItAndPublishesNothing() throws {
    let backend = SlowCountingBackend()
    let store = try ObjectStore(backend: backend)
    _ = try store.insert(bucket: "bkt", name: "hot", data: [1])
    backend.failNextCommits.store(1, ordering: .relaxed)
    let failures = Atomic<Int>(0)
    let successes = Locked<[Int]>([])
    onThreads(8) { worker in
      var patch = MetadataPatch()
      patch.customUpdates = ["w\(worker)": "x"]
      do {
        _ = try store.update(bucket: "bkt", name: "hot", patch: patch)
        successes.withLock { $0.append(worker) }
      } catch {
        failures.add(1, ordering: .relaxed)
      }
    }
    #expect(failures.load(ordering: .relaxed) >= 1)
    let live = try store.metadata(bucket: "bkt", name: "hot")
    // The live version counts exactly the acknowledged changes, and holds each of them.
    let acknowledged = successes.withLock { $0 }
    #expect(live.metageneration == 1 + Int64(acknowledged.count))
    #expect(live.custom.count == acknowledged.count)
    for worker in acknowledged { #expect(live.custom["w\(worker)"] == "x") }
  }

  @Test func groupCommittedChangesSurviveAReopen() throws {
    let folder = TemporaryFolder()
    defer { folder.cleanUp() }
    let root = folder.url.appendingPathComponent("data")
    do {
      let store = try ObjectStore(backend: FileBackend(root: root))
      _ = try store.insert(bucket: "bkt", name: "hot", data: [1])
      onThreads(8) { worker in
        for step in 0..<5 {
          var patch = MetadataPatch()
          patch.customUpdates = ["w\(worker)": "\(step)"]
          _ = try? store.update(bucket: "bkt", name: "hot", patch: patch)
        }
      }
    }
    let reopened = try ObjectStore(backend: FileBackend(root: root))
    let object = try reopened.metadata(bucket: "bkt", name: "hot")
    #expect(object.metageneration == 41)
    for worker in 0..<8 { #expect(object.custom["w\(worker)"] == "4") }
  }
}
