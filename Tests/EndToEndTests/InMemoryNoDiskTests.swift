import EmulatorStorage
import Foundation
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// `--in-memory` touches no disk: uploads of every kind (simple, resumable, XML multipart, with
/// bodies big enough to be spooled on disk otherwise), listing, reads and deletes make no
/// file-system write, in process (the recorded write steps) and as a real process (run as an
/// unprivileged user, traced).
@Suite(.serialized) struct InMemoryNoDiskTests {
  /// Uploads, lists, reads and deletes through every upload path; checks every answer.
  static func uploadFlow(base: String) throws {
    let big = (0..<(3 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 2_654_435_761 >> 11) }
    #expect(try Curl.request("POST", base + "/storage/v1/b", body: "{\"name\":\"mem\"}").status == 200)
    // Simple upload, past the 1 MiB spool threshold.
    let media = try Curl().perform(
      "POST", base + "/upload/storage/v1/b/mem/o?uploadType=media&name=media.bin", body: big)
    #expect(media.status == 200, "\(media.text)")
    // multipart/related.
    let related =
      "--b\r\nContent-Type: application/json\r\n\r\n{\"name\":\"related.txt\"}\r\n--b\r\n"
      + "Content-Type: text/plain\r\n\r\nrelated body\r\n--b--\r\n"
    let multipart = try Curl.request(
      "POST", base + "/upload/storage/v1/b/mem/o?uploadType=multipart", body: related,
      headers: ["Content-Type: multipart/related; boundary=b"])
    #expect(multipart.status == 200, "\(multipart.text)")
    // Resumable, in two chunks, the first over the spool threshold.
    let start = try Curl.request(
      "POST", base + "/upload/storage/v1/b/mem/o?uploadType=resumable&name=resumable.bin", body: "{}",
      headers: ["X-Upload-Content-Length: \(big.count)"])
    let location = try #require(start.header("location"))
    let half = 2 << 20
    let first = try Curl().perform(
      "PUT", location, body: Array(big[..<half]), headers: ["Content-Range: bytes 0-\(half - 1)/\(big.count)"])
    #expect(first.status == 308)
    let last = try Curl().perform(
      "PUT", location, body: Array(big[half...]),
      headers: ["Content-Range: bytes \(half)-\(big.count - 1)/\(big.count)"])
    #expect(last.status == 200, "\(last.text)")
    // XML multipart: a part over the spool threshold, one under; list, complete.
    let xmlName = base + "/mem/xml%20multipart.bin"
    let initiated = try Curl.request("POST", xmlName + "?uploads", headers: ["Content-Type: text/x-parts"])
    let id = try #require(initiated.text.components(separatedBy: "<UploadId>").last?.components(separatedBy: "<").first)
    let tag1 = try #require(
      try Curl().perform("PUT", xmlName + "?partNumber=1&uploadId=\(id)", body: big).header("etag"))
    let tag2 = try #require(
      try Curl.request("PUT", xmlName + "?partNumber=2&uploadId=\(id)", body: "tail").header("etag"))
    #expect(try Curl.request("GET", xmlName + "?uploadId=\(id)").text.contains("<PartNumber>2</PartNumber>"))
    let done = try Curl.request(
      "POST", xmlName + "?uploadId=\(id)",
      body: "<CompleteMultipartUpload><Part><PartNumber>1</PartNumber><ETag>\(tag1)</ETag></Part>"
        + "<Part><PartNumber>2</PartNumber><ETag>\(tag2)</ETag></Part></CompleteMultipartUpload>")
    #expect(done.status == 200, "\(done.text)")
    // Reads and listing.
    #expect(try Curl().perform("GET", base + "/download/storage/v1/b/mem/o/media.bin?alt=media").body == big)
    #expect(try Curl().perform("GET", base + "/download/storage/v1/b/mem/o/resumable.bin?alt=media").body == big)
    #expect(try Curl().perform("GET", xmlName).body == big + Array("tail".utf8))
    #expect(try Curl.request("GET", base + "/mem/related.txt").text == "related body")
    let listed = try Curl.request("GET", base + "/storage/v1/b/mem/o").json["items"] as? [[String: Any]]
    #expect(
      listed?.compactMap { $0["name"] as? String }.sorted()
        == ["media.bin", "related.txt", "resumable.bin", "xml multipart.bin"])
    // Deletes.
    for name in ["media.bin", "related.txt", "resumable.bin", "xml%20multipart.bin"] {
      #expect(try Curl.request("DELETE", base + "/storage/v1/b/mem/o/" + name).status == 204)
    }
    #expect(try Curl.request("GET", base + "/storage/v1/b/mem/o").json["items"] == nil)
  }

  /// In process: the same flow with a file backend records write steps in `uploads/`,
  /// `multipart/` and the object folders (so the recording sees them); in memory it records none.
  @Test(arguments: [false, true])
  func inMemoryFlowMakesNoRecordedWrite(_ inMemory: Bool) throws {
    let lines = Locked<[String]>([])
    let server = try RunningEmulator(
      inMemory: inMemory, calls: .recording { line in lines.withLock { $0.append(line) } })
    defer {
      server.stop()
      server.removeFolder()
    }
    let before = lines.withLock { $0 }
    try Self.uploadFlow(base: server.base)
    let during = lines.withLock { Array($0[before.count...]) }
    if inMemory {
      #expect(before.isEmpty && during.isEmpty, "in memory, nothing is written: \(before + during)")
      #expect(!FileManager.default.fileExists(atPath: server.dataDirectory.path), "no data folder is made")
      #expect(server.emulator.server.configuration.spoolThresholdBytes == Int.max, "no body is spooled to disk")
    } else {
      for folder in ["/uploads/", "/multipart/", "/buckets/mem/objects/"] {
        #expect(during.contains { $0.contains(folder) }, "the recording sees writes in \(folder)")
      }
    }
  }

  /// A user id no account has: the process then owns nothing and may write only where anyone may.
  static let stranger: UInt32 = 54_321

  static let canTraceAsStranger =
    getuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv")
    && FileManager.default.isExecutableFile(atPath: "/usr/bin/strace") && getpwuid(stranger) == nil

  /// As a real process: `--in-memory`, run by an unprivileged user (`setpriv` to a user id no
  /// account has; the tests run as root, which ignores permission bits) from a working directory
  /// it cannot write to and with no data folder, traced with `strace -f`. The flow succeeds; the
  /// trace shows no successful call that creates, opens for writing, renames, links or removes
  /// a file anywhere (devices under /dev aside); nothing in the system's temporary folders
  /// belongs to that user afterwards.
  @Test(.enabled(if: canTraceAsStranger, "needs root, setpriv and strace"))
  func inMemoryProcessRunByAnUnprivilegedUserCreatesNothingAnywhere() throws {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("se-nodisk-\(UUID().uuidString)")
    let readOnly = folder.appendingPathComponent("cwd")
    try FileManager.default.createDirectory(at: readOnly, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: folder) }
    chmod(folder.path, 0o755)
    chmod(readOnly.path, 0o555)
    let trace = folder.appendingPathComponent("trace").path
    let calls =
      "open,openat,creat,mkdir,mkdirat,rename,renameat,renameat2,link,linkat,symlink,symlinkat,"
      + "unlink,unlinkat,rmdir,truncate,mknod,mknodat"
    let process = try EmulatorProcess(
      arguments: ["--in-memory"],
      launcher: [
        "/usr/bin/strace", "-f", "-qq", "-o", trace, "-e", "trace=" + calls, "/usr/bin/setpriv",
        "--reuid=\(Self.stranger)", "--regid=\(Self.stranger)", "--clear-groups", "--",
      ],
      directory: readOnly)
    // strace's child is the emulator (setpriv execs it): stop that one, so it shuts down cleanly.
    let tracer = process.process.processIdentifier
    let children = (try? String(contentsOfFile: "/proc/\(tracer)/task/\(tracer)/children", encoding: .utf8)) ?? ""
    let emulator = try #require(children.split(separator: " ").first.flatMap { Int32($0) })
    defer {
      kill(emulator, SIGKILL)
      process.process.waitUntilExit()
    }
    let status = (try? String(contentsOfFile: "/proc/\(emulator)/status", encoding: .utf8)) ?? ""
    #expect(status.contains("Uid:\t\(Self.stranger)\t"), "the emulator runs as the unprivileged user")
    try Self.uploadFlow(base: process.base)
    kill(emulator, SIGTERM)
    process.process.waitUntilExit()

    let text = try String(contentsOfFile: trace, encoding: .utf8)
    let followed = text.split(separator: "\n").contains {
      $0.prefix { $0 != " " } == String(emulator) && $0.contains(" openat(")
    }
    #expect(followed, "the trace follows the emulator")
    // No exemption: threads name themselves with prctl (BackgroundThread), not through /proc.
    let writes = Self.fileSystemWrites(inTrace: text)
    #expect(writes.isEmpty, "calls that wrote to the file system:\n\(writes.joined(separator: "\n"))")
    #expect(try FileManager.default.contentsOfDirectory(atPath: readOnly.path).isEmpty)
    let owned = try Self.run(
      "/usr/bin/find", ["/tmp", "/var/tmp", "/dev/shm", "-xdev", "-user", String(Self.stranger)])
    #expect(owned.isEmpty, "files of the emulator's user: \(owned)")
  }

  /// The successful calls of an `strace -f` trace that change the file system (a call split by
  /// another thread's, `<unfinished ...>` then `<... resumed>`, is joined first).
  static func fileSystemWrites(inTrace text: String) -> [String] {
    var pending: [Substring: String] = [:]
    var writes: [String] = []
    for raw in text.split(separator: "\n") {
      let pid = raw.prefix { $0 != " " }
      var line = String(raw)
      if let cut = line.range(of: " <unfinished ...>") {
        pending[pid] = String(line[..<cut.lowerBound])
        continue
      }
      if let resumed = line.range(of: " resumed>"), let start = pending.removeValue(forKey: pid) {
        line = start + line[resumed.upperBound...]
      }
      guard let result = line.range(of: ") = ", options: .backwards), !line[result.upperBound...].hasPrefix("-1")
      else { continue }
      // strace pads the pid column ("812  openat(" beside "10443 openat("): skip every space.
      let call = line.drop { $0 != " " }.drop { $0 == " " }.prefix { $0 != "(" }
      let opensForWriting =
        ["open", "openat", "creat"].contains(String(call))
        && (call == "creat" || ["O_WRONLY", "O_RDWR", "O_CREAT", "O_TRUNC"].contains { line.contains($0) })
      let changes = !["open", "openat", "creat"].contains(String(call))
      let path = line.split(separator: "\"").dropFirst().first.map(String.init) ?? ""
      if (opensForWriting || changes) && !(path.hasPrefix("/dev/") && !path.hasPrefix("/dev/shm")) {
        writes.append(line)
      }
    }
    return writes
  }

  /// Runs a command; its standard output's lines.
  static func run(_ command: String, _ arguments: [String]) throws -> [String] {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: command)
    process.arguments = arguments
    let output = Pipe()
    process.standardOutput = output
    process.standardError = FileHandle.nullDevice
    try process.run()
    let data = output.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return String(decoding: data, as: UTF8.self).split(separator: "\n").map(String.init)
  }

  @Test func theTraceReaderFindsWritesAndIgnoresReadsAndFailures() {
    let trace = """
      10 openat(AT_FDCWD, "/etc/hosts", O_RDONLY|O_CLOEXEC) = 3
      812  openat(AT_FDCWD, "/etc/passwd", O_RDONLY|O_CLOEXEC) = 3
      10 openat(AT_FDCWD, "/tmp/x", O_WRONLY|O_CREAT|O_CLOEXEC, 0644) = -1 EACCES (Permission denied)
      10 openat(AT_FDCWD, "/dev/null", O_WRONLY|O_CLOEXEC) = 4
      11 openat(AT_FDCWD, "/tmp/spool-1", O_WRONLY|O_CREAT|O_CLOEXEC, 0644 <unfinished ...>
      10 mkdir("/cwd/storage-emulator-data", 0755) = -1 EACCES (Permission denied)
      11 <... openat resumed>) = 5
      12 rename("/tmp/a", "/tmp/b") = 0
      """
    let writes = Self.fileSystemWrites(inTrace: trace)
    #expect(writes.count == 2)
    #expect(writes.first?.contains("/tmp/spool-1") == true, "a call split by another thread's is joined")
    #expect(writes.last?.hasPrefix("12 rename") == true)
  }
}
