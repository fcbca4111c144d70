import EmulatorApp
import EmulatorStorage
import Foundation
import Testing

@testable import EmulatorAPI
@testable import EmulatorHTTP
@testable import EmulatorRules

/// SECURITY.md's limits table against the code: every row's value must be what the named
/// configuration default or constant is, every name must be known, and every limit known here
/// must have a row. A limit changed on one side only fails this test.
@Suite struct SecurityLimitsTableTests {
  /// The values the code uses, by the name the table's third column gives them.
  static func actualLimits() -> [String: Int] {
    let configuration = EmulatorConfiguration()
    let server = configuration.server
    return [
      "max_request_line_bytes": server.limits.maxRequestLineBytes,
      "max_header_bytes": server.limits.maxHeaderBytes,
      "max_header_count": server.limits.maxHeaderCount,
      "max_upload_bytes": configuration.api.maxUploadBytes,
      "max_metadata_bytes": configuration.api.maxMetadataBytes,
      "spoolThresholdBytes": server.spoolThresholdBytes,
      "JSONValue.maxNesting": JSONValue.maxNesting,
      "ObjectMetadata.maxCustomMetadataBytes": ObjectMetadata.maxCustomMetadataBytes,
      "Naming.validateObjectName": longestValidName(),
      "MultipartRelated.Limits.maxParts": MultipartRelated.Limits().maxParts,
      "MultipartRelated.Limits.maxPartHeaderBytes": MultipartRelated.Limits().maxPartHeaderBytes,
      "MultipartRelated.Limits.maxBoundaryBytes": MultipartRelated.Limits.maxBoundaryBytes,
      "StorageAPI.maxComposeSources": StorageAPI.maxComposeSources,
      "MultipartUploads.maxParts": MultipartUploads.maxParts,
      "MultipartUploads.defaultMaxUploads": MultipartUploads.defaultMaxUploads,
      "StorageAPI.maxBatchParts": StorageAPI.maxBatchParts,
      "StorageAPI.maxBatchPartHeadBytes": StorageAPI.maxBatchPartHeadBytes,
      "StorageAPI.maxBatchPartHeaders": StorageAPI.maxBatchPartHeaders,
      "AccessControl.maxEntries": AccessControl.maxEntries,
      "AccessControl.maxEntityBytes": AccessControl.maxEntityBytes,
      "IAMPolicy.maxMembers": IAMPolicy.maxMembers,
      "StorageAPI.maxTestedPermissions": StorageAPI.maxTestedPermissions,
      "StorageAPI.maxNotificationConfigs": StorageAPI.maxNotificationConfigs,
      "HMACKeyRing.maxKeys": HMACKeyRing.maxKeys,
      "HMACKeyRing.maxKeysPerAccount": HMACKeyRing.maxKeysPerAccount,
      "Glob.maxPatternBytes": Glob.maxPatternBytes,
      "Glob.maxNesting": Glob.maxNesting,
      "max_upload_sessions": configuration.uploadSessions.maxOpen,
      "upload_session_ttl_seconds": configuration.uploadSessions.ttlSeconds,
      "RequestOptions.maxResultsCap": RequestOptions.maxResultsCap,
      "GzipInflater.maxInputPerCall": GzipInflater.maxInputPerCall,
      "GzipInflater.maxMembersPerCall": GzipInflater.maxMembersPerCall,
      "GzipInflater.outputBytes": GzipInflater.outputBytes,
      "RenderCache.capacity": RenderCache().capacity,
      "Ruleset.maxSourceBytes": Ruleset.maxSourceBytes,
      "Ruleset.maxTokens": Ruleset.maxTokens,
      "RulesParser.maxDepth": RulesParser.maxDepth,
      "RulesEvaluator.maxSteps": RulesEvaluator.maxSteps,
      "RulesEvaluator.maxCallDepth": RulesEvaluator.maxCallDepth,
      "RulesEvaluator.maxValueSize": RulesEvaluator.maxValueSize,
      "RulesRegex.maxPatternLength": RulesRegex.maxPatternLength,
      "max_connections": server.maxConnections,
      "header_timeout_seconds": Int(server.timeouts.headerSeconds),
      "body_stall_timeout_seconds": Int(server.timeouts.bodyStallSeconds),
      "write_stall_timeout_seconds": Int(server.timeouts.writeStallSeconds),
      "idle_timeout_seconds": Int(server.timeouts.idleSeconds),
    ]
  }

  /// The object-name limit is a rule, not a constant: found by asking the rule.
  static func longestValidName() -> Int {
    var length = 1
    while length < 100_000, (try? Naming.validateObjectName(String(repeating: "a", count: length + 1))) != nil {
      length += 1
    }
    return length
  }

  /// (name, value) of every row of the "## Limits" table.
  static func documentedLimits() throws -> [(name: String, value: Int, line: String)] {
    let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
      .deletingLastPathComponent()
    let text = try String(contentsOf: root.appendingPathComponent("SECURITY.md"), encoding: .utf8)
    let lines = text.components(separatedBy: "\n")
    guard let start = lines.firstIndex(of: "## Limits") else { return [] }
    var rows: [(String, Int, String)] = []
    for line in lines[(start + 1)...] {
      if line.hasPrefix("## ") { break }
      guard line.hasPrefix("| "), !line.hasPrefix("| limit |"), !line.hasPrefix("|---") else { continue }
      let columns = line.split(separator: "|", omittingEmptySubsequences: false).map {
        $0.trimmingCharacters(in: .whitespaces)
      }
      guard columns.count >= 5 else { continue }
      let digits = columns[2].prefix { $0.isNumber }
      let names = columns[3].split(separator: "`", omittingEmptySubsequences: false)
      guard let value = Int(digits), names.count >= 3 else {
        rows.append(("", -1, line))
        continue
      }
      rows.append((String(names[1]), value, line))
    }
    return rows
  }

  @Test func everyDocumentedLimitIsTheOneTheCodeUses() throws {
    let actual = Self.actualLimits()
    let documented = try Self.documentedLimits()
    #expect(documented.count >= actual.count)
    for row in documented {
      #expect(row.value >= 0, "a row without a value or a `name`: \(row.line)")
      guard let value = actual[row.name] else {
        Issue.record("SECURITY.md names a limit the test does not know: \(row.line)")
        continue
      }
      #expect(value == row.value, "SECURITY.md says \(row.value) for \(row.name), the code uses \(value)")
    }
  }

  @Test func everyLimitTheCodeUsesIsDocumented() throws {
    let documentedNames = Set(try Self.documentedLimits().map(\.name))
    for name in Self.actualLimits().keys.sorted() {
      #expect(documentedNames.contains(name), "SECURITY.md's limits table has no row for \(name)")
    }
  }

  @Test func theConfigFileListsTheSameDefaults() throws {
    let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
      .deletingLastPathComponent()
    let text = try String(contentsOf: root.appendingPathComponent("config/storage-emulator.toml"), encoding: .utf8)
    var fromFile = EmulatorConfiguration()
    try fromFile.apply(configFile: text)
    var defaults = EmulatorConfiguration()
    defaults.server.eventLoops = fromFile.server.eventLoops  // the file may pin what defaults to the core count
    #expect(fromFile.server.limits == defaults.server.limits)
    #expect(fromFile.api == defaults.api)
    #expect(fromFile.server.timeouts == defaults.server.timeouts)
    #expect(fromFile.server.maxConnections == defaults.server.maxConnections)
  }
}
