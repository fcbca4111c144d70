// The server's modules need only FoundationEssentials (Data, URL, FileManager, UUID,
// ProcessInfo), never full Foundation, whose libraries and ICU data cost every process megabytes
// of memory and milliseconds of start-up (BENCHMARKS.md, "instances"). Each file that uses it
// imports EmulatorSupport, which re-exports it from here. On macOS, where Foundation is the
// system's and FoundationEssentials is not a module of its own, Foundation is re-exported instead.
#if canImport(FoundationEssentials)
  @_exported import FoundationEssentials
#else
  @_exported import Foundation
#endif
