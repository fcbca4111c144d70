import EmulatorApp
import EmulatorStorage
import Foundation
import Testing

/// The built `storage-emulator` binary's command line: help, version, and usage errors with exit
/// code 64 and a message naming the bad option's source, and a data folder one emulator already holds.
@Suite struct CommandLineBinaryTests {
  struct Outcome {
    var status: Int32
    var output: String
    var errors: String
  }

  func run(_ arguments: [String], environment: [String: String] = [:]) throws -> Outcome {
    let process = Process()
    process.executableURL = EmulatorProcess.executableURL()
    process.arguments = arguments
    process.environment = environment
    let output = Pipe()
    let errors = Pipe()
    process.standardOutput = output
    process.standardError = errors
    try process.run()
    let outputData = output.fileHandleForReading.readDataToEndOfFile()
    let errorData = errors.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return Outcome(
      status: process.terminationStatus, output: String(decoding: outputData, as: UTF8.self),
      errors: String(decoding: errorData, as: UTF8.self))
  }

  @Test func versionAndHelpExitZeroAndHelpListsEveryOption() throws {
    let version = try run(["--version"])
    #expect(version.status == 0 && version.output == "storage-emulator \(CommandLineTool.version)\n")
    for arguments in [["--help"], ["serve", "--help"], ["-h"]] {
      let help = try run(arguments)
      #expect(help.status == 0, "\(arguments)")
      for option in EmulatorConfiguration.options {
        #expect(help.output.contains(option.variable), "\(arguments): \(option.variable)")
      }
    }
    let health = try run(["health", "--help"])
    #expect(health.status == 0 && health.output.contains("--port"))
  }

  /// Two emulators on one data folder (parallel test workers with the default `--data-dir`)
  /// would overwrite each other's log segments: the second is refused, naming the first's pid,
  /// and the first's data is untouched; once the first is gone the folder opens again.
  @Test func aSecondEmulatorOnTheSameDataFolderIsRefused() throws {
    let folder = try TemporaryFolder.make("se-lock")
    defer { try? FileManager.default.removeItem(at: folder) }
    let data = folder.appendingPathComponent("data").path
    let first = try EmulatorProcess(arguments: ["--data-dir", data])
    let second = try run(["--port", "0", "--data-dir", data])
    #expect(second.status != 0)
    #expect(
      second.errors.contains("is in use by another storage-emulator process (pid \(first.process.processIdentifier))"),
      "\(second.errors)")
    first.kill9()
    // A kill -9 releases the lock with the process: an in-process backend opens the folder now.
    _ = try FileBackend(root: URL(fileURLWithPath: data))
  }

  /// The folder opened twice in this process: dropping one backend must not release the lock
  /// the other still needs (a POSIX lock goes with any close of the file in the process).
  @Test func aFolderOpenedTwiceInOneProcessStaysLockedUntilTheLastBackendGoes() throws {
    let folder = try TemporaryFolder.make("se-lock2")
    defer { try? FileManager.default.removeItem(at: folder) }
    let data = folder.appendingPathComponent("data")
    var first: FileBackend? = try FileBackend(root: data)
    var second: FileBackend? = try FileBackend(root: data)
    first = nil
    let refused = try run(["--port", "0", "--data-dir", data.path])
    #expect(refused.status != 0 && refused.errors.contains("is in use by another storage-emulator process"))
    second = nil
    _ = (first, second)
    let started = try EmulatorProcess(arguments: ["--data-dir", data.path])
    started.kill9()
  }

  @Test func badOptionsExitWithAUsageErrorNamingTheSource() throws {
    let flag = try run(["--port", "x"])
    #expect(flag.status == 64)
    #expect(flag.errors.contains("--port: must be a decimal integer that fits 64 bits, got 'x'"), "\(flag.errors)")
    let variable = try run(["--in-memory"], environment: ["STORAGE_EMULATOR_MAX_CONNECTIONS": "0"])
    #expect(variable.status == 64)
    #expect(variable.errors.contains("STORAGE_EMULATOR_MAX_CONNECTIONS: must be an integer in 1...1000000, got 0"))
    let file = FileManager.default.temporaryDirectory.appendingPathComponent("se-bad-\(UUID().uuidString).toml")
    try "# settings\n[server]\nport = 1\n".write(to: file, atomically: true, encoding: .utf8)
    defer { try? FileManager.default.removeItem(at: file) }
    let config = try run(["--config", file.path])
    #expect(config.status == 64)
    #expect(config.errors.contains("\(file.path):2: tables ('[section]') are not supported"), "\(config.errors)")
    let unknown = try run(["--prot", "1"])
    #expect(unknown.status == 64 && unknown.errors.contains("unknown option '--prot'"))
  }
}
