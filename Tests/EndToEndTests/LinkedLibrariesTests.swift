import Foundation
import Testing

/// The server links FoundationEssentials, never full Foundation and its ICU data (issue #22:
/// those cost every instance megabytes of memory and milliseconds of start-up), and on Linux it
/// carries the Swift runtime and FoundationEssentials inside (Package.swift links them
/// statically): it needs no Swift shared library, its symbols include none of full Foundation's
/// or ICU's, and a running server maps none of those libraries. Read from the built binary's ELF
/// headers and symbol tables, and from a running server's `/proc/PID/maps`.
@Suite struct LinkedLibrariesTests {
  static let fullFoundation: Set = [
    "libFoundation.so", "lib_FoundationICU.so", "libFoundationInternationalization.so",
    "libFoundationNetworking.so", "libFoundationXML.so",
  ]

  /// What full Foundation's and ICU's symbols start with (Swift's mangling of the `Foundation`
  /// module; ICU's C++ namespace and its data), each after the zero byte ending the previous name.
  static let fullFoundationSymbols = ["$s10Foundation", "_ZN6icu_", "icudt"]

  /// Whether a symbol name starts with `prefix` in a string table from `ELFNeeded.symbolNames`.
  static func names(_ table: [UInt8], include prefix: String) -> Bool {
    let needle = [0] + Array(prefix.utf8)
    return table.withUnsafeBufferPointer { bytes in
      guard bytes.count >= needle.count else { return false }
      for start in 0...(bytes.count - needle.count) where bytes[start] == 0 && bytes[start + 1] == needle[1] {
        if bytes[start..<start + needle.count].elementsEqual(needle) { return true }
      }
      return false
    }
  }

  /// The folder the Swift runtime was loaded from in this process (the toolchain's or the
  /// runtime image's libraries).
  static func runtimeFolder() throws -> String {
    // Read to the end: /proc reports a size of 0, which String(contentsOfFile:) trusts.
    let handle = try #require(FileHandle(forReadingAtPath: "/proc/self/maps"))
    let maps = String(decoding: handle.readDataToEndOfFile(), as: UTF8.self)
    let line = try #require(maps.split(separator: "\n").first { $0.hasSuffix("/libswiftCore.so") })
    let path = try #require(line.split(separator: " ", omittingEmptySubsequences: true).last)
    return String(path.dropLast("/libswiftCore.so".count))
  }

  /// Every library `path` needs, directly or through the runtime folder's libraries.
  static func allNeeded(_ path: String, runtime: String) throws -> Set<String> {
    var found: Set<String> = []
    var pending = try #require(ELFNeeded.libraries(of: path), "\(path) is not a 64-bit ELF file")
    while let name = pending.popLast() {
      guard found.insert(name).inserted else { continue }
      let library = runtime + "/" + name
      if FileManager.default.fileExists(atPath: library) { pending += ELFNeeded.libraries(of: library) ?? [] }
    }
    return found
  }

  @Test func theReaderFindsFullFoundationInTheTestRunnerThatImportsIt() throws {
    let runner = try #require(ELFNeeded.libraries(of: "/proc/self/exe"))
    #expect(runner.contains("libFoundation.so"), "\(runner)")
    let all = try Self.allNeeded("/proc/self/exe", runtime: try Self.runtimeFolder())
    #expect(all.contains("lib_FoundationICU.so"), "\(all.sorted())")
  }

  @Test func theReaderRefusesWhatIsNotAnELFFile() throws {
    #expect(ELFNeeded.libraries(of: "/proc/self/maps") == nil)
    #expect(ELFNeeded.libraries(of: "/no/such/file") == nil)
  }

  @Test func theSymbolReaderFindsFullFoundationAndICUWhereTheyAre() throws {
    let runner = try #require(ELFNeeded.symbolNames(of: "/proc/self/exe"))
    #expect(Self.names(runner, include: "$s10Foundation"), "the test runner calls full Foundation")
    #expect(!Self.names(runner, include: "$s10FoundationNoSuchSymbol"))
    let icu = try #require(ELFNeeded.symbolNames(of: try Self.runtimeFolder() + "/lib_FoundationICU.so"))
    #expect(Self.names(icu, include: "_ZN6icu_") && Self.names(icu, include: "icudt"))
    #expect(ELFNeeded.symbolNames(of: "/proc/self/maps") == nil)
  }

