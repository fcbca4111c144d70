import Foundation
import Testing

/// The server links FoundationEssentials, never full Foundation and its ICU data (issue #22:
/// those cost every instance megabytes of memory and milliseconds of start-up). Read from the
/// built binary's ELF headers, directly and through the libraries it names.
@Suite struct LinkedLibrariesTests {
  static let fullFoundation: Set = [
    "libFoundation.so", "lib_FoundationICU.so", "libFoundationInternationalization.so",
    "libFoundationNetworking.so", "libFoundationXML.so",
  ]

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

  @Test func theServerBinaryLinksNoFullFoundationEvenIndirectly() throws {
    let binary = EmulatorProcess.executableURL().path
    let direct = try #require(ELFNeeded.libraries(of: binary))
    #expect(direct.contains("libswiftCore.so"), "\(direct)")
    let all = try Self.allNeeded(binary, runtime: try Self.runtimeFolder())
    #expect(all.isDisjoint(with: Self.fullFoundation), "\(all.intersection(Self.fullFoundation).sorted())")
  }
}
