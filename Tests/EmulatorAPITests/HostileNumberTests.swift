import EmulatorHTTP
import EmulatorStorage
import Foundation
import Testing

@testable import EmulatorAPI

/// Integers a client sends, at and past the edges of Int64, through the routes (no sockets).
/// Each test is named after the attack; the first one killed the process before (Swift trapped
/// on `last - first + 1`).
@Suite struct HostileNumberTests {
  let h: APIHarness
  init() throws { h = try APIHarness() }

  private func session(_ harness: APIHarness? = nil) -> String {
    let harness = harness ?? h
    let start = harness.call("POST", "/upload/storage/v1/b/bkt/o?uploadType=resumable&name=n", "{}")
    let location = start.header("location") ?? ""
    return String(location[(location.range(of: "localhost:9199")?.upperBound ?? location.startIndex)...])
  }

  @Test func contentRangeEndingAtInt64MaxIsA400NotACrash() {
    let url = session()
    for header in [
      "bytes 0-9223372036854775807/*", "bytes 1-9223372036854775807/*",
      "bytes 9223372036854775807-9223372036854775807/*",
      "bytes 0-99999999999999999999/*", "bytes 0-0/99999999999999999999", "bytes */99999999999999999999",
      "bytes 0-9223372036854775806/*",
    ] {
      let reply = h.call("PUT", url, "x", headers: [("content-range", header)])
      #expect(reply.status == 400, "\(header): \(reply.text)")
      #expect(reply.json["error"]?["message"]?.stringValue?.contains("Content-Range") == true, "\(header)")
    }
    // The session is unharmed: the real chunk still goes in.
    #expect(h.call("PUT", url, "x", headers: [("content-range", "bytes 0-0/1")]).status == 200)
  }

  @Test func contentRangeWithSignsOrJunkIsA400() {
    let url = session()
    for header in [
      "bytes -1-0/1", "bytes +0-0/1", "bytes 0-+0/1", "bytes 0--1/1", "bytes 0-0/-1", "bytes 0 - 0/1", "bytes 0-0/1x",
    ] {
      #expect(h.call("PUT", url, "x", headers: [("content-range", header)]).status == 400, "\(header)")
    }
  }

  @Test func contentRangePastTheUploadLimitIs413() throws {
    var limits = APILimits()
    limits.maxUploadBytes = 100
    let small = try APIHarness(limits: limits)
    let url = session(small)
    #expect(small.call("PUT", url, "x", headers: [("content-range", "bytes 0-0/101")]).status == 413)
    #expect(small.call("PUT", url, "x", headers: [("content-range", "bytes 0-0/9223372036854775807")]).status == 413)
    #expect(small.call("PUT", url, "x", headers: [("content-range", "bytes 0-0/100")]).status == 308)
    // A chunk that would grow the session past the limit (offset within what was received).
    #expect(small.call("PUT", url, "ab", headers: [("content-range", "bytes 99-100/*")]).status == 413)
  }

  @Test func uploadLengthHeadersPastInt64AreA400AndPastTheLimitA413() throws {
    var limits = APILimits()
    limits.maxUploadBytes = 100
    let small = try APIHarness(limits: limits)
    for (value, status) in [("99999999999999999999", 400), ("101", 413), ("-1", 400), ("+5", 400), ("5", 200)] {
      let reply = small.call(
        "POST", "/upload/storage/v1/b/bkt/o?uploadType=resumable&name=n", "{}",
        headers: [("x-upload-content-length", value)])
      #expect(reply.status == status, "\(value): \(reply.text)")
    }
  }

  @Test func firebaseUploadOffsetPastInt64IsA400NotATrap() throws {
    var limits = APILimits()
    limits.maxUploadBytes = 100
    let small = try APIHarness(limits: limits)
    let start = small.call(
      "POST", "/v0/b/bkt/o?name=f", "{}",
      headers: [("x-goog-upload-protocol", "resumable"), ("x-goog-upload-command", "start")])
    let url = start.header("x-goog-upload-url") ?? ""
    let target = String(url[(url.range(of: "localhost:9199")?.upperBound ?? url.startIndex)...])
    func upload(_ offset: String, _ body: String = "x") -> Reply {
      small.call(
        "PUT", target, body,
        headers: [
          ("x-goog-upload-protocol", "resumable"), ("x-goog-upload-command", "upload"),
          ("x-goog-upload-offset", offset),
        ])
    }
    #expect(upload("99999999999999999999").status == 400)
    #expect(upload("9223372036854775807").status == 413)
    #expect(upload("-0x1").status == 400)
    #expect(upload("0", String(repeating: "y", count: 101)).status == 413)
    let ok = upload("0")
    #expect(ok.status == 200)
    #expect(ok.header("x-goog-upload-size-received") == "1")
  }

  @Test func rangeHeaderNumbersPastInt64SaturateInsteadOfTrapping() {
    h.call("POST", "/upload/storage/v1/b/bkt/o?uploadType=media&name=r", "0123456789")
    func get(_ range: String) -> Reply { h.call("GET", "/storage/v1/b/bkt/o/r?alt=media", headers: [("range", range)]) }
    let toTheEnd = get("bytes=2-99999999999999999999")
    #expect(toTheEnd.status == 206)
    #expect(toTheEnd.text == "23456789")
    #expect(get("bytes=99999999999999999999-").status == 416)
    #expect(get("bytes=9223372036854775807-").status == 416)
    let suffix = get("bytes=-99999999999999999999")
    #expect(suffix.status == 206)
    #expect(suffix.text == "0123456789")
    #expect(get("bytes=--5").status == 200)  // not a range: ignored
  }

