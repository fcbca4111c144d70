import Foundation
import Testing

@testable import EmulatorStorage

/// With `fsync`, an acknowledged write survives power loss only if its system calls come in the
/// right order. Every write path of `FileBackend` and `UploadSessions` is run through a
/// recording `FileCalls`, and its sequence is checked two ways: against the sequence SECURITY.md
/// documents for it (so the documentation cannot drift), and against the rules themselves.
@Suite struct FsyncSequenceTests {
  /// One write path's recorded calls, with the paths that vary from run to run made stable:
  /// the data folder is `.`, temporary files `tmp/T.<kind>`, name hashes `H` (folder `HH`),
  /// generations `G`, session ids `ID`, log segments `log/S.seg`.
  final class Recorder: Sendable {
    let root: String
    private let lines = Locked<[String]>([])

    init(root: String) { self.root = root }

    var calls: FileCalls { .recording { [lines] line in lines.withLock { $0.append(line) } } }

    func take() -> [String] {
      lines.withLock { lines in
        defer { lines = [] }
        return lines.map(normalise)
      }
    }

    func normalise(_ line: String) -> String {
      var text = line.replacingOccurrences(of: root, with: ".")
      for (pattern, replacement) in [
        (#"tmp/[0-9]+-[0-9]+-[0-9]+\."#, "tmp/T."), (#"[0-9a-f]{64}\.[0-9]+\.data"#, "H.G.data"),
        (#"[0-9a-f]{64}\.[0-9]+\.json"#, "H.G.json"), (#"log/[0-9a-f]{16}\.seg"#, "log/S.seg"),
        (#"[0-9a-f]{64}"#, "H"), (#"objects/[0-9a-f]{2}(/|$| )"#, "objects/HH$1"),
        (#"uploads/(\.?)[0-9a-f]{32}"#, "uploads/$1ID"), (#"multipart/(\.?)[0-9a-f]{32}"#, "multipart/$1ID"),
      ] {
        text = text.replacingOccurrences(of: pattern, with: replacement, options: .regularExpression)
      }
      return text
    }
  }

  /// Every write path: of objects with data files, then of inline ones.
  func recordEveryWritePath(fsync: Bool = true) throws -> [(name: String, calls: [String])] {
    try recordDataFileWritePaths(fsync: fsync) + recordInlineWritePaths(fsync: fsync)
  }

  /// The write paths of objects kept inline in their records (up to 16 bytes here).
  func recordInlineWritePaths(fsync: Bool) throws -> [(name: String, calls: [String])] {
    let folder = TemporaryFolder()
    defer { folder.cleanUp() }
    let root = folder.url.appendingPathComponent("data").standardizedFileURL.path
    let recorder = Recorder(root: root)
    let backend = try FileBackend(
      root: URL(fileURLWithPath: root), fsync: fsync, calls: recorder.calls, inlineLimit: 16)
    let store = try ObjectStore(backend: backend)
    _ = try store.createBucket("bkt")
    _ = try store.createBucket("ver", resource: .object([("versioning", .object([("enabled", .bool(true))]))]))
    _ = try store.insert(bucket: "bkt", name: "large", data: Array(repeating: 7, count: 32))
    _ = try store.insert(bucket: "ver", name: "v", data: [1])
    _ = recorder.take()
    var paths: [(String, [String])] = []
    func path(_ name: String, _ body: () throws -> Void) rethrows {
      try body()
      paths.append((name, recorder.take()))
    }
    try path("inline: upload, new object") { _ = try store.insert(bucket: "bkt", name: "a", data: [1, 2, 3]) }
    try path("inline: metadata update") {
      var patch = MetadataPatch()
      patch.fields[.contentType] = .set("text/plain")
      _ = try store.update(bucket: "bkt", name: "a", patch: patch)
    }
    try path("inline: upload replacing an object with a data file") {
      _ = try store.insert(bucket: "bkt", name: "large", data: [2])
    }
    try path("inline: copy") { _ = try store.copy(from: "bkt", "a", to: "bkt", "b") }
    try path("inline: upload replacing an object in a versioned bucket") {
      _ = try store.insert(bucket: "ver", name: "v", data: [2])
    }
    try path("inline: delete") { try store.delete(bucket: "bkt", name: "b") }
    return paths
  }

  /// Runs every write path once, in order, each recorded on its own: objects get data files
  /// (the inline limit is 0).
  func recordDataFileWritePaths(fsync: Bool = true) throws -> [(name: String, calls: [String])] {
    let folder = TemporaryFolder()
    defer { folder.cleanUp() }
    let root = folder.url.appendingPathComponent("data").standardizedFileURL.path
    let recorder = Recorder(root: root)
    let backend = try FileBackend(root: URL(fileURLWithPath: root), fsync: fsync, calls: recorder.calls, inlineLimit: 0)
    let store = try ObjectStore(backend: backend)
    let sessions = UploadSessions(space: try backend.uploadSpace(.sessions))
    let multipart = MultipartUploads(space: try backend.uploadSpace(.multipart), maxBytes: 1 << 20)
    _ = recorder.take()
    var paths: [(String, [String])] = []
    func path(_ name: String, _ body: () throws -> Void) rethrows {
      try body()
      paths.append((name, recorder.take()))
    }
    try path("bucket create") { _ = try store.createBucket("bkt") }
    try path("upload, new object") { _ = try store.insert(bucket: "bkt", name: "a", data: [1, 2, 3]) }
    try path("upload spooled to disk, replacing an object") {
      let spool = root + "/tmp/spooled-body"
      try Data([1, 2]).write(to: URL(fileURLWithPath: spool))
      _ = try store.insert(bucket: "bkt", name: "a", source: .file(spool))
    }
    try path("metadata update") {
      var patch = MetadataPatch()
      patch.fields[.contentType] = .set("text/plain")
      _ = try store.update(bucket: "bkt", name: "a", patch: patch)
    }
    try path("copy") { _ = try store.copy(from: "bkt", "a", to: "bkt", "b") }
    try path("compose") {
      _ = try store.compose(bucket: "bkt", name: "c", sources: [.init(name: "a"), .init(name: "b")])
    }
    try path("delete") { try store.delete(bucket: "bkt", name: "c") }
    // Setup steps are checked against the rules, not documented.
    try path("(setup) a versioned bucket and an object in it") {
      _ = try store.createBucket("ver", resource: .object([("versioning", .object([("enabled", .bool(true))]))]))
      _ = try store.insert(bucket: "ver", name: "v", data: [1])
    }
    try path("upload replacing an object in a versioned bucket") {
      _ = try store.insert(bucket: "ver", name: "v", data: [2])
    }
    var id = ""
    try path("resumable start") {
      id = try sessions.create(
        UploadSession(
          bucket: "bkt", name: "r", metadata: [], conditions: Preconditions(), expectedSize: nil, contentType: nil,
          firebase: false)
      ).id
    }
    try path("resumable chunk") { try sessions.append(id, at: 0, bytes: [1, 2, 3], allowOverlap: false) }
    try path("resumable finalize") {
      _ = try sessions.complete(id) { data, _ throws(StorageError) -> ObjectMetadata in
        try store.insert(bucket: "bkt", name: "r", source: data)
      }
    }
    var upload = ""
    try path("XML multipart initiate") {
      upload = try multipart.initiate(bucket: "bkt", name: "m", patch: MetadataPatch()).id
    }
    try path("XML multipart part") {
      _ = try multipart.putPart(upload, bucket: "bkt", name: "m", number: 1, bytes: [1, 2], file: nil)
    }
    try path("XML multipart part spooled to disk") {
      let spool = root + "/tmp/spooled-part"
      try Data([3]).write(to: URL(fileURLWithPath: spool))
      _ = try multipart.putPart(upload, bucket: "bkt", name: "m", number: 2, bytes: [], file: spool)
    }
    try path("XML multipart complete") {
      _ = try multipart.complete(upload, bucket: "bkt", name: "m", parts: [(1, nil), (2, nil)]) {
        _, data throws(StorageError) in try store.insert(bucket: "bkt", name: "m", source: data)
      }
    }
    return paths
  }

  /// The ```` ```syscalls <name> ```` blocks of SECURITY.md.
  func documentedSequences() throws -> [String: [String]] {
    let file = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
      .deletingLastPathComponent().appendingPathComponent("SECURITY.md")
    let text = try String(contentsOf: file, encoding: .utf8)
    var blocks: [String: [String]] = [:]
    var current: String?
    for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
      if let name = current {
        if line.hasPrefix("```") {
          current = nil
        } else {
          blocks[name, default: []].append(line.trimmingCharacters(in: .whitespaces))
        }
      } else if line.hasPrefix("```syscalls ") {
        current = String(line.dropFirst("```syscalls ".count))
      }
    }
    return blocks
  }

  @Test func eachWritePathMakesTheSystemCallsSecurityMdDocuments() throws {
    let recorded = try recordEveryWritePath().filter { !$0.name.hasPrefix("(setup)") }
    let documented = try documentedSequences()
    #expect(Set(documented.keys) == Set(recorded.map(\.name)), "SECURITY.md documents every write path, no other")
    for (name, calls) in recorded {
      #expect(documented[name] == calls, "\(name): SECURITY.md says\n\(documented[name] ?? [])\nrecorded\n\(calls)")
    }
  }

  /// The rules, independently of the documentation: a file's bytes are synced before it gets a
  /// name outside `tmp/` (a rename or link carries the synced state along, a write clears it);
  /// a data file written straight to its final name has its bytes and its folder synced before
  /// the next log append (a record there is what makes it live); the log is synced after its
  /// last append before the write path ends (before the acknowledgement); every folder that gets
  /// or loses a name outside `tmp/` is synced before then too; every new folder's parent is
  /// synced right after `mkdir`.
  @Test(arguments: [true, false])
  func everyWritePathSyncsDataBeforeNamesAndFoldersBeforeTheAcknowledgement(_ fsync: Bool) throws {
    // Paths whose bytes are synced (carried across write paths: a session's chunks, then its
    // finalize).
    var synced: Set<String> = []
    for (name, calls) in try recordEveryWritePath(fsync: fsync) {
      guard fsync else {
        #expect(!calls.contains { $0.hasPrefix("fsync") || $0.hasPrefix("fdatasync") }, "\(name) syncs without fsync")
        continue
      }
      var pendingFolders: Set<String> = []
      // Data files created at their final name whose folder was not synced since (by path).
      var unnamed: Set<String> = []
      var logUnsynced = false
      for (index, line) in calls.enumerated() {
        let parts = line.split(separator: " ").map(String.init)
        let (call, path) = (parts[0], parts.count > 1 ? parts[1] : "")
        func folder(_ path: String) -> String { (path as NSString).deletingLastPathComponent + "/" }
        if call == "write" && path.hasPrefix("./log/") {
          #expect(unnamed.isEmpty, "\(name): \(line) before the folder of \(unnamed) was synced")
          let unsynced = calls[..<index].compactMap { line -> String? in
            let created = line.split(separator: " ").map(String.init)
            guard created[0] == "create", created[1].hasSuffix(".data"), !created[1].hasPrefix("./tmp/") else {
              return nil
            }
            return synced.contains(created[1]) ? nil : created[1]
          }
          #expect(unsynced.isEmpty, "\(name): \(line) before the bytes of \(unsynced) were synced")
          logUnsynced = true
        }
        if call == "fdatasync" && path.hasPrefix("./log/") { logUnsynced = false }
        switch call {
        case "write", "create":
          synced.remove(path)
          if call == "create" && path.hasSuffix(".data") && !path.hasPrefix("./tmp/") { unnamed.insert(path) }
        case "fsync", "fdatasync":
          if path.hasSuffix("/") {
            pendingFolders.remove(path)
            unnamed = unnamed.filter { folder($0) != path }
          } else {
            synced.insert(path)
          }
        case "rename", "link", "exchange":
          let target = parts[2]
          if !target.hasPrefix("./tmp/") {
            #expect(synced.contains(path), "\(name): \(line) names bytes that were not synced")
            pendingFolders.insert(folder(target))
          }
          if synced.contains(path) { synced.insert(target) }
          if call == "rename" { synced.remove(path) }
        case "unlink":
          if path.hasSuffix(".json") { pendingFolders.insert(folder(path)) }
        case "mkdir":
          #expect(index + 1 < calls.count && calls[index + 1] == "fsync \(folder(path))", "\(name): \(line) not synced")
        default: Issue.record("\(name): unexpected call \(line)")
        }
      }
      #expect(pendingFolders.isEmpty, "\(name): folders not synced before the acknowledgement: \(pendingFolders)")
      #expect(!logUnsynced, "\(name): the log is not synced after its last append")
    }
  }

  @Test func aNewDataFolderIsSyncedIntoItsParent() throws {
    let folder = TemporaryFolder()
    defer { folder.cleanUp() }
    let root = folder.url.appendingPathComponent("new/data").standardizedFileURL.path
    let recorder = Recorder(root: root)
    _ = try FileBackend(root: URL(fileURLWithPath: root), fsync: true, calls: recorder.calls)
    let calls = recorder.take()
    let parent = (root as NSString).deletingLastPathComponent
    #expect(
      Array(calls.prefix(4)) == [
        "mkdir \(parent)", "fsync \(folder.url.standardizedFileURL.path)/", "mkdir .", "fsync \(parent)/",
      ])
    #expect(calls.contains("mkdir ./buckets") && calls.contains("mkdir ./tmp"))
  }
}
