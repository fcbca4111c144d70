#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// An object name compared byte by byte (UTF-8), the order Cloud Storage lists in. Swift's
/// `String` equality is Unicode canonical equivalence, which would merge distinct names such as a
/// precomposed and a decomposed "é"; keys never do.
public struct ObjectKey: Hashable, Comparable, Sendable {
  public let bytes: [UInt8]

  public init(_ name: String) { bytes = Array(name.utf8) }
  public init(bytes: [UInt8]) { self.bytes = bytes }

  public var name: String { String(decoding: bytes, as: UTF8.self) }

  /// Byte order, by `memcmp` (the generic `lexicographicallyPrecedes` compares one byte per
  /// call: sorting a million names at start-up spent most of its time there).
  public static func < (lhs: ObjectKey, rhs: ObjectKey) -> Bool {
    let common = min(lhs.bytes.count, rhs.bytes.count)
    let order = lhs.bytes.withUnsafeBufferPointer { a in
      rhs.bytes.withUnsafeBufferPointer { b in common == 0 ? 0 : memcmp(a.baseAddress!, b.baseAddress!, common) }
    }
    return order != 0 ? order < 0 : lhs.bytes.count < rhs.bytes.count
  }

  /// The bytes in one call (the synthesized hash feeds the hasher one byte at a time).
  public func hash(into hasher: inout Hasher) {
    bytes.withUnsafeBytes { hasher.combine(bytes: $0) }
  }

  public static func == (lhs: ObjectKey, rhs: ObjectKey) -> Bool { lhs.bytes == rhs.bytes }

  public func hasPrefix(_ prefix: [UInt8]) -> Bool {
    bytes.count >= prefix.count && bytes.starts(with: prefix)
  }
}
