import EmulatorSupport

/// One rules file to load: its name (for error messages), its text, and the bucket it is for
/// (nil: every bucket).
public struct RulesFile: Sendable, Equatable {
  public var name: String
  public var content: String
  public var bucket: String?

  public init(name: String, content: String, bucket: String? = nil) {
    self.name = name
    self.content = content
    self.bucket = bucket
  }
}

/// The rules in force, swapped atomically. Empty (no rules configured): every request is
/// allowed, and callers skip evaluation altogether.
public final class RulesRegistry: @unchecked Sendable {
  // Invariant: `state` is only read or written with `lock` held.
  private let lock = PosixLock()
  private var state = State()

  struct State {
    var all: Ruleset?
    var byBucket: [String: Ruleset] = [:]
    var enabled = false
  }

  /// What a bucket is governed by.
  public enum Lookup: Sendable {
    /// No rules configured at all: allow everything.
    case unrestricted
    /// Rules are configured but none for this bucket: deny (as the Firebase emulator does).
    case noRuleset
    case ruleset(Ruleset)
  }

  /// Where evaluation notes go (why a condition was false), e.g. the emulator's log.
  public let log: @Sendable (String) -> Void

  public init(log: @escaping @Sendable (String) -> Void = { _ in }) {
    self.log = log
  }

  /// Whether any rules are loaded (cheap; read on every Firebase request).
  public var isEnabled: Bool {
    lock.lock()
    defer { lock.unlock() }
    return state.enabled
  }

  public func lookup(bucket: String) -> Lookup {
    lock.lock()
    defer { lock.unlock() }
    guard state.enabled else { return .unrestricted }
    if let ruleset = state.byBucket[bucket] ?? state.all { return .ruleset(ruleset) }
    return .noRuleset
  }

  /// Parses every file, then replaces the rules in force; on any error nothing changes.
  /// One file without a bucket applies to all buckets; files with buckets apply to theirs.
  public func replace(with files: [RulesFile]) throws(RulesSyntaxError) {
    var next = State(enabled: true)
    for file in files {
      let ruleset = try Ruleset(source: file.content, file: file.name)
      if let bucket = file.bucket {
        next.byBucket[bucket] = ruleset
      } else {
        next.all = ruleset
      }
    }
    lock.lock()
    defer { lock.unlock() }
    state = next
  }

  /// Back to no rules (everything allowed).
  public func clear() {
    lock.lock()
    defer { lock.unlock() }
    state = State()
  }
}
