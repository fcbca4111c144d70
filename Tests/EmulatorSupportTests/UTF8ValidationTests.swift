import EmulatorSupport
import Testing

@Suite struct UTF8ValidationTests {
  /// The fast path must agree with the standard library on every input: ASCII of every length
  /// (the eight-byte steps and the tail), a high byte at every position, and random bytes.
  @Test func agreesWithTheStandardValidation() {
    var generator = SystemRandomNumberGenerator()
    var inputs: [[UInt8]] = []
    for length in 0...24 {
      let ascii = (0..<length).map { UInt8(32 + $0 % 90) }
      inputs.append(ascii)
      for position in 0..<length {
        for high: UInt8 in [0x80, 0xC3, 0xFF] {
          var bytes = ascii
          bytes[position] = high
          inputs.append(bytes)
        }
      }
    }
    inputs.append(Array("grüße/日本語/😀".utf8))
    inputs.append(Array("ok".utf8) + [0xED, 0xA0, 0x80])  // an encoded surrogate: not UTF-8
    for _ in 0..<2_000 {
      inputs.append((0..<Int.random(in: 0...40, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator) })
    }
    for bytes in inputs {
      #expect(String.validatingUTF8(bytes) == String(validating: bytes, as: UTF8.self), "\(bytes)")
    }
  }

  @Test func refusesBrokenSequencesAndKeepsValidOnes() {
    #expect(String.validatingUTF8([0x61, 0xC3]) == nil)
    #expect(String.validatingUTF8([0xC3, 0xA9]) == "é")
    #expect(String.validatingUTF8([UInt8]()) == "")
  }
}
