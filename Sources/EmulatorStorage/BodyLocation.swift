/// Where an object's bytes are: in a data file of their own, or (a small object, `FileBackend`)
/// inside the object's record in a log segment. One word, so the index's per-object cost grows by
/// eight bytes: 0 for a data file, else the segment's sequence (24 bits) and the offset of the
/// first byte in that segment (40 bits).
public struct BodyLocation: Sendable, Equatable {
  let raw: UInt64

  static let dataFile = BodyLocation(raw: 0)
  /// Sequences from this one on cannot be named: objects then get data files.
  static let sequenceLimit: UInt64 = 1 << 24
  static let offsetLimit: UInt64 = 1 << 40

  private init(raw: UInt64) { self.raw = raw }

  /// nil when the position cannot be named (see the limits).
  init?(sequence: UInt64, offset: Int) {
    guard sequence > 0, sequence < Self.sequenceLimit, offset >= 0, UInt64(offset) < Self.offsetLimit else {
      return nil
    }
    raw = sequence << 40 | UInt64(offset)
  }

  /// From its encoding in a snapshot (any value outside the limits is damage).
  init?(encoded: UInt64) {
    guard encoded >> 40 < Self.sequenceLimit else { return nil }
    raw = encoded
  }

  var isInline: Bool { raw != 0 }
  var sequence: UInt64 { raw >> 40 }
  var offset: Int { Int(raw & (Self.offsetLimit - 1)) }
}
