import Foundation
import Testing

@testable import EmulatorRules

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Hostile rules and hostile request values: everything bounded, nothing crashes.
@Suite struct RulesAttackTests {
  /// The CPU time `body` takes on this thread, in seconds: what the matcher costs, not how busy the
  /// machine is (wall-clock time was 4-5 s with the load average at 24, under AddressSanitizer).
  func elapsed(_ body: () -> Void) -> Double {
    func now() -> Double {
      var time = timespec()
      clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
      return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }
    let start = now()
    body()
    return now() - start
  }

  @Test func catastrophicBacktrackingPatternRunsInLinearTime() throws {
    let regex = try RulesRegex("(a+)+$")
    let text = String(repeating: "a", count: 20_000) + "b"
    var matched = true
    let seconds = elapsed { matched = regex.wholeMatch(text) }
    #expect(!matched)
    #expect(seconds < 2, "took \(seconds)s")
  }

  @Test func nestedQuantifiersOnLongInputStayFast() throws {
    let regex = try RulesRegex("(x*)*(x+)+y")
    let text = String(repeating: "x", count: 20_000)
    let seconds = elapsed { _ = regex.split(text) }
    #expect(seconds < 2, "took \(seconds)s")
  }

  @Test func regexProgramSizeIsBounded() {
    #expect(throws: RulesFailure.self) { try RulesRegex("((a{1000}){1000}){1000}") }
    #expect(throws: RulesFailure.self) { try RulesRegex(String(repeating: "(", count: 500)) }
  }

  @Test func deeplyNestedRulesAreRejectedNotRecursedInto() {
    let nested = String(repeating: "match /a {", count: 10_000) + String(repeating: "}", count: 10_000)
    #expect(throws: RulesSyntaxError.self) { try Ruleset(source: "service firebase.storage {\(nested)}") }
    let expression = String(repeating: "!", count: 100_000) + "true"
    #expect(throws: RulesSyntaxError.self) {
      try Ruleset(source: "service firebase.storage { match /b { allow read: if \(expression); } }")
    }
  }

  @Test func oversizedSourceIsRejected() {
    let source = "service firebase.storage {}" + String(repeating: " ", count: Ruleset.maxSourceBytes)
    #expect(throws: RulesSyntaxError.self) { try Ruleset(source: source) }
  }

  @Test func hugeRequestValuesAreBoundedByTheSizeLimit() throws {
    let ruleset = try Ruleset(
      source: """
        rules_version = '2';
        service firebase.storage { match /b/{b}/o/{p=**} {
          function grow(s, n) { return n == 0 ? s.size() > 0 : grow(s + s, n - 1); }
          allow read: if grow(resource.metadata.big, 19);
        } }
        """)
    let request = RulesRequest(
      method: .get, bucket: "b", pathSegments: ["x"],
      resource: .map(["metadata": .map(["big": .string(String(repeating: "z", count: 100_000))])]),
      time: .timestamp(milliseconds: 0))
    var reasons: [String] = []
    #expect(!ruleset.evaluate(request) { reasons.append($0) })
    #expect(reasons.contains { $0.contains("larger than 1 MiB") }, "\(reasons)")
  }

  @Test func errorsAreReportedWithTheirLine() throws {
    let ruleset = try Ruleset(
      source:
        "rules_version = '2';\nservice firebase.storage { match /b/{b}/o/{p=**} {\n  allow read: if 1 / 0 == 1;\n} }")
    var reasons: [String] = []
    #expect(
      !ruleset.evaluate(RulesRequest(method: .get, bucket: "b", pathSegments: ["x"], time: .null)) {
        reasons.append($0)
      })
    #expect(reasons == ["line 3: division by zero (3:20): false"])
  }

  @Test func nestingAcrossFunctionCallsIsBounded() throws {
    // Unary operators are nodes (parentheses are not): 60 levels of them, and 10 more per call.
    let deep = String(repeating: "!", count: 60) + "(n < 0)"
    let ruleset = try Ruleset(
      source: """
        rules_version = '2';
        service firebase.storage {
          function f(n) { return n <= 0 ? \(deep) : !!!!!!!!!!f(n - 1) || \(deep); }
          match /b/{bucket}/o/{path=**} { allow read: if f(19); }
        }
        """)
    var reasons: [String] = []
    #expect(!ruleset.evaluate(RulesRequest(method: .get, bucket: "b", pathSegments: ["x"], time: .null)) {
      reasons.append($0)
    })
    #expect(reasons.contains { $0.contains("expressions nest deeper than 100") }, "\(reasons)")
  }

  /// The server evaluates rules on threads with 1 MiB stacks (event loops) or more: the deepest
  /// evaluation the limits allow must fit in half of that, even in a debug build.
  @Test func deepestEvaluationFitsInA512KiBStack() throws {
    let deep = String(repeating: "!", count: 60) + "(n < 0)"
    let ruleset = try Ruleset(
      source: """
        rules_version = '2';
        service firebase.storage {
          function f(n) { return n <= 0 ? \(deep) : !!!!!!!!!!f(n - 1) || \(deep); }
          match /b/{bucket}/o/{path=**} { allow read: if f(19); }
        }
        """)
    let request = RulesRequest(method: .get, bucket: "b", pathSegments: ["x"], time: .null)
    let finished = DispatchSemaphore(value: 0)
    let thread = Thread {
      _ = ruleset.evaluate(request)
      let parsed = try? Ruleset(
        source: "service firebase.storage { match /b { allow read: if \(String(repeating: "!", count: 60))true; } }")
      _ = parsed
      finished.signal()
    }
    thread.stackSize = 512 * 1024
    thread.start()
    #expect(finished.wait(timeout: .now() + 30) == .success)
  }
}

