import EmulatorSupport
import Testing

@Suite struct HexTests {
  @Test func encodesTwoLowerCaseDigitsPerByte() {
    #expect(Hex.encode([0x00, 0x0f, 0xa0, 0xff]) == "000fa0ff")
    #expect(Hex.encode([UInt8]()) == "")
  }

  @Test func decodesEitherCaseAndRoundTrips() {
    #expect(Hex.decode("00FfA0") == [0x00, 0xff, 0xa0])
    let bytes = (0...255).map { UInt8($0) }
    #expect(Hex.decode(Hex.encode(bytes)) == bytes)
  }

  @Test func refusesOddLengthEmptyAndNonDigits() {
    #expect(Hex.decode("abc") == nil)
    #expect(Hex.decode("") == nil)
    #expect(Hex.decode("zz") == nil)
    #expect(Hex.decode("0g") == nil)
    #expect(Hex.value(UInt8(ascii: "G")) == nil)
    #expect(Hex.value(UInt8(ascii: "f")) == 15)
  }
}
