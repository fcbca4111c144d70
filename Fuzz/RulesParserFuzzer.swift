// libFuzzer entry point for the security rules parser and evaluator (built by
// scripts/fuzz-rules together with the EmulatorRules sources, with -sanitize=fuzzer,address).
//
// Oracle: no input may crash, trap or run past libFuzzer's per-input timeout, whether it is a
// rules file (parsed, then evaluated for each method against a fixed request) or a regular
// expression (compiled and matched). Parse errors must name a line and column inside the input.

/// Made per input: a global holding indirect-enum boxes reads as a leak to LeakSanitizer.
private func makeRequest() -> RulesRequest {
  RulesRequest(
    method: .get, bucket: "demo.appspot.com", pathSegments: ["users", "alice", "a.txt"],
    auth: .map(["uid": .string("alice"), "token": .map(["email": .string("alice@example.com")])]),
    resource: .map([
      "name": .string("users/alice/a.txt"), "size": .int(10), "contentType": .string("text/plain"),
      "metadata": .map(["owner": .string("alice")]), "timeCreated": .timestamp(milliseconds: 1_700_000_000_000),
    ]),
    requestResource: .map(["size": .int(20), "metadata": .map([:])]),
    time: .timestamp(milliseconds: 1_714_564_800_000))
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
  let bytes = UnsafeBufferPointer(start: data, count: size)
  let text = String(decoding: bytes, as: UTF8.self)
  // Half the inputs as regular expressions matched against a fixed text.
  if let first = bytes.first, first & 1 == 1 {
    if let regex = try? RulesRegex(String(text.dropFirst())) {
      _ = regex.wholeMatch("users/alice/a.txt aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa")
      _ = regex.split("a,b;c aaaa")
      _ = regex.replace("abcabc", with: "$0-")
    }
    return 0
  }
  do {
    let ruleset = try Ruleset(source: text, file: "fuzz.rules")
    for method in RulesMethod.allCases {
      var variant = makeRequest()
      variant.method = method
      variant.delimiter = method == .list ? "/" : nil
      _ = ruleset.evaluate(variant)
    }
  } catch {
    // Lines counted on bytes: as Characters, "\r\n" is one grapheme and never equals "\n".
    let lines = bytes.reduce(1) { $0 + ($1 == UInt8(ascii: "\n") ? 1 : 0) }
    if error.location.line < 1 || error.location.line > lines + 1 || error.location.column < 1 {
      fatalError("error outside the input: \(error)")
    }
  }
  return 0
}
