import Foundation
import Testing

@testable import EmulatorStorage

/// The write of a new generation whose bytes are in memory: an intent in the log names it, its
/// bytes go straight to their final `.data` name (no temporary file and rename), the shard folder
/// is made only when missing, and the record's append to the log is the commit point. Checked on the recorded
/// system calls (`FileCalls`) and on the folder a kill would leave behind.
@Suite struct UploadWriteTests {
  /// A store over `folder`/data whose system calls are recorded (relative to the data folder).
  final class Recorded: Sendable {
    let root: String
    let backend: FileBackend
    let store: ObjectStore
    private let lines: Locked<[String]>
    /// Called with each call as it is recorded (the folder as the call left it).
    private let observer: Locked<(@Sendable (String) -> Void)?>

    init(_ folder: TemporaryFolder, fsync: Bool = false) throws {
      let root = folder.url.appendingPathComponent("data").standardizedFileURL.path
      let lines = Locked<[String]>([])
      let observer = Locked<(@Sendable (String) -> Void)?>(nil)
      let calls = FileCalls.recording { line in
        let relative = line.replacingOccurrences(of: root + "/", with: "")
        lines.withLock { $0.append(relative) }
        observer.withLock { $0 }?(relative)
      }
      self.root = root
      self.lines = lines
      self.observer = observer
      backend = try FileBackend(root: URL(fileURLWithPath: root), fsync: fsync, calls: calls, inlineLimit: 0)
      store = try ObjectStore(backend: backend)
      _ = try store.createBucket("bkt")
      lines.withLock { $0 = [] }
    }

    /// The calls made since the last `take`, paths relative to the data folder.
    func take() -> [String] {
      lines.withLock { lines in
        defer { lines = [] }
        return lines
      }
    }

    func observe(_ body: @escaping @Sendable (String) -> Void) { observer.withLock { $0 = body } }

    func shardFolder(_ name: String) -> String {
      backend.objectBase(bucket: "bkt", name: name).dir
    }
  }

  @Test func aSmallUploadWritesItsBytesOnceAtTheirFinalName() throws {
    let folder = TemporaryFolder()
    defer { folder.cleanUp() }
    let recorded = try Recorded(folder)
    let object = try recorded.store.insert(bucket: "bkt", name: "a", data: [1, 2, 3])
    let calls = recorded.take()
    let data = recorded.backend.dataPath(object).replacingOccurrences(of: recorded.root + "/", with: "")
    let verbs = calls.map { $0.split(separator: " ")[0] }
    #expect(verbs == ["write", "mkdir", "create", "write", "write"], "intent, shard folder (new), data file, record: \(calls)")
    #expect(calls[2] == "create \(data)" && calls[3] == "write \(data)")
    #expect(!calls.contains { $0.contains(".upload") }, "no temporary copy of the bytes: \(calls)")
    #expect(calls.first?.hasPrefix("write log/") == true && calls.last?.hasPrefix("write log/") == true)
    #expect(FileManager.default.contents(atPath: recorded.backend.dataPath(object)) == Data([1, 2, 3]))
  }

  @Test func aShardFolderThatExistsIsNotMadeAgain() throws {
    let folder = TemporaryFolder()
    defer { folder.cleanUp() }
    let recorded = try Recorded(folder)
    _ = try recorded.store.insert(bucket: "bkt", name: "a", data: [1])
    _ = recorded.take()
    let replaced = try recorded.store.insert(bucket: "bkt", name: "a", data: [2])
    let calls = recorded.take()
    #expect(!calls.contains { $0.hasPrefix("mkdir") }, "\(calls)")
    #expect(try recorded.store.read(bucket: "bkt", name: "a").1 == [2])
    #expect(replaced.generation > 0)
  }

  @Test func aShardFolderRemovedByHandIsMadeAgain() throws {
    let folder = TemporaryFolder()
    defer { folder.cleanUp() }
    let recorded = try Recorded(folder)
    _ = try recorded.store.insert(bucket: "bkt", name: "a", data: [1])
    try recorded.store.delete(bucket: "bkt", name: "a")
    try FileManager.default.removeItem(atPath: recorded.shardFolder("a"))
    _ = recorded.take()
    _ = try recorded.store.insert(bucket: "bkt", name: "a", data: [3])
    #expect(recorded.take().filter { $0.hasPrefix("mkdir") }.count == 1)
    #expect(try recorded.store.read(bucket: "bkt", name: "a").1 == [3])
  }

