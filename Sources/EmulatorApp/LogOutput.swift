import Dispatch
import EmulatorStorage
import EmulatorSupport
import Logging

#if canImport(Glibc)
  import Glibc
#endif

/// How log lines are written: `text` (one readable line) or `json` (one JSON object a line).
public enum LogFormat: String, Sendable, Equatable, CaseIterable {
  case text, json
}

/// Where log lines go: lines are appended to a buffer and written in batches (at most every
/// 20 ms, or at once past 64 KiB), so a busy server makes one `write` for many requests and no
/// request waits for the terminal.
public final class LogSink: Sendable {
  private struct State {
    var buffer: [UInt8] = []
    var flushScheduled = false
  }

  private let state = Locked(State())
  private let queue = DispatchQueue(label: "storage-emulator.log")
  private let write: @Sendable ([UInt8]) -> Void

  /// Lines go to `write` (called on a private queue, in order).
  public init(write: @escaping @Sendable ([UInt8]) -> Void) {
    self.write = write
  }

  /// Standard error, unbuffered.
  public static func standardError() -> LogSink {
    LogSink { bytes in
      var offset = 0
      while offset < bytes.count {
        let written = bytes.withUnsafeBytes { Glibc.write(2, $0.baseAddress! + offset, $0.count - offset) }
        if written < 0 && errno == EINTR { continue }
        if written <= 0 { return }
        offset += written
      }
    }
  }

  /// Appends one line (without its newline).
  public func append(_ line: [UInt8]) {
    let schedule = state.withLock { state -> Bool in
      state.buffer.append(contentsOf: line)
      state.buffer.append(10)
      if state.flushScheduled { return false }
      state.flushScheduled = true
      return true
    }
    if schedule {
      queue.asyncAfter(deadline: .now() + .milliseconds(20)) { [self] in drain() }
    }
  }

  /// Writes what is buffered now (at shutdown, and in tests).
  public func flush() {
    queue.sync { drain() }
  }

  private func drain() {
    let bytes = state.withLock { state -> [UInt8] in
      state.flushScheduled = false
      defer { state.buffer = [] }
      return state.buffer
    }
    if !bytes.isEmpty { write(bytes) }
  }
}

/// A swift-log handler that formats lines as text or JSON into a `LogSink`.
public struct EmulatorLogHandler: LogHandler {
  public var logLevel: Logger.Level
  public var metadata: Logger.Metadata = [:]
  public var metadataProvider: Logger.MetadataProvider?
  let format: LogFormat
  let sink: LogSink

  public init(level: Logger.Level, format: LogFormat, sink: LogSink) {
    self.logLevel = level
    self.format = format
    self.sink = sink
  }

  public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
    get { metadata[key] }
    set { metadata[key] = newValue }
  }

  public func log(event: LogEvent) {
    var fields = metadata
    if let extra = event.metadata { fields.merge(extra) { $1 } }
    sink.append(Self.format(level: event.level, message: event.message.description, fields: fields, as: format))
  }

  /// One line: `2024-01-02T03:04:05.678Z info message key=value …`, or a JSON object with
  /// `time`, `level`, `message` and the metadata (integers and numbers stay numbers). Keys come
  /// in a fixed order so lines are stable.
  static func format(level: Logger.Level, message: String, fields: Logger.Metadata, as format: LogFormat) -> [UInt8] {
    let now = Timestamp.nowMilliseconds()
    // Request lines read best as "status, in, out, ms"; other keys follow in name order.
    let rank = ["status": 0, "in": 1, "out": 2, "ms": 3]
    let keys = fields.keys.sorted { (rank[$0] ?? 9, $0) < (rank[$1] ?? 9, $1) }
    switch format {
    case .text:
      var line: [UInt8] = []
      line.reserveCapacity(128)
      Timestamp.append(milliseconds: now, to: &line)
      line.append(32)
      line.append(contentsOf: level.rawValue.utf8)
      line.append(32)
      appendPrintable(message, to: &line)
      for key in keys {
        line.append(32)
        line.append(contentsOf: key.utf8)
        line.append(UInt8(ascii: "="))
        appendPrintable(fields[key]!.description, to: &line)
      }
      return line
    case .json:
      var json = JSONWriter(capacity: 256)
      json.beginObject()
      json.timestamp("time", milliseconds: now)
      json.string("level", level.rawValue)
      json.string("message", message)
      for key in keys {
        let value = fields[key]!
        if case .stringConvertible(let convertible) = value, convertible is Int || convertible is Double {
          json.raw(key, convertible.description)
        } else {
          json.string(key, value.description)
        }
      }
      json.endObject()
      return json.bytes
    }
  }

  /// Control characters (a CR/LF in a path, say) become `?`, so one entry is always one line.
  private static func appendPrintable(_ text: String, to line: inout [UInt8]) {
    for byte in text.utf8 { line.append(byte < 32 || byte == 127 ? UInt8(ascii: "?") : byte) }
  }
}

extension LogFormat {
  static func parse(_ text: String) throws(ConfigurationError) -> LogFormat {
    guard let format = LogFormat(rawValue: text.lowercased()) else {
      throw ConfigurationError("log format must be text or json; got '\(text)'")
    }
    return format
  }
}

extension Logger.Level {
  /// Parses a level name as given to `--log-level`, the environment or the config file.
  static func parse(_ text: String) throws(ConfigurationError) -> Logger.Level {
    guard let level = Logger.Level(rawValue: text.lowercased()) else {
      let names = Logger.Level.allCases.map(\.rawValue).joined(separator: ", ")
      throw ConfigurationError("log level must be one of \(names); got '\(text)'")
    }
    return level
  }
}
