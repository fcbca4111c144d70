import Foundation
import Synchronization
import Testing

@testable import EmulatorStorage

/// `GroupWriter.scheduled`: the write of a metadata group runs when the caller's schedule says
/// (an event loop's end of turn), shared by every change made before it; and a thread that
/// would wait for a group still waiting for its turn writes it instead, so nothing waits for a
/// turn that cannot end (the loop's own thread blocking on the object).
@Suite struct ScheduledGroupWriteTests {
  /// A schedule that keeps the work until the test runs it, as an event loop keeps it until its
  /// turn ends.
  final class ManualTurn: Sendable {
    let queued = Locked<[@Sendable () -> Void]>([])
    var writer: GroupWriter { .scheduled { work in self.queued.withLock { $0.append(work) } } }
    var count: Int { queued.withLock { $0.count } }
    func end() {
      let work = queued.withLock { queued in
        defer { queued = [] }
        return queued
      }
      for item in work { item() }
    }
  }

  static func patch(_ key: String, _ value: String) -> MetadataPatch {
    var patch = MetadataPatch()
    patch.customUpdates = [key: value]
    return patch
  }

  @Test func changesMadeBeforeTheTurnEndsShareOneWriteAndAreAnsweredOnlyAfterIt() throws {
    let backend = SlowCountingBackend()
    let store = try ObjectStore(backend: backend)
    _ = try store.insert(bucket: "bkt", name: "hot", data: [1])
    let turn = ManualTurn()
    let answered = Locked<[Int64]>([])
    for step in 0..<5 {
      store.update(bucket: "bkt", name: "hot", patch: Self.patch("step", "\(step)"), writer: turn.writer) { result in
        answered.withLock { $0.append((try? result.get())?.metageneration ?? -1) }
      }
    }
    #expect(turn.count == 1, "only the change that started the group schedules a write")
    #expect(answered.withLock { $0 }.isEmpty, "nothing is acknowledged before its write")
    #expect(backend.metadataCommits.load(ordering: .relaxed) == 0)
    #expect(try store.metadata(bucket: "bkt", name: "hot").metageneration == 1, "readers see written versions only")
    turn.end()
    #expect(answered.withLock { $0 } == [2, 3, 4, 5, 6])
    #expect(backend.metadataCommits.load(ordering: .relaxed) == 1, "five changes, one record write")
    let live = try store.metadata(bucket: "bkt", name: "hot")
    #expect(live.metageneration == 6 && live.custom["step"] == "4")
  }

  /// A store holding `bkt/hot` (metageneration 1) with a PATCH of it whose group write waits for
  /// `turn` to end; `answer` gets the PATCH's metageneration once it is written.
  static func patchWaitingForItsTurn() throws -> (store: ObjectStore, turn: ManualTurn, answer: Locked<Int64?>) {
    let store = try ObjectStore(backend: SlowCountingBackend())
    _ = try store.insert(bucket: "bkt", name: "hot", data: [1])
    let turn = ManualTurn()
    let answer = Locked<Int64?>(nil)
    store.update(bucket: "bkt", name: "hot", patch: patch("a", "1"), writer: turn.writer) { result in
      answer.withLock { $0 = (try? result.get())?.metageneration }
    }
    return (store, turn, answer)
  }

  /// The deadlock this guards against: a PATCH schedules its group for the end of the loop's
  /// turn, then an upload of the same object on the same thread, in the same turn, waits for
  /// the object's groups. The upload writes the group itself (the test would hang otherwise).
  @Test func anUploadOnTheSameThreadWritesAGroupStillWaitingForItsTurn() throws {
    let backend = SlowCountingBackend()
    let store = try ObjectStore(backend: backend)
    _ = try store.insert(bucket: "bkt", name: "hot", data: [1])
    let turn = ManualTurn()
    let patched = Locked<Result<ObjectMetadata, StorageError>?>(nil)
    store.update(bucket: "bkt", name: "hot", patch: Self.patch("k", "v"), writer: turn.writer) { result in
      patched.withLock { $0 = result }
    }
    let replaced = try store.insert(
      bucket: "bkt", name: "hot", data: [2], conditions: Preconditions(ifMetagenerationMatch: 2))
    guard case .success(let object) = patched.withLock({ $0 }) else {
      Issue.record("the PATCH was not answered before the upload: \(String(describing: patched.withLock { $0 }))")
      return
    }
    #expect(object.metageneration == 2 && object.custom["k"] == "v")
    #expect(replaced.generation > object.generation && replaced.metageneration == 1)
    turn.end()
    #expect(backend.metadataCommits.load(ordering: .relaxed) == 1, "the scheduled write found nothing left to write")
    #expect(try store.read(bucket: "bkt", name: "hot").1 == [2])
  }

  /// The same, for a change that blocks for its answer (a Firebase metadata read that adds the
  /// first download token does): it joins the waiting group and writes it on its own thread.
  @Test func aBlockingChangeOnTheSameThreadWritesAGroupStillWaitingForItsTurn() throws {
    let (store, turn, first) = try Self.patchWaitingForItsTurn()
    let tokened = try store.ensureDownloadToken(bucket: "bkt", name: "hot")
    #expect(first.withLock { $0 } == 2)
    #expect(tokened.metageneration == 3 && tokened.custom["a"] == "1" && tokened.downloadTokens.count == 1)
    turn.end()
    #expect(try store.metadata(bucket: "bkt", name: "hot").metageneration == 3)
  }

  /// A delete on the same thread likewise: the change made before it is written and answered,
  /// then the object is gone.
  @Test func aDeleteOnTheSameThreadWritesAGroupStillWaitingForItsTurn() throws {
    let (store, turn, first) = try Self.patchWaitingForItsTurn()
    try store.delete(bucket: "bkt", name: "hot", conditions: Preconditions(ifMetagenerationMatch: 2))
    #expect(first.withLock { $0 } == 2)
    turn.end()
    #expect(throws: StorageError.self) { try store.metadata(bucket: "bkt", name: "hot") }
  }
}
