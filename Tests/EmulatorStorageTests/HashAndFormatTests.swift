import Foundation
import Testing

@testable import EmulatorStorage

@Suite struct CRC32CTests {
  @Test func publishedVectors() {
    // RFC 3720 §B.4 and the common "123456789" check value.
    #expect(CRC32C.checksum(Array("123456789".utf8)) == 0xE306_9283)
    #expect(CRC32C.checksum([UInt8](repeating: 0, count: 32)) == 0x8A91_36AA)
    #expect(CRC32C.checksum([UInt8](repeating: 0xFF, count: 32)) == 0x62A8_AB43)
    #expect(CRC32C.checksum((0..<32).map { UInt8($0) }) == 0x46DD_794E)
    #expect(CRC32C.checksum((0..<32).map { UInt8(31 - $0) }) == 0x113F_DB5C)
    #expect(CRC32C.checksum([UInt8]()) == 0)
  }

  /// The hardware path (where this machine has one) and the tables agree for every length 0-300
  /// at every alignment 0-7, and piecewise.
  @Test func theInstructionAndTheTablesAgree() {
    var generator = SystemRandomNumberGenerator()
    let data = (0..<320).map { _ in UInt8.random(in: 0...255, using: &generator) }
    data.withUnsafeBytes { raw in
      for start in 0..<8 {
        for count in 0...300 {
          let slice = UnsafeRawBufferPointer(rebasing: raw[start..<(start + count)])
          var fast = CRC32C()
          fast.update(slice)
          var tables = CRC32C()
          tables.updateWithTables(slice)
          #expect(fast.value == tables.value, "offset \(start), \(count) bytes")
          var pieces = CRC32C()
          pieces.update(UnsafeRawBufferPointer(rebasing: slice[0..<(count / 3)]))
          pieces.update(UnsafeRawBufferPointer(rebasing: slice[(count / 3)...]))
          #expect(pieces.value == tables.value)
        }
      }
    }
    var known = CRC32C()
    Array("123456789".utf8).withUnsafeBytes { known.updateWithTables($0) }
    #expect(known.value == 0xE306_9283)
  }

  @Test func incrementalUpdatesMatchOneShot() {
    let data = (0..<10_007).map { UInt8(truncatingIfNeeded: $0 &* 31) }
    var crc = CRC32C()
    crc.update(Array(data[0..<3]))
    crc.update(Array(data[3..<5000]))
    crc.update(Array(data[5000...]))
    #expect(crc.value == CRC32C.checksum(data))
  }

  @Test func protocolTestVectorsAsObjectHashes() throws {
    let store = try ObjectStore(backend: MemoryBackend())
    let hello = try store.insert(bucket: "bkt", name: "h", data: Array("hello world".utf8))
    #expect(hello.md5Base64 == "XrY7u+Ae7tCTyyK7j1rNww==")
    #expect(hello.crc32cBase64 == "yZRlqg==")
    #expect(hello.crc32c == 3_381_945_770)
    let empty = try store.insert(bucket: "bkt", name: "e", data: [])
    #expect(empty.md5Base64 == "1B2M2Y8AsgTpgAmY7PhCfg==")
    #expect(empty.crc32cBase64 == "AAAAAA==")
    #expect(empty.contentType == "application/octet-stream")
  }
}

@Suite struct TimestampTests {
  @Test func formatsWithExactlyThreeFractionDigits() {
    #expect(Timestamp.format(milliseconds: 0) == "1970-01-01T00:00:00.000Z")
    #expect(Timestamp.format(milliseconds: 1_600_389_093_328) == "2020-09-18T00:31:33.328Z")
    #expect(Timestamp.format(milliseconds: 951_782_400_005) == "2000-02-29T00:00:00.005Z")
  }

  @Test func formatsFourDigitYearsAndLaterOnes() {
    #expect(Timestamp.format(milliseconds: -62_135_596_800_000) == "0001-01-01T00:00:00.000Z")
    #expect(Timestamp.format(milliseconds: 253_402_300_799_999) == "9999-12-31T23:59:59.999Z")
    #expect(Timestamp.format(milliseconds: 253_402_300_800_000) == "10000-01-01T00:00:00.000Z")
  }

