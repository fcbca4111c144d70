// Fuzz target `glob`: matchGlob compilation and matching. The input is a pattern, a NUL, then
// an object name (up to 1024 bytes, as names are).
//
// Oracles: nothing traps or recurses without bound, and compiling plus matching one input
// takes under 10 ms of CPU time (a backtracking matcher fails this on patterns of many `*`).

func fuzzGlob(_ bytes: UnsafeBufferPointer<UInt8>) {
  let split = bytes.firstIndex(of: 0) ?? bytes.count
  let pattern = String(decoding: bytes[..<split], as: UTF8.self)
  let name = Array(bytes[min(split + 1, bytes.count)...].prefix(1024))
  let started = threadCPUNanoseconds()
  if let glob = try? Glob(pattern) {
    _ = glob.matches(name)
  }
  let elapsed = threadCPUNanoseconds() - started
  if elapsed > 10_000_000 {
    fatalError("matchGlob took \(elapsed / 1_000_000) ms on a \(pattern.utf8.count)-byte pattern and \(name.count)-byte name")
  }
}
