import Dispatch
import EmulatorSupport

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Threads for start-up's reads of many files (log segments; every record of a format-1 folder
/// being migrated).
extension FileBackend {
  /// More threads than cores: a read that waits for the disk (the page cache rarely holds a
  /// million records) lets another thread's read start, so the disk sees many at once.
  static let readThreads = 16

  /// Runs `body(worker)` for each worker in `0..<count`, each on its own thread, and returns
  /// once all have returned.
  static func onThreads(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) {
    let group = DispatchGroup()
    for worker in 0..<count {
      group.enter()
      BackgroundThread.start(stackSize: 1 << 20) {
        body(worker)
        group.leave()
      }
    }
    group.wait()
  }

  /// The names in a folder (without `.` and `..`), straight from `readdir`; nil when it cannot be
  /// opened. A shard folder at a million objects holds some 8,000 records and as many data files.
  static func names(in folder: String) -> [String]? {
    guard let directory = opendir(folder) else { return nil }
    defer { closedir(directory) }
    var names: [String] = []
    while let entry = readdir(directory) {
      let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
        String(cString: raw.baseAddress!.assumingMemoryBound(to: CChar.self))
      }
      if name != "." && name != ".." { names.append(name) }
    }
    return names
  }
}