  @Test func formatsYearsBeforeZeroWithTheirSign() {
    let text = Timestamp.format(milliseconds: -62_200_000_000_000)
    #expect(text.hasPrefix("-") && text.hasSuffix(".000Z") && text.utf8.count < 32, "\(text)")
    var bytes = Array("x".utf8)
    Timestamp.append(milliseconds: 0, to: &bytes)
    #expect(String(decoding: bytes, as: UTF8.self) == "x1970-01-01T00:00:00.000Z")
  }

  @Test func formatAndParseRoundTripAcrossTheFourDigitYears() {
    var generator = SystemRandomNumberGenerator()
    for _ in 0..<2000 {
      let milliseconds = Int64.random(in: -62_135_596_800_000...253_402_300_799_999, using: &generator)
      let text = Timestamp.format(milliseconds: milliseconds)
      #expect(text.utf8.count == 24, "\(text)")
      #expect(Timestamp.parse(text) == milliseconds, "\(text)")
    }
  }

  @Test func base64MatchesFoundationForEveryLength() {
    for length in 0..<40 {
      let bytes = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 97 &+ 13) }
      #expect(Base64.encode(bytes) == Data(bytes).base64EncodedString(), "length \(length)")
    }
  }

  @Test func writerBuildsStringsInPartsWithIntegersAndBase64() throws {
    var json = JSONWriter()
    json.beginObject()
    json.beginString("id")
    json.stringPart("a\"b/")
    json.stringPart(Int64.max)
    json.stringPart("/")
    json.stringPart(Int64.min)
    json.stringPart("/")
    json.stringPart(0)
    json.endString()
    json.integerString("n", -42)
    json.base64("b", [0xFB, 0xFF])
    json.timestamp("t", milliseconds: 5)
    json.endObject()
    #expect(
      String(decoding: json.bytes, as: UTF8.self)
        == #"{"id":"a\"b/9223372036854775807/-9223372036854775808/0","n":"-42","b":"+/8=","t":"1970-01-01T00:00:00.005Z"}"#
    )
    // And it is JSON.
    #expect(try JSONValue.parse(json.bytes)["n"] == .string("-42"))
  }

  @Test func parsesRFC3339() {
    #expect(Timestamp.parse("2020-09-18T00:31:33.328Z") == 1_600_389_093_328)
    #expect(Timestamp.parse("2020-09-18T00:31:33Z") == 1_600_389_093_000)
    #expect(Timestamp.parse("2020-09-18T02:31:33.3+02:00") == 1_600_389_093_300)
    #expect(Timestamp.parse("2020-09-18T00:31:33.123456789Z") == 1_600_389_093_123)
    #expect(Timestamp.parse("2020-09-18 00:31:33Z") == nil)
    #expect(Timestamp.parse("yesterday") == nil)
    #expect(Timestamp.parse("2020-13-18T00:31:33Z") == nil)
  }
}

