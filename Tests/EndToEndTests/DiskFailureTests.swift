import Foundation
import Testing

/// A data folder on a small tmpfs: a full disk fails writes with a clear JSON error, leaves
/// earlier data intact, keeps reads working, and recovers when space is back; a read-only folder
/// is refused at start-up with a clear message.
/// Needs root (mount), as CI and the development machines have.
@Suite(.serialized) struct DiskFailureTests {
  static func mount(_ arguments: [String]) throws {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/bin/mount")
    process.arguments = arguments
    try process.run()
    process.waitUntilExit()
    guard process.terminationStatus == 0 else {
      throw NSError(
        domain: "mount", code: Int(process.terminationStatus),
        userInfo: [NSLocalizedDescriptionKey: "mount \(arguments) failed (the test needs root)"])
    }
  }

  @Test func diskFullAndReadOnlyFolderFailCleanlyAndRecover() throws {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("se-tmpfs-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    try Self.mount(["-t", "tmpfs", "-o", "size=4m", "tmpfs", folder.path])
    defer {
      try? Self.mount(["-o", "remount,rw", folder.path])
      let umount = Process()
      umount.executableURL = URL(fileURLWithPath: "/bin/umount")
      umount.arguments = [folder.path]
      try? umount.run()
      umount.waitUntilExit()
      try? FileManager.default.removeItem(at: folder)
    }
    let arguments = ["--data-dir", folder.appendingPathComponent("data").path]
    var server = try EmulatorProcess(arguments: arguments)
    defer { _ = server.terminate() }
    let base = server.base
    let keep = [UInt8](repeating: 1, count: 300_000)
    #expect(
      try Curl().perform("POST", base + "/upload/storage/v1/b/bkt/o?uploadType=media&name=keep", body: keep).status
        == 200)

    // Fill the disk: uploads end in 507 with a JSON error, never a crash or a torn object.
    var statuses: [Int] = []
    var lastError = ""
    for index in 0..<20 {
      let reply = try Curl().perform(
        "POST", base + "/upload/storage/v1/b/bkt/o?uploadType=media&name=fill\(index)",
        body: [UInt8](repeating: UInt8(index), count: 600_000))
      statuses.append(reply.status)
      if reply.status != 200 {
        lastError = reply.text
        break
      }
    }
    #expect(statuses.last == 507)
    #expect(lastError.contains("\"code\":507"))
    #expect(lastError.contains("No space left on device"))
    // Earlier data is intact and reads go on working.
    #expect(try Curl().perform("GET", base + "/storage/v1/b/bkt/o/keep?alt=media").body == keep)
    let filled = statuses.count - 1
    #expect(filled >= 1)
    #expect(
      try Curl().perform("GET", base + "/storage/v1/b/bkt/o/fill0?alt=media").body
        == [UInt8](repeating: 0, count: 600_000))
    #expect(try Curl.request("GET", base + "/storage/v1/b/bkt/o/fill\(filled)").status == 404)

    // Space comes back: writes work again.
    for index in 0..<filled { _ = try Curl.request("DELETE", base + "/storage/v1/b/bkt/o/fill\(index)") }
    #expect(
      try Curl().perform("POST", base + "/upload/storage/v1/b/bkt/o?uploadType=media&name=after", body: keep).status
        == 200)

    // A read-only folder. While the emulator runs, its open log segment keeps the file system from
    // being remounted read-only (the kernel answers busy); stopped, then remounted read-only, the
    // folder is refused at start-up; writable again, everything is there.
    #expect(throws: (any Error).self) { try Self.mount(["-o", "remount,ro", folder.path]) }
    let (status, _) = server.terminate()
    #expect(status == 0)
    try Self.mount(["-o", "remount,ro", folder.path])
    #expect(throws: (any Error).self) { _ = try EmulatorProcess(arguments: arguments) }
    try Self.mount(["-o", "remount,rw", folder.path])
    server = try EmulatorProcess(arguments: arguments)
    let restarted = server.base
    #expect(try Curl().perform("GET", restarted + "/storage/v1/b/bkt/o/keep?alt=media").body == keep)
    let patched = try Curl.request("PATCH", restarted + "/storage/v1/b/bkt/o/keep", body: #"{"metadata":{"a":"b"}}"#)
    #expect(patched.status == 200)
    #expect(patched.json["metageneration"] as? String == "2")
  }
}
