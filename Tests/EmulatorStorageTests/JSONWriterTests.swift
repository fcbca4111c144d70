import Testing

@testable import EmulatorStorage

/// The writer's pointer writes: the eight-bytes-at-a-time escape scan, growth past the first
/// room, and digits.
@Suite struct JSONWriterTests {
  /// JSON's escaping, spelled out one byte at a time (what the writer must produce).
  func reference(_ text: [UInt8]) -> [UInt8] {
    var out: [UInt8] = [UInt8(ascii: "\"")]
    for byte in text {
      switch byte {
      case 0x22: out += Array(#"\""#.utf8)
      case 0x5C: out += Array(#"\\"#.utf8)
      case 0x0A: out += Array(#"\n"#.utf8)
      case 0x0D: out += Array(#"\r"#.utf8)
      case 0x09: out += Array(#"\t"#.utf8)
      case 0..<0x20:
        let hex = Array("0123456789abcdef".utf8)
        out += Array(#"\u00"#.utf8) + [hex[Int(byte >> 4)], hex[Int(byte & 15)]]
      default: out.append(byte)
      }
    }
    out.append(UInt8(ascii: "\""))
    return out
  }

  /// Each byte that needs an escape (and some that look close but do not), at every position of
  /// strings from 0 to 24 bytes: the scan must stop exactly there, inside a word or in the tail.
  @Test func anEscapeAtEveryPositionOfTheWordScanIsFound() {
    let needing: [UInt8] = [0x00, 0x01, 0x09, 0x0A, 0x0D, 0x1F, 0x22, 0x5C]
    let notNeeding: [UInt8] = [0x20, 0x21, 0x23, 0x5B, 0x5D, 0x7F, 0x80, 0xA2, 0xDC, 0xFF]
    for length in 1...24 {
      for position in 0..<length {
        for special in needing + notNeeding {
          var text = [UInt8](repeating: UInt8(ascii: "a"), count: length)
          text[position] = special
          let clean = text.withUnsafeBufferPointer { JSONWriter.cleanPrefix($0) }
          #expect(clean == (needing.contains(special) ? position : length), "\(text)")
          var json = JSONWriter()
          json.string(String(decoding: text, as: UTF8.self))
          // Bytes that are not UTF-8 on their own became U+FFFD in the String: compare with its bytes.
          let expected = reference(Array(String(decoding: text, as: UTF8.self).utf8))
          #expect(json.bytes == expected, "\(text)")
        }
      }
    }
  }

  /// Escapes are written a kilobyte at a time: a long string of control characters comes out
  /// whole, six bytes each.
  @Test func aLongStringOfControlCharactersIsEscapedWhole() throws {
    let text = String(decoding: (0..<5_000).map { UInt8($0 % 32) }, as: UTF8.self)
    var json = JSONWriter()
    json.string(text)
    #expect(json.bytes == reference(Array(text.utf8)))
    #expect(try JSONValue.parse(json.bytes).stringValue == text)
  }

  /// A writer with little room grows as often as it must, and keeps every byte.
  @Test func textFarPastTheFirstRoomIsKept() throws {
    var json = JSONWriter(capacity: 1)
    json.beginObject()
    for index in 0..<2_000 {
      json.integerString("k\(index)", Int64(index) * 1_000_003)
    }
    json.endObject()
    let parsed = try JSONValue.parse(json.bytes)
    for index in [0, 1, 999, 1_999] {
      #expect(parsed["k\(index)"]?.stringValue == String(Int64(index) * 1_000_003))
    }
  }

  @Test(arguments: [
    Int64.min, Int64.min + 1, -1_000_000, -100, -99, -10, -9, -1, 0, 1, 9, 10, 99, 100, 101, 999, 1000, 12_345,
    1_764_300_000_000_123, 999_999_999_999_999_999, Int64.max,
  ])
  func integersAreTheirDecimalDigits(_ value: Int64) {
    var json = JSONWriter()
    json.integerString(value)
    json.beginString()
    json.stringPart(value)
    json.endString()
    #expect(json.bytes == Array("\"\(value)\"\"\(value)\"".utf8))
  }

  /// Reading `bytes` gives up the spare room; writing after it goes on where the text ends.
  @Test func writingAfterReadingTheBytesContinuesTheText() throws {
    var json = JSONWriter(capacity: 512)
    json.beginObject()
    json.string("a", "1")
    #expect(json.bytes == Array(#"{"a":"1""#.utf8))
    json.string("b", "2")
    json.endObject()
    #expect(json.bytes == Array(#"{"a":"1","b":"2"}"#.utf8))
  }

  /// Writers are values: a copy writes into a buffer of its own.
  @Test func aCopiedWriterWritesIntoItsOwnBuffer() {
    var first = JSONWriter()
    first.beginArray()
    first.string("a")
    var second = first
    second.string("b")
    first.string("c")
    first.endArray()
    second.endArray()
    #expect(first.bytes == Array(#"["a","c"]"#.utf8))
    #expect(second.bytes == Array(#"["a","b"]"#.utf8))
  }
}
