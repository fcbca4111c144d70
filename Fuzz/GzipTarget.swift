// Fuzz target `gzip`: decompressive transcoding of stored gzip objects (GzipInflater).
//
// Oracles: nothing traps; inflating with the input handed over in short reads gives the same
// output (and the same success or failure) as with whole reads; no call returns more than its
// output buffer; the number of calls stays within the bound the work slicing promises.

func fuzzGzip(_ bytes: UnsafeBufferPointer<UInt8>) {
  let input = Array(bytes)
  let whole = inflateAll(input, readSize: GzipInflater.inputBufferBytes)
  let short = inflateAll(input, readSize: input.isEmpty ? 1 : Int(input[input.count / 2] % 13) + 1)
  if whole.capped || short.capped {
    // A bomb, cut at the same length both ways: the outputs up to there must agree.
    let common = min(whole.output.count, short.output.count)
    if whole.output.prefix(common) != short.output.prefix(common) { fatalError("inflated bombs differ") }
  } else if whole.failed != short.failed {
    fatalError("inflating with short reads \(short.failed ? "fails" : "succeeds") but with whole reads does not")
  } else if !whole.failed && whole.output != short.output {
    fatalError("inflating with short reads differs: \(whole.output.count) vs \(short.output.count) bytes")
  } else if whole.failed {
    // A call that fails drops what it produced, so the two may stop at different points.
    let common = min(whole.output.count, short.output.count)
    if whole.output.prefix(common) != short.output.prefix(common) { fatalError("output before the failure differs") }
  }
}

private let outputCap = 4 << 20

private func inflateAll(_ input: [UInt8], readSize: Int) -> (output: [UInt8], failed: Bool, capped: Bool) {
  let inflater = GzipInflater { buffer, offset in
    let count = max(0, min(buffer.count, readSize, input.count - offset))
    if count > 0 { buffer.copyBytes(from: input[offset..<(offset + count)]) }
    return count
  }
  var output: [UInt8] = []
  var calls = 0
  // Each call produces output, or ends a bounded slice of input or members, or finishes.
  let maxCalls = input.count + 16
  do {
    while let piece = try inflater.next() {
      precondition(piece.count <= GzipInflater.outputBytes, "a piece larger than the output buffer")
      output += piece
      calls += 1
      precondition(calls <= maxCalls + output.count / 1024, "more calls than the work bound allows")
      if output.count > outputCap { return (Array(output.prefix(outputCap)), false, true) }
    }
  } catch {
    return (output, true, false)
  }
  return (output, false, false)
}
