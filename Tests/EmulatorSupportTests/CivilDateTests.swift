import EmulatorSupport
import XCTest

final class CivilDateTests: XCTestCase {
  func testEpochAndKnownDates() {
    XCTAssertTrue(CivilDate.civil(days: 0) == (1970, 1, 1))
    XCTAssertTrue(CivilDate.civil(days: -1) == (1969, 12, 31))
    XCTAssertTrue(CivilDate.civil(days: 11_016) == (2000, 2, 29))
    XCTAssertEqual(CivilDate.days(year: 2000, month: 3, day: 1), 11_017)
    XCTAssertEqual(CivilDate.days(year: 1, month: 1, day: 1), -719_162)
    XCTAssertEqual(CivilDate.days(year: 9999, month: 12, day: 31), 2_932_896)
  }

  func testRoundTripAcrossCenturiesAndNegativeDays() {
    for days in stride(from: Int64(-800_000), through: 3_000_000, by: 997) {
      let date = CivilDate.civil(days: days)
      XCTAssertEqual(CivilDate.days(year: date.year, month: date.month, day: date.day), days)
    }
  }

  func testFloorDivideRoundsDown() {
    XCTAssertEqual(CivilDate.floorDivide(7, 2), 3)
    XCTAssertEqual(CivilDate.floorDivide(-7, 2), -4)
    XCTAssertEqual(CivilDate.floorDivide(-8, 2), -4)
  }
}
