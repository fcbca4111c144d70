// Fuzz target `glob`: matchGlob compilation and matching. The input is a pattern, a NUL, then
// an object name (up to 1024 bytes, as names are).
//
// Oracles: nothing traps or recurses without bound, and compiling plus matching one input
// takes under 10 ms of CPU time (a backtracking matcher fails this on patterns of many `*`).
// A slow first run is timed again before it counts: on a loaded machine a cold run can cost
// more (page faults, ASan's shadow memory), while an algorithmic blow-up is slow every time.

func fuzzGlob(_ bytes: UnsafeBufferPointer<UInt8>) {
  let split = bytes.firstIndex(of: 0) ?? bytes.count
  let pattern = String(decoding: bytes[..<split], as: UTF8.self)
  let name = Array(bytes[min(split + 1, bytes.count)...].prefix(1024))
  func run() -> Int64 {
    let started = threadCPUNanoseconds()
    if let glob = try? Glob(pattern) {
      _ = glob.matches(name)
    }
    return threadCPUNanoseconds() - started
  }
  let limit: Int64 = 10_000_000
  if run() > limit {
    let again = run()
    if again > limit {
      fatalError(
        "matchGlob took \(again / 1_000_000) ms on a \(pattern.utf8.count)-byte pattern and \(name.count)-byte name")
    }
  }
}
