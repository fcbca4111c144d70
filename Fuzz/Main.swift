// The libFuzzer entry point of every fuzz target. scripts/fuzz builds one binary from the
// sources each target needs (with -sanitize=fuzzer,address) and runs it once per target, naming
// the target in FUZZ_TARGET. Swift's own overflow and bounds checks stay on (-O), so any trap
// in the code under test is a finding.

#if canImport(Glibc)
  import Glibc
#endif

private let targets: [String: (UnsafeBufferPointer<UInt8>) -> Void] = [
  "request-decoder": fuzzRequestDecoder,
  "ranges": fuzzRanges,
  "glob": fuzzGlob,
  "json": fuzzJSON,
  "multipart": fuzzMultipart,
  "gzip": fuzzGzip,
]

private let selected: (UnsafeBufferPointer<UInt8>) -> Void = {
  let name = getenv("FUZZ_TARGET").map { String(cString: $0) } ?? ""
  guard let target = targets[name] else {
    fatalError("FUZZ_TARGET must be one of: \(targets.keys.sorted().joined(separator: ", "))")
  }
  return target
}()

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
  selected(UnsafeBufferPointer(start: data, count: size))
  return 0
}

/// CPU time of this thread, in nanoseconds (not wall time: other processes on a shared
/// machine do not count).
func threadCPUNanoseconds() -> Int64 {
  var spec = timespec()
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &spec)
  return Int64(spec.tv_sec) * 1_000_000_000 + Int64(spec.tv_nsec)
}
