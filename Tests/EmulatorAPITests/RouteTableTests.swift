import EmulatorHTTP
import Testing

@testable import EmulatorAPI

/// The route table itself: every entry reachable, no two entries ambiguous, 405 with the table's
/// `Allow`, the body limit of each entry, and CORS methods equal to what is served.
@Suite struct RouteTableTests {
  let h: APIHarness
  let table: RouteTable

  init() throws {
    var limits = APILimits()
    limits.maxMetadataBytes = 1000
    limits.maxUploadBytes = 50_000
    h = try APIHarness(limits: limits)
    table = FrontDoor(api: h.api, routes: [
      RouteEntry("GET", "/internal/ping", .memory) { _ in HTTPResponse(status: 200) },
      RouteEntry("POST", "/internal/echo", body: .document) { request in HTTPResponse.json(request.body) },
      RouteEntry("GET", "/ui/api/wait", deferred: { _, responder in responder.reply(HTTPResponse(status: 200)) }),
    ]).table
  }

  static let prefixes: [Surface: String] = [
    .bare: "/b", .json: "/storage/v1/b", .upload: "/upload/storage/v1/b", .download: "/download/storage/v1/b",
    .firebase: "/v0/b",
  ]

  /// Requests an entry takes: its path on each of its surfaces, with the query and headers that
  /// set its required flags.
  static func samples(_ entry: RouteEntry) -> [HTTPRequestHead] {
    var query: [String] = []
    var headers: [(String, String)] = [("host", "localhost:9199")]
    var suffix = ""
    let required = entry.requires
    if required.contains(.session) { query.append("upload_id=u") }
    if required.contains(.uploadType) { query.append("uploadType=media") }
    if required.contains(.media) { query.append("alt=media") }
    if required.contains(.tokenCommand) { query.append("create_token=true") }
    if required.contains(.action) { suffix = "/copyTo/b/bkt/o/dst" }
    if required.contains(.xmlMultipart) { query.append("uploadId=u") }
    if required.contains(.xmlCopy) { headers.append(("x-goog-copy-source", "/bkt/src")) }
    if required.contains(.xmlResumableStart) { headers.append(("x-goog-resumable", "start")) }
    var paths: [String] = []
    switch entry.pattern {
    case .path(let path): paths = [path]
    case .postPolicy: paths = ["/bkt"]
    case .xml(let level): paths = [level == .service ? "/" : level == .bucket ? "/bkt" : "/bkt/obj"]
    case .storage(let surfaces, let kind):
      let tail =
        switch kind {
        case .buckets: ""
        case .bucket: "/bkt"
        case .storageLayout: "/bkt/storageLayout"
        case .managedFolders: "/bkt/managedFolders"
        case .objects: "/bkt/o"
        case .object: "/bkt/o/obj" + suffix
        case .bucketACLs: "/bkt/acl"
        case .bucketACL: "/bkt/acl/allUsers"
        case .defaultObjectACLs: "/bkt/defaultObjectAcl"
        case .defaultObjectACL: "/bkt/defaultObjectAcl/allUsers"
        case .objectACLs: "/bkt/o/obj/acl"
        case .objectACL: "/bkt/o/obj/acl/allUsers"
        case .iamPolicy: "/bkt/iam"
        case .iamTestPermissions: "/bkt/iam/testPermissions"
        case .notificationConfigs: "/bkt/notificationConfigs"
        case .notificationConfig: "/bkt/notificationConfigs/1"
        case .serviceAccount: "/serviceAccount"
        case .hmacKeys: "/hmacKeys"
        case .hmacKey: "/hmacKeys/GOOG1"
        }
      // The project resources live under /storage/v1/projects/{p}, not under a bucket.
      let project = [ResourceKind.serviceAccount, .hmacKeys, .hmacKey].contains(kind)
      for surface in surfaces {
        var extra: [String] = []
        if required.contains(.resumableStart) {
          if surface == .firebase {
            headers.append(("x-goog-upload-command", "start"))
          } else {
            extra = ["uploadType=resumable"]
          }
        }
        let all = (query + extra).filter { !(extra.isEmpty == false && $0 == "uploadType=media") }
        let base = project ? "/storage/v1/projects/p" : prefixes[surface]!
        paths.append(base + tail + (all.isEmpty ? "" : "?" + all.joined(separator: "&")))
      }
      query = []
    }
    return paths.map { target in
      let full = query.isEmpty ? target : target + "?" + query.joined(separator: "&")
      var head = HTTPRequestHead(method: "GET", target: full)
      for (name, value) in headers { head.headers.add(name, value) }
      return head
    }
  }

  static func methods(_ entry: RouteEntry) -> [String] {
    entry.methods.isEmpty ? RouteTable.servedMethods : entry.methods
  }

  func head(_ head: HTTPRequestHead, method: String) -> HTTPRequestHead {
    var copy = head
    copy.method = method
    return copy
  }

  @Test func everyEntryIsReachable() {
    #expect(table.entries.count > 40)
    for (index, entry) in table.entries.enumerated() {
      for sample in Self.samples(entry) {
        for method in Self.methods(entry) {
          let found = h.api.entryIndex(for: head(sample, method: method), in: table)
          #expect(found == index, "\(method) \(sample.target): entry \(String(describing: found)), wanted \(index)")
        }
      }
    }
  }

