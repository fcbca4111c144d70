import Foundation
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// A test runner stops the emulator the moment it is ready: the signal must not be lost.
@Suite struct SignalTests {
  @Test func sigtermRightAfterTheReadyLineStopsTheServerCleanly() throws {
    for round in 0..<5 {
      let server = try EmulatorProcess(arguments: ["--in-memory"])
      let started = Date()
      let (status, printed) = server.terminate()
      #expect(status == 0, "round \(round): exit status \(status)")
      #expect(printed.contains("storage-emulator stopped"), "round \(round): \(printed)")
      #expect(Date().timeIntervalSince(started) < 10)
    }
  }

  @Test func sigintStopsTheServerAndSavesItsData() throws {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("se-signal-\(UUID().uuidString)")
    defer { try? FileManager.default.removeItem(at: folder) }
    let server = try EmulatorProcess(arguments: ["--data-dir", folder.path])
    #expect(try Curl.request("POST", server.base + "/v0/b/app/o?name=kept", body: "bytes").status == 200)
    kill(server.process.processIdentifier, SIGINT)
    server.process.waitUntilExit()
    #expect(server.process.terminationStatus == 0)
    #expect(FileManager.default.fileExists(atPath: folder.appendingPathComponent("index.snapshot").path))
  }
}