  /// A kill after the data file is written and before the record is in place: the folder as it
  /// was then, opened again (from the snapshot and the log, and from the log alone), holds
  /// the previous version and no trace of the new bytes.
  @Test(arguments: [false, true])
  func aKillBetweenTheBytesAndTheRecordLeavesTheOldVersionAndNoLeftover(withoutSnapshot: Bool) throws {
    let folder = TemporaryFolder()
    defer { folder.cleanUp() }
    let recorded = try Recorded(folder)
    let old = try recorded.store.insert(bucket: "bkt", name: "a", data: [1])
    let copy = folder.url.appendingPathComponent("killed").path
    let root = recorded.root
    let copied = Locked(false)
    recorded.observe { line in
      // The data file is complete; the record is not appended yet.
      guard line.hasPrefix("write buckets/"), line.hasSuffix(".data"), !copied.withLock({ $0 }) else { return }
      copied.withLock { $0 = true }
      try? FileManager.default.copyItem(atPath: root, toPath: copy)
    }
    let new = try recorded.store.insert(bucket: "bkt", name: "a", data: [2, 2])
    #expect(copied.withLock { $0 })
    let leftover = recorded.backend.dataPath(new).replacingOccurrences(of: root, with: copy)
    #expect(FileManager.default.fileExists(atPath: leftover), "the copy was taken after the bytes were written")
    if withoutSnapshot { try FileManager.default.removeItem(atPath: copy + "/index.snapshot") }
    let reopened = try ObjectStore(backend: try FileBackend(root: URL(fileURLWithPath: copy)))
    let (object, bytes) = try reopened.read(bucket: "bkt", name: "a")
    #expect(object.generation == old.generation && bytes == [1])
    #expect(!FileManager.default.fileExists(atPath: leftover), "the new generation's bytes were removed")
  }

  /// With `fsync`, the bytes and the name of a data file written in place are synced before the
  /// record that makes them live, and the record before the acknowledgement.
  @Test func withFsyncTheBytesAndTheirFolderAreSyncedBeforeTheRecord() throws {
    let folder = TemporaryFolder()
    defer { folder.cleanUp() }
    let recorded = try Recorded(folder, fsync: true)
    let object = try recorded.store.insert(bucket: "bkt", name: "a", data: [1, 2, 3])
    let calls = recorded.take()
    let data = recorded.backend.dataPath(object).replacingOccurrences(of: recorded.root + "/", with: "")
    let shard = (data as NSString).deletingLastPathComponent
    func position(_ line: String) -> Int { calls.firstIndex(of: line) ?? -1 }
    let record = try #require(calls.lastIndex { $0.hasPrefix("write log/") })
    #expect(position("write \(data)") >= 0)
    #expect(position("write \(data)") < position("fsync \(data)"))
    #expect(position("fsync \(data)") < position("fsync \(shard)/"))
    #expect(position("fsync \(shard)/") < record)
    #expect(calls.last?.hasPrefix("fdatasync log/") == true && record == calls.count - 2, "\(calls)")
  }

  /// A resumable session's first chunk, spooled to a file, becomes the session's bytes by a
  /// rename, not a copy; a later chunk is appended to them.
  @Test func aFirstSpooledChunkBecomesTheSessionsBytesWithoutACopy() throws {
    let folder = TemporaryFolder()
    defer { folder.cleanUp() }
    let backend = try FileBackend(root: folder.url.appendingPathComponent("data"))
    let space = try #require(try backend.uploadSpace(.sessions) as? FileUploadSpace)
    try space.create("s.part")
    func inode(_ path: String) -> UInt64 {
      var info = stat()
      return stat(path, &info) == 0 ? UInt64(info.st_ino) : 0
    }
    let first = backend.tmp.path + "/first"
    try Data([1, 2, 3]).write(to: URL(fileURLWithPath: first))
    let spooledInode = inode(first)
    #expect(try space.append("s.part", file: first, from: 0) == 3)
    #expect(inode(space.path("s.part")) == spooledInode, "renamed, not copied")
    #expect(!FileManager.default.fileExists(atPath: first))
    let second = backend.tmp.path + "/second"
    try Data([4, 5]).write(to: URL(fileURLWithPath: second))
    #expect(try space.append("s.part", file: second, from: 0) == 2)
    #expect(space.contents("s.part") == [1, 2, 3, 4, 5])
    #expect(inode(space.path("s.part")) == spooledInode, "appended in place")
  }

  /// With `fsync`, the log is synced outside its lock: while one upload waits for its sync,
  /// another upload's entries are appended, so concurrent uploads share the log's syncs instead of
  /// taking turns (under the lock, the second append could not happen before the first sync
  /// returned).
  @Test func withFsyncAnotherUploadAppendsWhileOneWaitsForItsSync() throws {
    let folder = TemporaryFolder()
    defer { folder.cleanUp() }
    let recorded = try Recorded(folder, fsync: true)
    let store = recorded.store
    let secondWrote = DispatchSemaphore(value: 0)
    let state = Locked((syncs: 0, writes: 0, overlapped: false))
    recorded.observe { line in
      if line.hasPrefix("write log/") {
        // The first upload's intent and record, then the second one's.
        if state.withLock({ $0.writes += 1; return $0.writes }) == 4 { secondWrote.signal() }
      }
      guard line.hasPrefix("fdatasync log/"), state.withLock({ $0.syncs += 1; return $0.syncs }) == 1 else {
        return
      }
      // The first upload's sync has returned; its writer waits here, before the rest of its
      // write, while a second upload runs.
      DispatchQueue.global().async { _ = try? store.insert(bucket: "bkt", name: "b", data: [2]) }
      let overlapped = secondWrote.wait(timeout: .now() + 5) == .success
      state.withLock { $0.overlapped = overlapped }
    }
    _ = try store.insert(bucket: "bkt", name: "a", data: [1])
    #expect(state.withLock { $0.overlapped }, "the second upload's append waited for the first one's sync")
    for _ in 0..<500 where (try? store.metadata(bucket: "bkt", name: "b")) == nil { usleep(10_000) }
    #expect(try store.read(bucket: "bkt", name: "b").1 == [2])
  }
}
