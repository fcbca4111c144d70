// Fuzz target `ranges`: DecimalInteger, Content-Range and Range parsing.
//
// Oracles: nothing traps; DecimalInteger agrees with the standard library on strings of
// digits (Int64(text) is nil exactly when the value is out of range); a parsed Content-Range has
// 0 <= first < end and total >= 0; a resolved Range lies inside the object for every size.

func fuzzRanges(_ bytes: UnsafeBufferPointer<UInt8>) {
  let text = String(decoding: bytes, as: UTF8.self)
  let negative = bytes.first.map { $0 & 1 == 1 } ?? false
  let parsed = DecimalInteger.parse(text, allowNegative: negative)
  let body = negative && text.hasPrefix("-") ? text.dropFirst() : text[...]
  if !body.isEmpty && body.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }) {
    switch (parsed, Int64(text)) {
    case (.success(let value), let reference?) where value == reference: break
    case (.failure(.outOfRange), nil): break
    default: fatalError("DecimalInteger disagrees with Int64(\(text)): \(parsed)")
    }
  } else if case .success = parsed {
    fatalError("DecimalInteger accepted a non-integer: \(text)")
  }

  if case .success(let range) = ContentRange.parse(text) {
    if let span = range.bytes {
      precondition(span.lowerBound >= 0 && span.lowerBound < span.upperBound, "bad span \(span)")
      _ = span.upperBound - span.lowerBound
    }
    if let total = range.total { precondition(total >= 0, "negative total") }
  }

  if let range = ByteRange.parse(text) {
    for size: Int64 in [0, 1, 2, 10, 1 << 20, Int64.max - 1, Int64.max] {
      if let (first, last) = range.resolve(size: size) {
        precondition(first >= 0 && first <= last && last < size, "\(range) resolved outside \(size)")
      }
    }
  }
}
