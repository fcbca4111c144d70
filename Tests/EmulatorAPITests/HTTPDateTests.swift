import Testing

@testable import EmulatorAPI

/// `Last-Modified` (IMF-fixdate, RFC 9110 §5.6.7), written as bytes from the civil date.
@Suite struct HTTPDateTests {
  @Test(arguments: [
    (Int64(784_111_777_000), "Sun, 06 Nov 1994 08:49:37 GMT"),  // RFC 9110's own example
    (0, "Thu, 01 Jan 1970 00:00:00 GMT"),
    (-1, "Wed, 31 Dec 1969 23:59:59 GMT"),
    (951_825_600_999, "Tue, 29 Feb 2000 12:00:00 GMT"),
    (1_798_761_599_000, "Thu, 31 Dec 2026 23:59:59 GMT"),
    (253_402_300_799_000, "Fri, 31 Dec 9999 23:59:59 GMT"),
  ])
  func knownDates(milliseconds: Int64, expected: String) {
    #expect(StorageAPI.httpDate(milliseconds: milliseconds) == expected)
  }
}