  @Test func preconditionsPastInt64AreA400() {
    h.call("POST", "/upload/storage/v1/b/bkt/o?uploadType=media&name=p", "x")
    for parameter in [
      "ifGenerationMatch", "ifGenerationNotMatch", "ifMetagenerationMatch", "ifMetagenerationNotMatch", "generation",
    ] {
      for value in ["99999999999999999999", "-99999999999999999999", "+1", "1e3", ""] {
        let reply = h.call("GET", "/storage/v1/b/bkt/o/p?\(parameter)=\(value)")
        #expect(reply.status == 400, "\(parameter)=\(value)")
      }
    }
    #expect(h.call("GET", "/storage/v1/b/bkt/o/p?ifGenerationMatch=-9223372036854775808").status == 412)
  }

  @Test func maxResultsPastInt64IsA400AndLargeValuesAreCapped() {
    h.call("POST", "/upload/storage/v1/b/bkt/o?uploadType=media&name=m", "x")
    #expect(h.call("GET", "/storage/v1/b/bkt/o?maxResults=99999999999999999999").status == 400)
    #expect(h.call("GET", "/storage/v1/b/bkt/o?maxResults=0").status == 400)
    #expect(h.call("GET", "/storage/v1/b/bkt/o?maxResults=9223372036854775807").status == 200)
  }

  @Test func composeGenerationsPastInt64AreA400() {
    h.call("POST", "/upload/storage/v1/b/bkt/o?uploadType=media&name=c", "x")
    for generation in ["\"99999999999999999999\"", "99999999999999999999", "1.5", "\"+1\""] {
      let body = #"{"sourceObjects":[{"name":"c","generation":\#(generation)}]}"#
      let reply = h.call("POST", "/storage/v1/b/bkt/o/out/compose", body)
      #expect(reply.status == 400, "\(generation): \(reply.text)")
    }
  }

  @Test func composeWithThousandsOfSourcesIsRefusedBeforeLookingThemUp() {
    let sources = Array(repeating: #"{"name":"missing"}"#, count: 5000).joined(separator: ",")
    let reply = h.call("POST", "/storage/v1/b/bkt/o/out/compose", #"{"sourceObjects":[\#(sources)]}"#)
    #expect(reply.status == 400)
    #expect(reply.text.contains("1 to 32"))
  }
}

/// The shared integer parser and the two range headers, byte by byte.
@Suite struct DecimalIntegerTests {
  @Test func edgesOfInt64() {
    #expect(DecimalInteger.value("9223372036854775807") == Int64.max)
    #expect(DecimalInteger.value("-9223372036854775808", allowNegative: true) == Int64.min)
    #expect(DecimalInteger.parse("9223372036854775808") == .failure(.outOfRange))
    #expect(DecimalInteger.parse("-9223372036854775809", allowNegative: true) == .failure(.outOfRange))
    #expect(DecimalInteger.parse("000000000000000000000000000042") == .success(42))
    #expect(DecimalInteger.parse("5", in: 0...4) == .failure(.outOfRange))
    // A long run of digits with junk at the end is malformed, not out of range.
    #expect(DecimalInteger.parse("99999999999999999999x") == .failure(.malformed))
  }

  @Test func anythingButDigitsIsMalformed() {
    for text in ["", "-", "+1", " 1", "1 ", "-1", "0x10", "1e3", "١٢", "--1", "1-"] {
      #expect(DecimalInteger.parse(text) == .failure(.malformed), "\(text)")
    }
    #expect(DecimalInteger.parse("-", allowNegative: true) == .failure(.malformed))
  }

  @Test func contentRangeForms() throws {
    #expect(try ContentRange.parse("bytes 0-4/10").get() == ContentRange(bytes: 0..<5, total: 10))
    #expect(try ContentRange.parse("BYTES 5-9/*").get() == ContentRange(bytes: 5..<10, total: nil))
    #expect(try ContentRange.parse("bytes */*").get() == ContentRange(bytes: nil, total: nil))
    #expect(try ContentRange.parse(" bytes */7 ").get() == ContentRange(bytes: nil, total: 7))
    #expect(ContentRange.parse("bytes 0-9223372036854775807/*") == .failure(.outOfRange))
    #expect(ContentRange.parse("bytes 5-4/*") == .failure(.malformed))
    #expect(ContentRange.parse("bytes=0-4/10") == .failure(.malformed))
    #expect(ContentRange.parse("bytes 0-4") == .failure(.malformed))
  }

  @Test func rangeForms() {
    #expect(ByteRange.parse("bytes=0-4") == ByteRange(first: 0, last: 4))
    #expect(ByteRange.parse("bytes=5-") == ByteRange(first: 5, last: nil))
    #expect(ByteRange.parse("bytes=-3") == ByteRange(first: nil, last: 3))
    #expect(ByteRange.parse("bytes=0-1,3-4") == nil)
    #expect(ByteRange.parse("bytes=4-3") == nil)
    #expect(ByteRange.parse("bytes=99999999999999999999-") == ByteRange(first: Int64.max, last: nil))
    #expect(ByteRange(first: nil, last: Int64.max).resolve(size: 10)! == (0, 9))
    #expect(ByteRange(first: Int64.max, last: nil).resolve(size: Int64.max) == nil)
    #expect(ByteRange(first: 0, last: Int64.max).resolve(size: Int64.max)! == (0, Int64.max - 1))
  }
}