  @Test func theServerBinaryLinksNoFullFoundationEvenIndirectly() throws {
    let binary = EmulatorProcess.executableURL().path
    let direct = try #require(ELFNeeded.libraries(of: binary))
    let all = try Self.allNeeded(binary, runtime: try Self.runtimeFolder())
    #expect(all.isDisjoint(with: Self.fullFoundation), "\(all.intersection(Self.fullFoundation).sorted())")
    #expect(direct.contains("libc.so.6"), "\(direct)")
    let symbols = try #require(ELFNeeded.symbolNames(of: binary), "the binary has no symbol table")
    for prefix in Self.fullFoundationSymbols {
      #expect(!Self.names(symbols, include: prefix), "the binary has symbols of full Foundation or ICU: \(prefix)")
    }
    #expect(Self.names(symbols, include: "$s20FoundationEssentials"), "the binary uses FoundationEssentials")
    #if os(Linux)
      let swiftLibraries = direct.filter {
        $0.hasPrefix("libswift") || $0.contains("Foundation") || $0.hasPrefix("libdispatch")
      }
      #expect(swiftLibraries.isEmpty, "the runtime is linked in (Package.swift), yet it needs \(swiftLibraries)")
    #endif
  }

  /// The functions of config/link/hot-functions.txt come first in the binary's code (Package.swift
  /// hands the file to the linker): at least 30% of their bytes lie in the first tenth of the
  /// code. (Measured: 54% with the list, 1% without it. It is not all of them: the linker moves
  /// sections, and a section the toolchain's libraries or this code share between several
  /// functions moves whole, or not at all.) Read with `nm`; Linux only (the flag is lld's).
  @Test func theHotFunctionsLeadTheBinarysCode() throws {
    #if os(Linux)
      let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
      let list = try String(contentsOf: root.appendingPathComponent("config/link/hot-functions.txt"), encoding: .utf8)
      let hot = Set(list.split(separator: "\n").filter { !$0.hasPrefix("#") })
      let nm = Process()
      nm.executableURL = URL(fileURLWithPath: "/usr/bin/nm")
      nm.arguments = ["-n", "-S", "--defined-only", EmulatorProcess.executableURL().path]
      let pipe = Pipe()
      nm.standardOutput = pipe
      try nm.run()
      let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
      nm.waitUntilExit()
      // Functions: address, size, whether listed.
      let functions = output.split(separator: "\n").compactMap { line -> (UInt64, UInt64, Bool)? in
        let fields = line.split(separator: " ")
        guard fields.count == 4, "tTwW".contains(fields[2]), let address = UInt64(fields[0], radix: 16),
          let size = UInt64(fields[1], radix: 16)
        else { return nil }
        return (address, size, hot.contains(fields[3]))
      }
      let start = try #require(functions.map(\.0).min())
      let end = try #require(functions.map { $0.0 + $0.1 }.max())
      let tenth = start + (end - start) / 10
      let listed = functions.filter(\.2).reduce(0) { $0 + $1.1 }
      let early = functions.filter { $0.2 && $0.0 < tenth }.reduce(0) { $0 + $1.1 }
      try #require(listed > 100_000, "only \(listed) bytes of the listed functions are in this build")
      #expect(early * 10 >= listed * 3, "\(early) of the listed functions' \(listed) bytes lie in the first tenth")
    #endif
  }

  /// A running server maps no Swift or Foundation shared library, and no ICU data.
  @Test func aRunningServerMapsNoFoundationOrICU() throws {
    let server = try EmulatorProcess(arguments: ["--in-memory"])
    defer { _ = server.terminate() }
    let maps = try String(contentsOfFile: "/proc/\(server.process.processIdentifier)/maps", encoding: .utf8)
    let files = Set(
      maps.split(separator: "\n").compactMap { line in
        line.split(separator: " ", omittingEmptySubsequences: true).dropFirst(5).first
      })
    #expect(files.contains { $0.hasSuffix("/storage-emulator") }, "\(files.sorted())")
    let loaded = files.filter { $0.contains("Foundation") || $0.contains("icu") || $0.contains("ICU") }
    #expect(loaded.isEmpty, "\(loaded.sorted())")
    #if os(Linux)
      #expect(!files.contains { $0.contains("libswiftCore") }, "\(files.sorted())")
    #endif
  }
}
