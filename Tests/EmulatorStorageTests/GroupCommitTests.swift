import Foundation
import Synchronization
import Testing

@testable import EmulatorStorage

/// A backend whose metadata commits are slow and counted, to see group commit at work.
final class SlowCountingBackend: StorageBackend {
  let inner = MemoryBackend()
  let metadataCommits = Atomic<Int>(0)
  let failNextCommits = Atomic<Int>(0)
  /// When set, metadata commits wait for it.
  let gate = Locked<DispatchSemaphore?>(nil)

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
  func uploadSpace(_ kind: UploadSpaceKind) throws(StorageError) -> any UploadSpace { try inner.uploadSpace(kind) }
  var spoolDirectory: String? { inner.spoolDirectory }
  func commit(
    _ object: ObjectMetadata, data: StagedData?, previous: ObjectMetadata?, carrying: [UInt8]?
  ) throws(StorageError) -> ObjectMetadata {
    if data == nil {
      metadataCommits.add(1, ordering: .relaxed)
      gate.withLock { $0 }?.wait()
      usleep(2000)
      if failNextCommits.load(ordering: .relaxed) > 0 {
        failNextCommits.subtract(1, ordering: .relaxed)
        throw StorageError.io("injected failure")
      }
    }
    return try inner.commit(object, data: data, previous: previous, carrying: carrying)
  }
  func carriedBytes(_ object: ObjectMetadata) throws(StorageError) -> [UInt8]? { try inner.carriedBytes(object) }
  func remove(_ object: ObjectMetadata) throws(StorageError) { try inner.remove(object) }
  func archive(_ object: NoncurrentObject) throws(StorageError) { try inner.archive(object) }
  func removeNoncurrent(_ object: ObjectMetadata) throws(StorageError) { try inner.removeNoncurrent(object) }
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

  @Test func anUpdateStartedWithACompletionNeitherWaitsForItsWriteNorIsAnsweredBeforeIt() throws {
    let backend = SlowCountingBackend()
    let store = try ObjectStore(backend: backend)
    _ = try store.insert(bucket: "bkt", name: "hot", data: [1])
    let gate = DispatchSemaphore(value: 0)
    backend.gate.withLock { $0 = gate }
    let answered = Locked<[Int64]>([])
    let done = DispatchSemaphore(value: 0)
    for step in 0..<5 {
      var patch = MetadataPatch()
      patch.customUpdates = ["step": "\(step)"]
      // Returns while the first write is held at the gate (else this test would hang here).
      store.update(bucket: "bkt", name: "hot", patch: patch) { result in
        answered.withLock { $0.append((try? result.get())?.metageneration ?? -1) }
        done.signal()
      }
      if step == 0 {
        // Let the first write reach the gate, so the next four queue behind it.
        for _ in 0..<1000 where backend.metadataCommits.load(ordering: .relaxed) == 0 { usleep(1000) }
      }
    }
    #expect(answered.withLock { $0 }.isEmpty, "nothing is acknowledged before its write")
    #expect(try store.metadata(bucket: "bkt", name: "hot").metageneration == 1, "readers see written versions only")
    backend.gate.withLock { $0 = nil }
    gate.signal()
    for _ in 0..<5 { #expect(done.wait(timeout: .now() + 10) == .success) }
    #expect(answered.withLock { $0 }.sorted() == [2, 3, 4, 5, 6])
    // The first change was written alone; the four that queued behind it, as one group.
    #expect(backend.metadataCommits.load(ordering: .relaxed) == 2)
    let live = try store.metadata(bucket: "bkt", name: "hot")
    #expect(live.metageneration == 6 && live.custom["step"] == "4")
  }

  @Test func anUpdateOfAMissingObjectFailsThroughItsCompletion() throws {
    let store = try ObjectStore(backend: SlowCountingBackend())
    _ = try store.createBucket("bkt")
    let outcome = Locked<Result<ObjectMetadata, StorageError>?>(nil)
    store.update(bucket: "bkt", name: "absent", patch: MetadataPatch()) { result in outcome.withLock { $0 = result } }
    // Known without a write: answered at once, on the caller's thread.
    guard case .failure(.objectNotFound) = outcome.withLock({ $0 }) else {
      Issue.record("expected objectNotFound, got \(String(describing: outcome.withLock { $0 }))")
      return
    }
  }

  @Test func aMetadataChangeIsOneLogAppendAndCreatesNoFile() throws {
    let folder = TemporaryFolder()
    defer { folder.cleanUp() }
    let root = folder.url.appendingPathComponent("data")
    let calls = Locked<[String]>([])
    func patch(_ store: ObjectStore, _ value: String) throws {
      var patch = MetadataPatch()
      patch.customUpdates = ["v": value]
      _ = try store.update(bucket: "bkt", name: "hot", patch: patch)
    }
    do {
      let backend = try FileBackend(root: root, calls: .recording { line in calls.withLock { $0.append(line) } })
      let store = try ObjectStore(backend: backend)
      _ = try store.insert(bucket: "bkt", name: "hot", data: [1])
      calls.withLock { $0 = [] }
      for step in 0..<20 { try patch(store, "a\(step)") }
      let made = calls.withLock { $0 }
      #expect(made.count == 20 && made.allSatisfy { $0.hasPrefix("write ") && $0.hasSuffix(".seg") }, "\(made)")
      #expect(try FileManager.default.contentsOfDirectory(atPath: root.appendingPathComponent("tmp").path).isEmpty)
      #expect(try store.close())
    }
    do {
      let store = try ObjectStore(backend: FileBackend(root: root))
      for step in 0..<3 { try patch(store, "b\(step)") }
      // No close: the next start-up must replay the log.
    }
    let backend = try FileBackend(root: root)
    let reopened = try ObjectStore(backend: backend)
    #expect(backend.loadedFrom == .snapshot(replayed: 1))
    let object = try reopened.metadata(bucket: "bkt", name: "hot")
    #expect(object.metageneration == 24 && object.custom["v"] == "b2")
    #expect(try reopened.read(bucket: "bkt", name: "hot").1 == [1])
  }
}
