import EmulatorApp
import EmulatorStorage
import Foundation

/// An in-process emulator on a free port with its own data folder.
final class RunningEmulator {
  let emulator: Emulator
  let port: Int
  let folder: URL
  let ownsFolder: Bool

  var base: String { "http://127.0.0.1:\(port)" }
  var dataDirectory: URL { folder.appendingPathComponent("data") }

  /// - Parameter folder: reuse a folder (a restart); a new temporary one otherwise.
  /// - Parameter calls: the file backend's write steps (a test records them).
  init(
    folder: URL? = nil, inMemory: Bool = false, calls: FileCalls = .direct,
    configure: (inout EmulatorConfiguration) -> Void = { _ in }
  ) throws {
    let folder = try folder ?? TemporaryFolder.make("se-e2e")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    self.folder = folder
    self.ownsFolder = true
    var configuration = EmulatorConfiguration()
    configuration.server.port = 0
    configuration.dataDirectory = folder.appendingPathComponent("data").path
    configuration.inMemory = inMemory
    // Most tests write without creating buckets; GCS's 404 for that is tested with this off.
    configuration.api.lenientBuckets = true
    configure(&configuration)
    emulator = try makeEmulator(configuration, calls: calls)
    port = try emulator.start()
  }

  func stop() { emulator.stop(gracePeriod: 2) }

  func removeFolder() { try? FileManager.default.removeItem(at: folder) }
}

/// The `storage-emulator` executable run as a child process, for kill -9 and signal tests.
final class EmulatorProcess {
  let process = Process()
  let port: Int
  /// The first line it printed ("... ready on ...").
  let readyLine: String
  private let output: Pipe

  /// - Parameters:
  ///   - launcher: a command that runs the emulator (its path is appended, then the arguments),
  ///     such as `setpriv` with a user to run as.
  ///   - directory: the working directory.
  init(arguments: [String], launcher: [String] = [], directory: URL? = nil) throws {
    // Lenient buckets, as in `RunningEmulator`: these tests write without creating buckets.
    let emulatorArguments = ["--port", "0", "--lenient-buckets"] + arguments
    if let command = launcher.first {
      process.executableURL = URL(fileURLWithPath: command)
      process.arguments = Array(launcher.dropFirst()) + [Self.executableURL().path] + emulatorArguments
    } else {
      process.executableURL = Self.executableURL()
      process.arguments = emulatorArguments
    }
    if let directory { process.currentDirectoryURL = directory }
    output = Pipe()
    process.standardOutput = output
    process.standardError = FileHandle.nullDevice
    try process.run()
    // The first line is "storage-emulator <version> ready on http://127.0.0.1:<port> (...)".
    var line = ""
    while !line.hasSuffix("\n") {
      let byte = output.fileHandleForReading.readData(ofLength: 1)
      if byte.isEmpty { break }
      line += String(decoding: byte, as: UTF8.self)
    }
    guard let range = line.range(of: "http://127.0.0.1:"),
      let port = Int(line[range.upperBound...].prefix { $0.isNumber })
    else {
      process.terminate()
      throw NSError(domain: "EmulatorProcess", code: 1, userInfo: [NSLocalizedDescriptionKey: "no ready line: \(line)"])
    }
    self.port = port
    readyLine = line
  }

  /// The binary next to the test bundle (`.build/<triple>/debug/storage-emulator`).
  static func executableURL() -> URL {
    var directory = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent()
    for _ in 0..<4 {
      let candidate = directory.appendingPathComponent("storage-emulator")
      if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
      directory = directory.deletingLastPathComponent()
    }
    return directory.appendingPathComponent("storage-emulator")
  }

  var base: String { "http://127.0.0.1:\(port)" }

  func kill9() {
    kill(process.processIdentifier, SIGKILL)
    process.waitUntilExit()
  }

  /// Sends SIGTERM and returns the exit status and what the process printed after the ready line.
  func terminate() -> (Int32, String) {
    kill(process.processIdentifier, SIGTERM)
    process.waitUntilExit()
    let rest = output.fileHandleForReading.readDataToEndOfFile()
    return (process.terminationStatus, String(decoding: rest, as: UTF8.self))
  }
}
