import EmulatorHTTP

/// Every route the server answers, indexed for byte-level lookup: exact paths by their first
/// segment and then a dictionary, JSON-surface routes by surface and resource kind, XML routes by
/// level. A request is compared with the few entries of its own slot only, never with the whole
/// table. Matching, body limits, the execution decision, 405 with `Allow` and the CORS methods all
/// come from the entries (`StorageAPI+Routing.swift`).
public struct RouteTable: Sendable {
  public let entries: [RouteEntry]
  /// Entry indices by exact path.
  private let paths: [String: [Int]]
  /// First path segments (`internal`, `ui`, the empty one of `/`) of the exact paths, as bytes.
  private let pathSegments: [[UInt8]]
  /// Entry indices by `slot(surface, kind)`.
  private let storage: [[Int]]
  /// The flags any entry of a storage slot tests (only those are computed for a request).
  private let storageFlags: [RouteFlags]
  private let xml: [[Int]]
  private let postPolicy: [Int]
  /// Methods some entry takes object data with: any other method gets the document limit
  /// without a lookup (GETs and PATCHes never pay for one; a POST or PUT may be an upload).
  /// A short array, not a `Set`: a few string comparisons cost less than hashing the method.
  let methodsWithObjectData: [String]

  public init(_ entries: [RouteEntry]) {
    self.entries = entries
    var paths: [String: [Int]] = [:]
    var segments: [String] = []
    let slots = Surface.allCases.count * ResourceKind.allCases.count
    var storage = [[Int]](repeating: [], count: slots)
    var storageFlags = [RouteFlags](repeating: [], count: slots)
    var xml = [[Int]](repeating: [], count: XMLLevel.allCases.count)
    var postPolicy: [Int] = []
    var methodsWithObjectData: Set<String> = []
    for (index, entry) in entries.enumerated() {
      if entry.body == .objectData {
        methodsWithObjectData.formUnion(entry.methods.isEmpty ? Self.servedMethods : entry.methods)
      }
      switch entry.pattern {
      case .path(let path):
        paths[path, default: []].append(index)
        let segment = String(Substring(path).firstPathSegment)
        if !segments.contains(segment) { segments.append(segment) }
      case .storage(let surfaces, let kind):
        for surface in surfaces {
          storage[Self.slot(surface, kind)].append(index)
          storageFlags[Self.slot(surface, kind)].formUnion(entry.requires.union(entry.excludes))
        }
      case .xml(let level): xml[level.rawValue].append(index)
      case .postPolicy: postPolicy.append(index)
      }
    }
    self.paths = paths
    self.pathSegments = segments.map { Array($0.utf8) }
    self.storage = storage
    self.storageFlags = storageFlags
    self.xml = xml
    self.postPolicy = postPolicy
    self.methodsWithObjectData = Array(methodsWithObjectData)
  }

  static func slot(_ surface: Surface, _ kind: ResourceKind) -> Int {
    surface.index * ResourceKind.allCases.count + kind.rawValue
  }

  /// The exact-path entries of a path (nil when no entry has it). One comparison per first
  /// segment of the exact paths before any string is made.
  func pathEntries(_ rawPath: Substring) -> [Int]? {
    guard rawPath.firstPathSegmentIsOne(of: pathSegments) else { return nil }
    return paths[String(rawPath)]
  }

  func storageEntries(_ surface: Surface, _ kind: ResourceKind) -> [Int] { storage[Self.slot(surface, kind)] }

  func storageFlagsTested(_ surface: Surface, _ kind: ResourceKind) -> RouteFlags {
    storageFlags[Self.slot(surface, kind)]
  }

  func xmlEntries(_ level: XMLLevel) -> [Int] { xml[level.rawValue] }

  var postPolicyEntries: [Int] { postPolicy }

  /// The first of `candidates` that applies to `flags` and takes `method`.
  func first(_ candidates: [Int], method: String, flags: RouteFlags) -> RouteEntry? {
    firstIndex(candidates, method: method, flags: flags).map { entries[$0] }
  }

  func firstIndex(_ candidates: [Int], method: String, flags: RouteFlags) -> Int? {
    candidates.first { entries[$0].applies(flags) && entries[$0].takes(method) }
  }

  /// The methods `candidates` take for a request with `flags`, in the order `Allow` lists them.
  /// An entry that takes every method contributes all of `HTTPMethod.served`.
  func methods(_ candidates: [Int], flags: RouteFlags) -> [String] {
    var taken: Set<String> = []
    for index in candidates where entries[index].applies(flags) {
      taken.formUnion(entries[index].methods.isEmpty ? Self.servedMethods : entries[index].methods)
    }
    return Self.servedMethods.filter(taken.contains)
  }

  /// Every method the emulator serves anywhere, in the order `Allow` lists them.
  static let servedMethods = ["GET", "HEAD", "PATCH", "POST", "PUT", "DELETE"]
}

extension Surface {
  /// A small dense number for table slots.
  var index: Int {
    switch self {
    case .bare: 0
    case .json: 1
    case .upload: 2
    case .download: 3
    case .firebase: 4
    }
  }
}
