import EmulatorSupport
import Foundation
import Testing

/// The helpers that stand in for full Foundation in the server, checked against Foundation
/// itself (which the tests may import) on the inputs the server passes and on awkward ones.
@Suite struct FoundationReplacementTests {
  @Test func fixedDecimalsMatchPrintf() {
    let values: [Double] = [
      0, -0.0, 0.004, 0.005, 0.015, 0.125, 0.375, 1.005, 2.5, 3.14159, 9.995, 12.3456, 99.99, 1023.95,
      123_456.789, -1.5, -0.001, 1e12 + 0.25, 0.0004999, 59.9999,
    ]
    for value in values {
      for digits in 0...3 {
        #expect(
          DecimalText.fixed(value, digits: digits) == String(format: "%.\(digits)f", value),
          "\(value) with \(digits) digits")
      }
    }
    var generator = SystemRandomNumberGenerator()
    for _ in 0..<2000 {
      let value = Double.random(in: 0..<100_000, using: &generator)
      #expect(DecimalText.fixed(value, digits: 2) == String(format: "%.2f", value), "\(value)")
    }
    #expect(DecimalText.fixed(.nan, digits: 2) == "nan")
    #expect(DecimalText.fixed(-.infinity, digits: 1) == "-inf")
  }

  @Test func paddedHexMatchesPrintf() {
    for value: UInt32 in [0, 1, 0xabc, 0xdead_beef, .max] {
      #expect(Hex.padded(value, width: 8) == String(format: "%08x", value))
    }
  }

  @Test func trimsTheScalarsFoundationTrims() {
    let samples = [
      "", "   ", " a ", "\ta b\t", "\u{00A0}x\u{3000}", "\n x \r\n", "\u{2028}y\u{0085}", " \u{301}e ",
      "\"etag\" ", "\u{000B}v\u{000C}",
    ]
    for text in samples {
      #expect(text.trimmingWhitespace() == text.trimmingCharacters(in: .whitespaces), "\(Array(text.unicodeScalars))")
      #expect(
        text.trimmingWhitespaceAndNewlines() == text.trimmingCharacters(in: .whitespacesAndNewlines),
        "\(Array(text.unicodeScalars))")
      #expect(
        text.trimmingScalars(where: { $0 == "\"" || $0 == " " })
          == text.trimmingCharacters(in: CharacterSet(charactersIn: "\" ")))
    }
    #expect(" a b "[...].trimmingWhitespace() == "a b")
    // One known difference: Foundation on Linux also trims U+200B (zero width space, category
    // Cf, not a space separator); the server trims only what the documentation names.
    #expect("\u{200B}z".trimmingWhitespace() == "\u{200B}z")
  }

  @Test func pathComponentsMatchNSString() {
    #expect(PathText.parent("") == "" && PathText.lastComponent("") == "")
    // NSString's answers, written out (corelibs' NSString path methods trap on some inputs).
    let cases = [
      ("/a/b", "/a", "b"), ("/a/b/", "/a", "b"), ("/a", "/", "a"), ("/", "/", "/"), ("b", "", "b"),
      ("a/b", "a", "b"), ("/data/buckets/x/.obj.json", "/data/buckets/x", ".obj.json"),
    ]
    for (path, parent, last) in cases {
      #expect(PathText.parent(path) == parent, "\(path)")
      #expect(PathText.lastComponent(path) == last, "\(path)")
    }
  }

  @Test func errorTextGivesTheSystemReasonAndPath() {
    let missing = "/no/such/folder/\(UUID().uuidString)"
    do {
      _ = try FileManager.default.contentsOfDirectory(atPath: missing)
      Issue.record("listing \(missing) should fail")
    } catch {
      let text = ErrorText.describe(error)
      #expect(text.contains("No such file or directory"), "\(text)")
      #expect(text.contains(missing), "\(text)")
    }
    #expect(ErrorText.describe(POSIXError(.EACCES)) == "Permission denied")
  }

  @Test func theLockExcludesAndTheConditionWakesAWaiter() {
    let lock = PosixLock()
    let counter = UnsafeMutablePointer<Int>.allocate(capacity: 1)
    counter.initialize(to: 0)
    defer { counter.deallocate() }
    nonisolated(unsafe) let shared = counter
    let done = PosixCondition()
    nonisolated(unsafe) var finished = 0
    for _ in 0..<4 {
      BackgroundThread.start(name: "storage-emulator.test") {
        for _ in 0..<10_000 { lock.withLock { shared.pointee += 1 } }
        done.lock()
        finished += 1
        done.broadcast()
        done.unlock()
      }
    }
    done.lock()
    while finished < 4 { done.wait() }
    done.unlock()
    #expect(lock.withLock { shared.pointee } == 40_000)
  }

  @Test func aThreadGetsTheLastPartOfALongName() {
    let done = PosixCondition()
    nonisolated(unsafe) var seen: String?
    BackgroundThread.start(name: "storage-emulator.loop7", stackSize: 3 << 20) {
      let name = (try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)) ?? ""
      done.lock()
      seen = name.trimmingCharacters(in: .newlines)
      done.broadcast()
      done.unlock()
    }
    done.lock()
    while seen == nil { done.wait() }
    done.unlock()
    #expect(seen == "loop7")
  }

  #if canImport(Glibc)
    /// The snapshot thread's lower priority is its own: the thread that starts it keeps its nice
    /// value.
    @Test func aLoweredThreadRunsAtNiceTenAndOthersKeepTheirs() {
      let done = PosixCondition()
      nonisolated(unsafe) var seen: Int32?
      let before = getpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0)
      BackgroundThread.start(name: "storage-emulator.nice") {
        BackgroundThread.lowerCurrentThreadPriority()
        let nice = getpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0)
        done.lock()
        seen = nice
        done.broadcast()
        done.unlock()
      }
      done.lock()
      while seen == nil { done.wait() }
      done.unlock()
      #expect(seen == min(before + 10, 19))
      #expect(getpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0) == before)
    }
  #endif
}
