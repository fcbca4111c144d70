import EmulatorSupport

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Numeric helpers: power, great-circle distance, CRC-32 variants, base64 and hex.
enum RulesMath {
  static func pow(_ base: Double, _ exponent: Double) -> Double {
    #if canImport(Glibc)
      Glibc.pow(base, exponent)
    #elseif canImport(Darwin)
      Darwin.pow(base, exponent)
    #endif
  }

  /// Metres between two points on a sphere of the Earth's mean radius (haversine).
  static func distance(_ lat1: Double, _ lng1: Double, _ lat2: Double, _ lng2: Double) -> Double {
    let radians = Double.pi / 180
    let dLat = (lat2 - lat1) * radians
    let dLng = (lng2 - lng1) * radians
    let a = sin(dLat / 2) * sin(dLat / 2) + cos(lat1 * radians) * cos(lat2 * radians) * sin(dLng / 2) * sin(dLng / 2)
    return 2 * 6_371_008.8 * atan2(a.squareRoot(), (1 - a).squareRoot())
  }

  /// Reflected CRC-32 (0xEDB88320 is CRC-32, 0x82F63B78 is CRC-32C), bit by bit: rules hash short strings.
  static func crc32(_ bytes: [UInt8], polynomial: UInt32) -> UInt32 {
    var crc: UInt32 = 0xFFFF_FFFF
    for byte in bytes {
      crc ^= UInt32(byte)
      for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ polynomial : crc >> 1 }
    }
    return ~crc
  }

  static func bigEndian(_ value: UInt32) -> [UInt8] {
    [UInt8(value >> 24), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)]
  }

  static func base64(_ bytes: [UInt8]) -> String { Data(bytes).base64EncodedString() }

  static func hex(_ byte: UInt8) -> String {
    let digits = Array("0123456789abcdef".unicodeScalars)
    var text = ""
    text.unicodeScalars.append(digits[Int(byte >> 4)])
    text.unicodeScalars.append(digits[Int(byte & 0xF)])
    return text
  }
}