  /// Two entries of one path and method that can both apply: the first must be strictly more
  /// specific (it requires more), or the second would be dead or the order would decide silently.
  @Test func noTwoEntriesAreAmbiguous() {
    func slots(_ pattern: RoutePattern) -> [String] {
      switch pattern {
      case .path(let path): ["path \(path)"]
      case .postPolicy: ["postPolicy"]
      case .xml(let level): ["xml \(level)"]
      case .storage(let surfaces, let kind): surfaces.map { "\($0) \(kind)" }
      }
    }
    let entries = table.entries
    for i in entries.indices {
      for j in entries.indices where j > i {
        let (a, b) = (entries[i], entries[j])
        guard !Set(slots(a.pattern)).isDisjoint(with: slots(b.pattern)),
          !Set(Self.methods(a)).isDisjoint(with: Self.methods(b)),
          a.requires.isDisjoint(with: b.excludes), b.requires.isDisjoint(with: a.excludes)
        else { continue }
        #expect(
          a.requires.isStrictSuperset(of: b.requires),
          "entries \(i) and \(j) (\(a.methods) \(a.pattern)) can both take one request")
      }
    }
  }

  @Test func bodyLimitIsTheEntrys() {
    for entry in table.entries {
      for sample in Self.samples(entry) {
        for method in Self.methods(entry) {
          let expected = entry.body == .objectData ? 50_000 : 1000
          #expect(
            h.api.bodyLimit(for: head(sample, method: method), in: table) == expected, "\(method) \(sample.target)")
        }
      }
    }
  }

  /// Every path of the table: a method it does not list is a 405 whose `Allow` is the table's
  /// list, and a method it lists is served (whatever else the answer is), so the CORS methods
  /// derived from the table are exactly what is served.
  @Test func methodsNotInTheTableAre405WithItsAllowAndTheOthersAreServed() {
    let door = FrontDoor(api: h.api, routes: [])
    for entry in StorageAPI.routes {
      for sample in Self.samples(entry) {
        let allowed = h.api.allowedMethods(for: head(sample, method: "OPTIONS"))
        #expect(allowed == door.allowedMethods(for: head(sample, method: "OPTIONS")))
        for method in RouteTable.servedMethods {
          var request = head(sample, method: method)
          request.headers.set("content-type", "application/json")
          let reply = Reply(door.answer(HTTPRequest(head: request, body: Array("{}".utf8))))
          if allowed?.contains(method) == true {
            #expect(reply.status != 405, "\(method) \(sample.target) is in the table but answered 405")
          } else {
            #expect(reply.status == 405, "\(method) \(sample.target): \(reply.status)")
            #expect(reply.header("allow") == allowed?.joined(separator: ", "), "\(method) \(sample.target)")
          }
        }
      }
    }
  }

  @Test func ownRoutesRunAsTheirEntrySays() throws {
    let door = FrontDoor(api: h.api, routes: [
      RouteEntry("GET", "/internal/ping", .memory) { _ in HTTPResponse(status: 200) },
      RouteEntry("GET", "/internal/slow") { _ in HTTPResponse(status: 200) },
      RouteEntry("GET", "/ui/api/wait", deferred: { _, responder in responder.reply(HTTPResponse(status: 202)) }),
    ])
    guard case .respond(let ping) = door.start(HTTPRequest(head: HTTPRequestHead(method: "GET", target: "/internal/ping")))
    else { Issue.record("an in-memory route is answered at once"); return }
    #expect(ping.status == 200)
    guard case .blocking = door.start(HTTPRequest(head: HTTPRequestHead(method: "GET", target: "/internal/slow")))
    else { Issue.record("a blocking route goes to a lane"); return }
    guard case .deferred(let wait) = door.start(HTTPRequest(head: HTTPRequestHead(method: "GET", target: "/ui/api/wait")))
    else { Issue.record("a deferred route is started"); return }
    #expect(StorageAPI.waitForReply { wait($0) }.status == 202)
  }

  /// The GET hot path: object metadata on the JSON surfaces is answered on the connection's
  /// thread, and a Firebase read (which may write a token) and a download go to a lane.
  @Test func executionFollowsTheEntry() {
    _ = h.call("POST", "/upload/storage/v1/b/bkt/o?uploadType=media&name=a", "x")
    func kind(_ target: String) -> String {
      switch h.api.start(HTTPRequest(head: HTTPRequestHead(method: "GET", target: target))) {
      case .respond: "memory"
      case .blocking: "blocking"
      case .deferred: "deferred"
      }
    }
    #expect(kind("/storage/v1/b/bkt/o/a") == "memory")
    #expect(kind("/b/bkt/o") == "memory")
    #expect(kind("/storage/v1/b/bkt/o/a?alt=media") == "blocking")
    #expect(kind("/v0/b/bkt/o/a") == "blocking")
    let patch = HTTPRequest(head: HTTPRequestHead(method: "PATCH", target: "/storage/v1/b/bkt/o/a"), body: Array("{}".utf8))
    guard case .deferred = h.api.start(patch) else { Issue.record("PATCH is a deferred update"); return }
  }
}
