// Times Ruleset.evaluate for a signed-in GET under scripts/bench.d/typical.rules, in-process
// (built by scripts/bench-rules with swiftc -O together with the EmulatorRules sources). Thread
// CPU time, so other processes on the machine do not count. Prints microseconds per evaluation.
import Foundation

@main
struct RulesEvaluationBench {
  static func cpuSeconds() -> Double {
    var spec = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &spec)
    return Double(spec.tv_sec) + Double(spec.tv_nsec) / 1e9
  }

  static func main() throws {
    let source = try String(contentsOfFile: CommandLine.arguments[1], encoding: .utf8)
    let ruleset = try Ruleset(source: source, file: "typical.rules")
    let auth = RulesValue.map([
      "uid": .string("alice"),
      "token": .map([
        "user_id": .string("alice"), "email": .string("alice@example.com"), "email_verified": .bool(true),
        "firebase": .map(["sign_in_provider": .string("password")]),
      ]),
    ])
    let iterations = 200_000
    var allowed = 0
    let start = cpuSeconds()
    for index in 0..<iterations {
      // What the API builds per request: the object as rules see it, then the request.
      let resource = RulesValue.map([
        "name": .string("users/alice/photo.jpg"), "bucket": .string("bench"), "size": .int(17),
        "metageneration": .int(2), "generation": .int(1_714_564_800_000_000),
        "timeCreated": .timestamp(milliseconds: 1_714_564_800_000), "updated": .timestamp(milliseconds: 1_714_564_800_000),
        "metadata": .map([:]), "contentType": .string("image/jpeg"), "etag": .string("CAE="),
        "crc32c": .string("AAAAAA=="), "md5Hash": .string("XrY7u+Ae7tCTyyK7j1rNww=="),
      ])
      let request = RulesRequest(
        method: .get, bucket: "bench", pathSegments: ["users", "alice", "photo.jpg"], auth: auth, resource: resource,
        time: .timestamp(milliseconds: 1_714_564_800_000 + Int64(index)))
      if ruleset.evaluate(request) { allowed += 1 }
    }
    let elapsed = cpuSeconds() - start
    precondition(allowed == iterations, "the typical rules must allow alice's GET")
    print(String(format: "%.2f", elapsed / Double(iterations) * 1e6))
  }
}