@Suite struct JSONTests {
  @Test func parsesAndKeepsNumberText() throws {
    let value = try JSONValue.parse(Array(#"{"a": 5, "b": [true, null, "x\n\u00e9\ud83d\ude00"], "c": -1.5e3}"#.utf8))
    #expect(value["a"] == .number("5"))
    #expect(value["b"] == .array([.bool(true), .null, .string("x\né😀")]))
    #expect(value["c"] == .number("-1.5e3"))
  }

  @Test(arguments: [#"{"a":}"#, #"{"a":1,}"#, "[1 2]", #""\x""#, "01", "{} x", "", #"{"a":"\ud800"}"#, "nul"])
  func rejectsMalformedJSON(_ text: String) {
    #expect(throws: JSONParseError.self) { try JSONValue.parse(Array(text.utf8)) }
  }

  /// A string without an escape is read where it stands; one with an escape byte by byte: the
  /// errors and their offsets are the same either way.
  @Test func stringErrorsAreTheSameWithAndWithoutAnEscape() {
    func failure(_ bytes: [UInt8]) -> JSONParseError? {
      do {
        _ = try JSONValue.parse(bytes)
        return nil
      } catch {
        return error
      }
    }
    let invalid = failure([0x22, 0x61, 0xFF, 0x22])
    #expect(invalid == JSONParseError(offset: 4, reason: "string is not valid UTF-8"))
    #expect(failure([0x22, 0x5C, 0x6E, 0xFF, 0x22])?.reason == "string is not valid UTF-8")
    #expect(failure(Array("\"ab\u{1}c\"".utf8)) == JSONParseError(offset: 3, reason: "control character in string"))
    #expect(failure(Array("\"ab".utf8)) == JSONParseError(offset: 3, reason: "unterminated string"))
    #expect(failure(Array(#"["ok", "a\"#.utf8))?.reason == "unterminated escape")
    let parsed = try? JSONValue.parse(Array(#"["plain", "esc\"aped", "日本"]"#.utf8))
    #expect(parsed == .array([.string("plain"), .string("esc\"aped"), .string("日本")]))
  }

  @Test func rejectsDeepNesting() {
    let deep = String(repeating: "[", count: 100) + String(repeating: "]", count: 100)
    #expect(throws: JSONParseError.self) { try JSONValue.parse(Array(deep.utf8)) }
  }

  /// Strings with escapes at the start, the middle, the end and nowhere, every control
  /// character, and non-ASCII text: written, then read back by the parser, unchanged.
  @Test func writerStringsRoundTripThroughTheParser() throws {
    let controls = String((0..<32).map { Character(Unicode.Scalar(UInt8($0))) })
    let samples = [
      "", "plain", "\"start", "end\\", "mid\"dle", "\u{7F}del", "日本語/ü", controls, "a\u{0}b", "\\\"\n\r\t",
      String(repeating: "x", count: 300) + "\"",
    ]
    for sample in samples {
      var json = JSONWriter()
      json.beginObject()
      json.string(sample, sample)
      json.beginString("parts")
      json.stringPart(sample)
      json.stringPart(sample)
      json.endString()
      json.endObject()
      let parsed = try JSONValue.parse(json.bytes)
      #expect(parsed[sample]?.stringValue == sample, "\(Array(sample.utf8))")
      #expect(parsed["parts"]?.stringValue == sample + sample)
    }
  }

  /// Commas are right at every depth, past the 64 levels the writer keeps in one word too:
  /// each level holds two members, the second a nested container.
  @Test func commasAreRightAtEveryDepth() throws {
    for levels in [1, 63, 64, 65, 130] {
      var json = JSONWriter()
      for _ in 0..<levels {
        json.beginArray()
        json.rawValue("1")
      }
      json.beginObject()
      json.string("a", "b")
      json.null("c")
      json.endObject()
      for _ in 0..<levels {
        json.rawValue("2")
        json.endArray()
      }
      let expected =
        String(repeating: "[1,", count: levels) + "{\"a\":\"b\",\"c\":null}" + String(repeating: ",2]", count: levels)
      #expect(String(decoding: json.bytes, as: UTF8.self) == expected, "\(levels) levels")
    }
  }

  /// Keys spelled in the source and value-only calls write what the keyed calls write.
  @Test func literalKeysWriteWhatStringKeysWrite() {
    var keyed = JSONWriter()
    keyed.beginObject()
    keyed.string("k", "v")
    keyed.integerString("n", -7)
    keyed.timestamp("t", milliseconds: 1_600_389_093_328)
    keyed.base64("b", [1, 2, 3, 4])
    keyed.beginString("s")
    keyed.stringPart("x")
    keyed.endString()
    keyed.endObject()
    var literal = JSONWriter()
    literal.beginObject()
    literal.literalKey("k")
    literal.string("v")
    literal.literalKey("n")
    literal.integerString(-7)
    literal.literalKey("t")
    literal.timestamp(milliseconds: 1_600_389_093_328)
    literal.literalKey("b")
    literal.base64([1, 2, 3, 4])
    literal.literalKey("s")
    literal.beginString()
    literal.stringPart("x")
    literal.endString()
    literal.endObject()
    #expect(literal.bytes == keyed.bytes)
    #expect(
      String(decoding: literal.bytes, as: UTF8.self)
        == #"{"k":"v","n":"-7","t":"2020-09-18T00:31:33.328Z","b":"AQIDBA==","s":"x"}"#)
  }

  @Test func writerEscapesAndSeparates() throws {
    var json = JSONWriter()
    json.beginObject()
    json.string("a\"", "line\nbreak\u{1}")
    json.beginArray("list")
    json.string("x")
    json.string("y")
    json.endArray()
    json.beginArray("empty")
    json.endArray()
    json.objectKey("o")
    json.raw("n", "1")
    json.endObject()
    json.bool("t", true)
    json.endObject()
    let text = String(decoding: json.bytes, as: UTF8.self)
    #expect(text == #"{"a\"":"line\nbreak\u0001","list":["x","y"],"empty":[],"o":{"n":1},"t":true}"#)
    #expect(try JSONValue.parse(json.bytes)["o"]?["n"] == .number("1"))
  }
}

@Suite struct NamingTests {
  @Test(arguments: ["a", "a/", "a/b", "../x", "a/../b", "%2F", ".metadata", "日本語/ファイル.txt", "a b+c#d?e", "..."])
  func acceptsOpaqueNames(_ name: String) throws {
    try Naming.validateObjectName(name)
  }

  @Test func rejectsNamesBreakingTheRules() {
    #expect(throws: StorageError.self) { try Naming.validateObjectName("") }
    #expect(throws: StorageError.self) { try Naming.validateObjectName(".") }
    #expect(throws: StorageError.self) { try Naming.validateObjectName("..") }
    #expect(throws: StorageError.self) { try Naming.validateObjectName("a\nb") }
    #expect(throws: StorageError.self) { try Naming.validateObjectName("a\rb") }
    #expect(throws: StorageError.self) { try Naming.validateObjectName(String(repeating: "x", count: 1025)) }
    #expect(throws: Never.self) { try Naming.validateObjectName(String(repeating: "é", count: 512)) }
    #expect(throws: StorageError.self) { try Naming.validateObjectName(String(repeating: "é", count: 513)) }
  }

  @Test func bucketNames() {
    #expect(throws: Never.self) { try Naming.validateBucketName("demo-project.appspot.com") }
    for bad in ["ab", "UPPER", "-start", "end-", "has space", "a/b", "..."] {
      #expect(throws: StorageError.self) { try Naming.validateBucketName(bad) }
    }
  }
}

/// Download tokens: the shape Firebase clients expect (a lower-case version 4 UUID), and fresh.
@Suite struct DownloadTokenTests {
  @Test func tokensAreLowerCaseVersion4UUIDsAndDiffer() throws {
    var seen = Set<String>()
    for _ in 0..<200 {
      let token = ObjectStore.newDownloadToken()
      let groups = token.split(separator: "-", omittingEmptySubsequences: false).map(\.count)
      #expect(groups == [8, 4, 4, 4, 12], "\(token)")
      #expect(token.utf8.allSatisfy { (48...57).contains($0) || (97...102).contains($0) || $0 == 45 }, "\(token)")
      #expect(Array(token.utf8)[14] == UInt8(ascii: "4"))
      #expect("89ab".utf8.contains(Array(token.utf8)[19]))
      #expect(UUID(uuidString: token) != nil)
      seen.insert(token)
    }
    #expect(seen.count == 200)
  }

  /// The pool asks the system once per 512 bytes: 32 tokens, where `SystemRandomNumberGenerator`
  /// made two calls for each.
  @Test func thirtyTwoTokensCostOneFillOfThePool() {
    let pool = RandomPool()
    var tokens = Set<String>()
    for _ in 0..<32 { tokens.insert(ObjectStore.newDownloadToken(from: pool)) }
    #expect(pool.fills == 1)
    tokens.insert(ObjectStore.newDownloadToken(from: pool))
    #expect(pool.fills == 2)
    #expect(tokens.count == 33)
  }

  /// Bytes are handed out once: consecutive draws across a refill never repeat a block, and a
  /// draw of the whole pool works.
  @Test func poolDrawsNeverRepeatAndSpanRefills() {
    let pool = RandomPool()
    var blocks = Set<[UInt8]>()
    for size in [16, 500, 16, RandomPool.capacity, 7, 16] {
      var bytes = [UInt8](repeating: 0, count: size)
      bytes.withUnsafeMutableBytes { pool.fill($0) }
      if size >= 16 { #expect(blocks.insert(Array(bytes.prefix(16))).inserted) }
      #expect(bytes.contains { $0 != 0 } || size < 4)
    }
    #expect(pool.fills == 5)  // 16 | 500 | 16 | 512 | 7 + 16
  }

  /// Session ids: 32 lower-case hexadecimal digits, fresh each time.
  @Test func hexIDsAreThirtyTwoLowerCaseDigitsAndDiffer() {
    let pool = RandomPool()
    let ids = (0..<100).map { _ in pool.hexID() }
    #expect(Set(ids).count == 100)
    for id in ids {
      #expect(id.utf8.count == 32)
      #expect(id.utf8.allSatisfy { (48...57).contains($0) || (97...102).contains($0) }, "\(id)")
    }
  }
}
