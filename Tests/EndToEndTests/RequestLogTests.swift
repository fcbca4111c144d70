import EmulatorStorage
import Foundation
import Logging
import Testing

@testable import EmulatorApp

/// Lines collected from a `LogSink`.
final class CollectedLines: Sendable {
  private let lines = Locked<[String]>([])
  let sink: LogSink

  init() {
    let lines = self.lines
    sink = LogSink { bytes in
      let text = String(decoding: bytes, as: UTF8.self)
      lines.withLock { $0 += text.split(separator: "\n").map(String.init) }
    }
  }

  func all() -> [String] {
    sink.flush()
    return lines.withLock { $0 }
  }
}

/// The request log: one line per request, levels, text and JSON, the flags, environment and
/// config key that choose them.
@Suite struct RequestLogTests {
  func emulator(level: Logger.Level, format: LogFormat, lines: CollectedLines) throws -> RunningEmulatorWithLog {
    try RunningEmulatorWithLog(level: level, format: format, sink: lines.sink)
  }

  @Test func textLinesNameMethodPathStatusBytesAndDuration() throws {
    let lines = CollectedLines()
    let server = try emulator(level: .info, format: .text, lines: lines)
    defer { server.stop() }
    #expect(try Curl.request("POST", server.base + "/v0/b/bkt/o?name=a%2Fb.txt", body: "hello").status == 200)
    #expect(try Curl.request("GET", server.base + "/v0/b/bkt/o/a%2Fb.txt?alt=media").text == "hello")
    #expect(try Curl.request("GET", server.base + "/storage/v1/b/bkt/o/missing").status == 404)
    #expect(try Curl.request("HEAD", server.base + "/storage/v1/b/bkt/o/a%2Fb.txt").status == 200)
    let log = lines.all()
    #expect(log.count == 4)
    let upload = try #require(log.first { $0.contains(" POST /v0/b/bkt/o?name=a%2Fb.txt ") })
    #expect(upload.contains(" info "))
    #expect(upload.contains("status=200 in=5 out="))
    #expect(upload.range(of: #" ms=[0-9.]+$"#, options: .regularExpression) != nil)
    let download = try #require(log.first { $0.contains(" GET /v0/b/bkt/o/a%2Fb.txt?alt=media ") })
    #expect(download.contains("status=200 in=0 out=5 "))
    #expect(log.contains { $0.contains(" GET /storage/v1/b/bkt/o/missing status=404 in=0 out=") })
    #expect(log.contains { $0.contains(" HEAD /storage/v1/b/bkt/o/a%2Fb.txt status=200 in=0 out=0 ") })
    // Each line starts with its time.
    #expect(log.allSatisfy { $0.range(of: #"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z "#, options: .regularExpression) != nil })
  }

  @Test func jsonLinesAreOneObjectEachWithNumbersAsNumbers() throws {
    let lines = CollectedLines()
    let server = try emulator(level: .debug, format: .json, lines: lines)
    defer { server.stop() }
    #expect(
      try Curl.request(
        "PATCH", server.base + "/storage/v1/b/nobucket/o/x", body: "{}", headers: ["Content-Type: application/json"]
      ).status == 404)
    let log = lines.all()
    #expect(log.count == 1)
    let object = try #require(try JSONSerialization.jsonObject(with: Data(log[0].utf8)) as? [String: Any])
    #expect(object["level"] as? String == "info")
    #expect(object["message"] as? String == "PATCH /storage/v1/b/nobucket/o/x")
    #expect(object["status"] as? Int == 404)
    #expect(object["in"] as? Int == 2)
    #expect((object["ms"] as? Double ?? -1) >= 0)
    #expect(object["time"] is String)
  }

  @Test func aLevelAboveInfoLogsNoRequests() throws {
    let lines = CollectedLines()
    let server = try emulator(level: .notice, format: .text, lines: lines)
    defer { server.stop() }
    #expect(try Curl.request("GET", server.base + "/storage/v1/b").status == 200)
    #expect(lines.all().isEmpty)
  }

  @Test func controlCharactersCannotSplitALine() {
    let line = EmulatorLogHandler.format(
      level: .info, message: "GET /x\r\nfake 200", fields: ["reason": "a\nb"], as: .text)
    let text = String(decoding: line, as: UTF8.self)
    #expect(!text.contains("\n") && !text.contains("\r"))
    #expect(text.hasSuffix(" info GET /x??fake 200 reason=a?b"))
  }

  @Test func theBinaryPrintsClientEnvironmentAndLogsRequestsToStandardError() throws {
    let process = Process()
    process.executableURL = EmulatorProcess.executableURL()
    process.arguments = ["--in-memory", "--port", "0", "--log-level", "info", "--log-format", "json"]
    let out = Pipe()
    let err = Pipe()
    process.standardOutput = out
    process.standardError = err
    try process.run()
    defer {
      if process.isRunning {
        process.terminate()
        process.waitUntilExit()
      }
    }
    var printed = ""
    while !printed.contains("FIREBASE_STORAGE_EMULATOR_HOST") {
      let chunk = out.fileHandleForReading.availableData
      if chunk.isEmpty { break }
      printed += String(decoding: chunk, as: UTF8.self)
    }
    let range = try #require(printed.range(of: "ready on http://127.0.0.1:"))
    let port = try #require(Int(printed[range.upperBound...].prefix { $0.isNumber }))
    #expect(printed.contains("export STORAGE_EMULATOR_HOST=http://127.0.0.1:\(port)"))
    #expect(printed.contains("export FIREBASE_STORAGE_EMULATOR_HOST=127.0.0.1:\(port)"))
    #expect(try Curl.request("GET", "http://127.0.0.1:\(port)/storage/v1/b").status == 200)
    process.terminate()
    process.waitUntilExit()
    let logged = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    #expect(logged.contains(#""message":"GET /storage/v1/b""#))
    #expect(logged.contains(#""status":200"#))
  }
}

/// An in-process emulator whose log goes to a sink.
final class RunningEmulatorWithLog {
  let emulator: Emulator
  let port: Int
  var base: String { "http://127.0.0.1:\(port)" }

  init(level: Logger.Level, format: LogFormat, sink: LogSink) throws {
    var configuration = EmulatorConfiguration()
    configuration.server.port = 0
    configuration.inMemory = true
    let logger = Logger(label: "test") { _ in EmulatorLogHandler(level: level, format: format, sink: sink) }
    emulator = try makeEmulator(configuration, logger: logger)
    port = try emulator.start()
  }

  func stop() { emulator.stop(gracePeriod: 2) }
}
