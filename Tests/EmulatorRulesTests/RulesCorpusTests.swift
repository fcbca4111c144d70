import EmulatorStorage
import Foundation
import Testing

@testable import EmulatorRules

/// One case of `Fixtures/corpus.txt`: rules (or a condition put into a template), a request, and
/// the expected decision (or syntax error).
struct CorpusCase: CustomStringConvertible, Sendable {
  var name = ""
  var line = 0
  var method = RulesMethod.get
  var path = "dir/file.txt"
  var delimiter: String?
  var version = 2
  var auth: String?
  var resource: String?
  var requestResource: String?
  var condition: String?
  var rules: String?
  var expect = ""

  var description: String { "corpus.txt:\(line) \(name)" }

  var source: String {
    if let rules { return rules }
    return """
      rules_version = '\(version)';
      service firebase.storage {
        match /b/{bucket}/o {
          match /{allPaths=**} {
            allow \(method.rawValue): if \(condition ?? "false");
          }
        }
      }
      """
  }

  /// The blocks of the corpus file: `=== name`, then `key: value` lines; `rules:` takes the lines
  /// up to the next key it knows.
  static func load() throws -> [CorpusCase] {
    let url = try #require(Bundle.module.url(forResource: "Fixtures/corpus", withExtension: "txt"))
    let lines = try String(contentsOf: url, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false)
    var cases: [CorpusCase] = []
    var current: CorpusCase?
    var inRules = false
    let keys = [
      "op:", "path:", "delimiter:", "version:", "auth:", "resource:", "request.resource:", "cond:", "expect:",
    ]
    for (offset, rawLine) in lines.enumerated() {
      let line = String(rawLine)
      if line.hasPrefix("=== ") {
        if let finished = current { cases.append(finished) }
        current = CorpusCase(name: String(line.dropFirst(4)), line: offset + 1)
        inRules = false
        continue
      }
      guard current != nil else { continue }
      if inRules && !keys.contains(where: { line.hasPrefix($0) }) {
        current!.rules! += line + "\n"
        continue
      }
      inRules = false
      if line.hasPrefix("#") || line.trimmingCharacters(in: .whitespaces).isEmpty { continue }
      guard let colon = line.firstIndex(of: ":") else { continue }
      let key = String(line[..<colon])
      let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
      switch key {
      case "op": current!.method = RulesMethod(rawValue: value)!
      case "path": current!.path = value
      case "delimiter": current!.delimiter = value
      case "version": current!.version = Int(value)!
      case "auth": current!.auth = value
      case "resource": current!.resource = value
      case "request.resource": current!.requestResource = value
      case "cond": current!.condition = value
      case "expect": current!.expect = value
      case "rules":
        current!.rules = ""
        inRules = true
      default: Issue.record("corpus.txt:\(offset + 1): unknown key '\(key)'")
      }
    }
    if let finished = current { cases.append(finished) }
    return cases
  }

  /// JSON → rules value; strings `@ts:<ms>` are timestamps, numbers without `.`/`e` are ints.
  static func value(_ json: String?) throws -> RulesValue {
    guard let json else { return .null }
    return convert(try JSONValue.parse(Array(json.utf8)))
  }

  static func convert(_ json: JSONValue) -> RulesValue {
    switch json {
    case .null: return .null
    case .bool(let flag): return .bool(flag)
    case .number(let text):
      if let value = Int64(text) { return .int(value) }
      return .float(Double(text) ?? .nan)
    case .string(let text):
      if text.hasPrefix("@ts:"), let milliseconds = Int64(text.dropFirst(4)) {
        return .timestamp(milliseconds: milliseconds)
      }
      return .string(text)
    case .array(let values): return .list(values.map(convert))
    case .object(let members):
      var map: [String: RulesValue] = [:]
      for (key, member) in members { map[key] = convert(member) }
      return .map(map)
    }
  }

  /// 2024-05-01T12:00:00Z, a Wednesday.
  static let now = RulesValue.timestamp(milliseconds: 1_714_564_800_000)

  func request() throws -> RulesRequest {
    var segments = path.isEmpty ? [] : path.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
    if method == .list, segments.last == "" { segments.removeLast() }
    return RulesRequest(
      method: method, bucket: "demo.appspot.com", pathSegments: segments, delimiter: delimiter,
      auth: try Self.value(auth), resource: try Self.value(resource),
      requestResource: try Self.value(requestResource), time: Self.now)
  }
}

@Suite struct RulesCorpusTests {
  static let cases: [CorpusCase] = (try? CorpusCase.load()) ?? []

  @Test func theCorpusHasAtLeast200Cases() {
    #expect(Self.cases.count >= 200, "\(Self.cases.count) cases")
  }

  @Test(arguments: cases) func corpusCase(_ item: CorpusCase) throws {
    let ruleset: Ruleset
    do {
      ruleset = try Ruleset(source: item.source, file: "storage.rules")
    } catch {
      guard item.expect.hasPrefix("error ") else {
        Issue.record("\(item): unexpected syntax error \(error)")
        return
      }
      let expected = String(item.expect.dropFirst(6))
      #expect(error.description.contains(expected), "\(item): got \(error.description)")
      return
    }
    guard item.expect == "allow" || item.expect == "deny" else {
      Issue.record("\(item): expected '\(item.expect)' but the rules parsed")
      return
    }
    var reasons: [String] = []
    let allowed = ruleset.evaluate(try item.request()) { reasons.append($0) }
    #expect(allowed == (item.expect == "allow"), "\(item): \(reasons)")
  }
}
