import EmulatorSupport

/// Which event loop serves the connections.
public enum EventLoopKind: Sendable, Equatable, CustomStringConvertible {
  /// epoll (Linux only): the measured hot path, the default on Linux.
  case epoll
  /// poll(2): POSIX, the default elsewhere.
  case portable
  /// A name that is neither; `HTTPServer.start()` refuses it with a message naming the choices.
  case unrecognized(String)

  /// The environment variable that picks the default of `HTTPServerConfiguration.eventLoop`,
  /// so every server a process starts (each test included) honours it.
  public static let environmentVariable = "STORAGE_EMULATOR_EVENT_LOOP"

  /// `epoll` or `portable` (case-insensitive); anything else is `.unrecognized`.
  public init(name: String) {
    switch name.lowercased() {
    case "epoll": self = .epoll
    case "portable": self = .portable
    default: self = .unrecognized(name)
    }
  }

  /// epoll where it exists.
  public static var platformDefault: EventLoopKind {
    #if os(Linux)
      .epoll
    #else
      .portable
    #endif
  }

  /// The environment variable's choice when it is set and not empty, else the platform default.
  public static func fromEnvironment(_ environment: [String: String] = ProcessInfo.processInfo.environment)
    -> EventLoopKind
  {
    guard let name = environment[environmentVariable], !name.isEmpty else { return platformDefault }
    return EventLoopKind(name: name)
  }

  public var description: String {
    switch self {
    case .epoll: "epoll"
    case .portable: "portable"
    case .unrecognized(let name): name
    }
  }

  /// Why this kind cannot run here, or nil when it can.
  var problem: String? {
    switch self {
    case .portable: return nil
    case .epoll:
      #if os(Linux)
        return nil
      #else
        return "the epoll event loop exists on Linux only; use 'portable'"
      #endif
    case .unrecognized(let name):
      return "unknown event loop '\(name)' (from \(Self.environmentVariable) or the configuration); "
        + "use 'epoll' or 'portable'"
    }
  }
}
