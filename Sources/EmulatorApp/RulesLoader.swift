import Dispatch
import EmulatorRules
import EmulatorStorage
import EmulatorSupport

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Reads the security rules a configuration names (`--rules FILE`, or `storage` in a
/// `firebase.json`), and reloads them when a file changes.
public enum RulesLoader {
  /// The files a configuration names, read; nil when it names none. Paths in a `firebase.json`
  /// are relative to its folder.
  public static func files(for configuration: EmulatorConfiguration) throws(ConfigurationError) -> [RulesFile]? {
    if let path = configuration.rulesFile { return [RulesFile(name: path, content: try read(path))] }
    guard let path = configuration.firebaseJSON else { return nil }
    return try sources(firebaseJSON: path).map { (source) throws(ConfigurationError) in
      RulesFile(name: source.path, content: try read(source.path), bucket: source.bucket)
    }
  }

  /// The rules files (and buckets) of a `firebase.json`: `"storage": {"rules": "storage.rules"}`,
  /// or `"storage": [{"bucket": "b", "rules": "..."}, {"target": "t", "rules": "..."}]` with
  /// targets resolved to buckets through `.firebaserc` beside it.
  static func sources(firebaseJSON path: String) throws(ConfigurationError) -> [(path: String, bucket: String?)] {
    let folder = URL(fileURLWithPath: path).deletingLastPathComponent()
    func resolve(_ file: String) -> String {
      file.hasPrefix("/") ? file : folder.appendingPathComponent(file).path
    }
    guard let storage = try json(path)["storage"] else {
      throw ConfigurationError("\(path) has no \"storage\" section")
    }
    switch storage {
    case .object:
      guard let rules = storage["rules"]?.stringValue else {
        throw ConfigurationError("\(path): \"storage\" needs \"rules\": \"storage.rules\"")
      }
      return [(resolve(rules), nil)]
    case .array(let entries):
      var result: [(path: String, bucket: String?)] = []
      for entry in entries {
        guard let rules = entry["rules"]?.stringValue else {
          throw ConfigurationError("\(path): each \"storage\" entry needs \"rules\"")
        }
        if let bucket = entry["bucket"]?.stringValue {
          result.append((resolve(rules), bucket))
        } else if let target = entry["target"]?.stringValue {
          let buckets = try targetBuckets(target, firebaserc: folder.appendingPathComponent(".firebaserc").path)
          for bucket in buckets { result.append((resolve(rules), bucket)) }
        } else {
          throw ConfigurationError("\(path): each \"storage\" entry needs \"bucket\" or \"target\"")
        }
      }
      guard !result.isEmpty else { throw ConfigurationError("\(path): \"storage\" names no rules") }
      return result
    default:
      throw ConfigurationError("\(path): \"storage\" must be an object or an array")
    }
  }

  /// `.firebaserc`: `{"targets": {"<project>": {"storage": {"<target>": ["bucket", ...]}}}}`.
  static func targetBuckets(_ target: String, firebaserc: String) throws(ConfigurationError) -> [String] {
    guard case .object(let projects)? = try json(firebaserc)["targets"] else {
      throw ConfigurationError("\(firebaserc) has no \"targets\" for the storage target '\(target)'")
    }
    for (_, project) in projects {
      if case .array(let buckets)? = project["storage"]?[target] {
        return buckets.compactMap(\.stringValue)
      }
    }
    throw ConfigurationError("\(firebaserc) does not define the storage target '\(target)'")
  }

  static func json(_ path: String) throws(ConfigurationError) -> JSONValue {
    let text = try read(path)
    do {
      return try JSONValue.parse(Array(text.utf8))
    } catch {
      throw ConfigurationError("\(path) is not valid JSON: \(error)")
    }
  }

  static func read(_ path: String) throws(ConfigurationError) -> String {
    guard let data = FileManager.default.contents(atPath: path) else {
      throw ConfigurationError("cannot read the rules file '\(path)'")
    }
    guard data.count <= Ruleset.maxSourceBytes * 4, let text = String(data: data, encoding: .utf8) else {
      throw ConfigurationError("'\(path)' is not a UTF-8 text file of reasonable size")
    }
    return text
  }
}

/// Polls the configured rules files (and the `firebase.json`) once a second; when one changes,
/// reloads. A reload that fails keeps the rules in force and logs why.
final class RulesWatcher: @unchecked Sendable {
  // Invariant: `stamps` is only touched on `queue`.
  private let queue = DispatchQueue(label: "storage-emulator.rules-watcher")
  private var stamps: [String: String] = [:]
  private var timer: (any DispatchSourceTimer)?
  private let configuration: EmulatorConfiguration
  private let registry: RulesRegistry
  private let log: @Sendable (String) -> Void

  init(
    configuration: EmulatorConfiguration, registry: RulesRegistry, files: [RulesFile],
    log: @escaping @Sendable (String) -> Void
  ) {
    self.configuration = configuration
    self.registry = registry
    self.log = log
    let paths = Self.watchedPaths(configuration, files)
    queue.sync { for path in paths { stamps[path] = Self.stamp(path) } }
  }

  static func watchedPaths(_ configuration: EmulatorConfiguration, _ files: [RulesFile]) -> [String] {
    var paths = files.map(\.name)
    if let json = configuration.firebaseJSON { paths.append(json) }
    return Array(Set(paths)).sorted()
  }

  /// Modification time and size: enough to notice an editor's save.
  static func stamp(_ path: String) -> String {
    var info = stat()
    guard stat(path, &info) == 0 else { return "missing" }
    return "\(info.st_mtim.tv_sec).\(info.st_mtim.tv_nsec)/\(info.st_size)"
  }

  func start(interval: Double = 1) {
    let timer = DispatchSource.makeTimerSource(queue: queue)
    timer.schedule(deadline: .now() + interval, repeating: interval)
    timer.setEventHandler { [weak self] in self?.check() }
    timer.activate()
    queue.sync { self.timer = timer }
  }

  func stop() {
    queue.sync {
      timer?.cancel()
      timer = nil
    }
  }

  private func check() {
    let changed = stamps.contains { path, stamp in Self.stamp(path) != stamp }
    guard changed else { return }
    for path in stamps.keys { stamps[path] = Self.stamp(path) }
    do {
      guard let files = try RulesLoader.files(for: configuration) else { return }
      try registry.replace(with: files)
      for path in Self.watchedPaths(configuration, files) where stamps[path] == nil { stamps[path] = Self.stamp(path) }
      log("rules: reloaded \(files.map(\.name).joined(separator: ", "))")
    } catch let error as ConfigurationError {
      log("rules: reload failed, keeping the previous rules: \(error.message)")
    } catch {
      log("rules: reload failed, keeping the previous rules: \(error)")
    }
  }
}
