// Fuzz target `multipart`: the multipart/related upload parser. The first byte picks the
// boundary (one of a few, CRLF-free as header values are); the rest is the body.
//
// Oracles: nothing traps; every part lies inside the body, in order, without overlap; there are
// at most `maxParts`, the first at most `maxFirstPartBytes` long; refusals are 400 or 413.

func fuzzMultipart(_ bytes: UnsafeBufferPointer<UInt8>) {
  guard let selector = bytes.first else { return }
  let boundaries = ["b", "==0==", "===============7735916957722773249==", "a-b", String(repeating: "x", count: 70)]
  let boundary = boundaries[Int(selector) % boundaries.count]
  let body = Array(bytes.dropFirst())
  var limits = MultipartRelated.Limits()
  limits.maxFirstPartBytes = 64
  limits.maxParts = 4
  limits.maxPartHeaderBytes = 128
  do {
    let parts = try MultipartRelated.parse(body, boundary: boundary, limits: limits)
    precondition(parts.count <= limits.maxParts, "too many parts")
    var previousEnd = 0
    for (index, part) in parts.enumerated() {
      precondition(part.range.lowerBound >= previousEnd && part.range.upperBound <= body.count, "part outside body")
      if index == 0 { precondition(part.range.count <= limits.maxFirstPartBytes, "first part over its limit") }
      previousEnd = part.range.upperBound
    }
  } catch {
    precondition(error.status == 400 || error.status == 413, "unexpected status \(error.status)")
  }
}
