import Foundation
import Testing

@testable import EmulatorStorage

/// `matchGlob`: GCS's syntax, and the attacks a pattern can make (exponential backtracking,
/// unbounded recursion, huge patterns), refused or matched in time linear in the name.
@Suite struct GlobTests {
  func matches(_ pattern: String, _ name: String) throws -> Bool {
    try Glob(pattern: pattern).matches(name)
  }

  @Test(arguments: [
    ("*", "abc", true), ("*", "a/b", false), ("*", "", true),
    ("a*", "a/", false), ("**", "a/b/c", true), ("**", "", true),
    ("dir/*", "dir/x", true), ("dir/*", "dir/", true), ("dir/*", "dir/x/y", false),
    ("dir/**", "dir/x/y", true), ("**/{x,z}", "dir/sub/x", true), ("**/{x,z}", "dir2/z", true),
    ("**/{x,z}", "dir/y", false), ("**.txt", "a/b.txt", true), ("*.txt", "a/b.txt", false),
    ("?", "a", true), ("?", "/", false), ("?", "é", true), ("?", "ab", false), ("a?c", "abc", true),
    ("[abc]", "b", true), ("[abc]", "d", false), ("[a-c]x", "cx", true), ("[!a-c]", "d", true),
    ("[!a-c]", "b", false), ("[^a]", "b", true), ("[]a]", "]", true), ("[!/]", "/", false),
    ("[é]", "é", true), ("[à-ê]", "é", true), ("[a-z]", "é", false),
    ("{a,b}c", "bc", true), ("{a,{b,c}d}", "cd", true), ("{a,{b,c}d}", "c", false), ("x{,y}", "x", true),
    ("\\*", "*", true), ("\\*", "a", false), ("a\\{b", "a{b", true),
    ("日本*", "日本語", true), ("*語", "日本語", true), ("日?語", "日本語", true),
    ("***", "a/b", true), ("a*b*c", "axxbyyc", true), ("a*b*c", "axxbyy", false),
  ])
  func globSemanticsMatchGCS(_ pattern: String, _ name: String, _ expected: Bool) throws {
    #expect(try matches(pattern, name) == expected, "\(pattern) against \(name)")
  }

  @Test func namesThatDifferOnlyInNormalisationAreMatchedByTheirBytes() throws {
    let composed = "caf\u{E9}"
    let decomposed = "cafe\u{301}"
    #expect(try matches(composed, composed))
    #expect(try !matches(composed, decomposed))
    #expect(try matches("caf?", composed))
    #expect(try !matches("caf?", decomposed), "e and a combining accent are two characters")
    #expect(try matches("caf??", decomposed))
  }

  @Test func bytesThatAreNotUTF8AreCharactersOfTheirOwn() throws {
    let glob = try Glob(patternBytes: [0x61, 0x3F, 0x62])  // a?b
    #expect(glob.matches([0x61, 0xFF, 0x62]))
    #expect(glob.matches([0x61, 0xC3, 0xA9, 0x62]))
    #expect(glob.matches([0x61, 0xC3, 0x62]), "a lone lead byte is one character")
    #expect(try Glob(patternBytes: [0xFF]).matches([0xFF]))
  }

  @Test(arguments: ["[", "[a", "[!", "{", "{a,b", "a\\", "a}", "a,b}", "[b-a]", "{a}}"])
  func malformedPatternsAreRefusedWithAClearError(_ pattern: String) {
    #expect(throws: StorageError.self) { try Glob(pattern: pattern) }
  }

  @Test func aTopLevelCommaIsALiteral() throws {
    #expect(try matches("a,b", "a,b"))
  }

  @Test func longPatternIsRefused() throws {
    let limit = String(repeating: "a", count: Glob.maxPatternBytes)
    #expect(try matches(limit, limit))
    do {
      _ = try Glob(pattern: limit + "a")
      Issue.record("a pattern over the limit was compiled")
    } catch {
      guard case .invalid(let message) = error else { throw error }
      #expect(message.contains("\(Glob.maxPatternBytes)"))
    }
  }

  @Test func deepBraceNestingIsRefused() throws {
    let ok = String(repeating: "{", count: Glob.maxNesting) + "a" + String(repeating: "}", count: Glob.maxNesting)
    #expect(try matches(ok, "a"))
    let deep =
      String(repeating: "{", count: Glob.maxNesting + 1) + "a" + String(repeating: "}", count: Glob.maxNesting + 1)
    #expect(throws: StorageError.self) { try Glob(pattern: deep) }
    // As deep as the length limit allows, unclosed: refused without deep recursion.
    #expect(throws: StorageError.self) { try Glob(pattern: String(repeating: "{", count: Glob.maxPatternBytes)) }
  }

  /// The pattern that made the old backtracking matcher take exponential time: stars that can
  /// each take any share of a long run of `a`s, and a final `b` that never matches.
  @Test func manyStarsAgainstALongNameTakeLinearSteps() throws {
    let pattern = String(repeating: "a*", count: 40) + "b"
    let glob = try Glob(pattern: pattern)
    var steps: [Int] = []
    for length in [250, 500, 1000] {
      var count = 0
      #expect(!glob.matches(Array(repeating: UInt8(ascii: "a"), count: length), steps: &count))
      steps.append(count)
      // Never more than every state visited twice per character.
      #expect(count <= 2 * (glob.program.count + 1) * (length + 1))
    }
    // Doubling the name doubles the work (within a margin), never squares it.
    #expect(Double(steps[1]) <= 2.2 * Double(steps[0]))
    #expect(Double(steps[2]) <= 2.2 * Double(steps[1]))
    #expect(steps[2] >= steps[0] * 3, "the count does measure the work")
  }

  @Test func manyGlobstarsAndAlternativesStayLinear() throws {
    let pattern = String(repeating: "**{a,b,c}", count: 30) + "x"
    let glob = try Glob(pattern: pattern)
    var small = 0
    var large = 0
    let unit = Array("ab/c".utf8)
    #expect(!glob.matches(Array(repeating: unit, count: 100).flatMap { $0 }, steps: &small))
    #expect(!glob.matches(Array(repeating: unit, count: 200).flatMap { $0 }, steps: &large))
    #expect(Double(large) <= 2.2 * Double(small))
  }

  @Test func aGlobListOfALargeBucketReleasesTheIndexLockBetweenChunks() throws {
    let store = try ObjectStore(backend: MemoryBackend())
    _ = try store.createBucket("bkt")
    for index in 0..<2000 { _ = try store.insert(bucket: "bkt", name: String(format: "n%05d", index), data: []) }
    let chunks = Locked<[Int]>([])
    let inserted = Locked(false)
    store.listChunkObserver.withLock { observer in
      observer = { [store] size in
        chunks.withLock { $0.append(size) }
        // A write between two chunks: it would deadlock if the listing held the index lock.
        if !inserted.withLock({ $0 }) {
          inserted.withLock { $0 = true }
          _ = try? store.insert(bucket: "bkt", name: "n99999", data: [])
        }
      }
    }
    var query = ListQuery()
    query.matchGlob = "*7"
    let page = try store.list(bucket: "bkt", query: query)
    #expect(page.items.count == 200)
    #expect(page.items.map(\.name).allSatisfy { $0.hasSuffix("7") })
    #expect(page.nextPageToken == nil)
    let sizes = chunks.withLock { $0 }
    #expect(sizes.count >= 2000 / 256)
    #expect(sizes.allSatisfy { $0 <= 256 })
    // A page that fills up in the first chunk still says where to go on.
    query.maxResults = 5
    let first = try store.list(bucket: "bkt", query: query)
    #expect(first.items.map(\.name) == ["n00007", "n00017", "n00027", "n00037", "n00047"])
    query.pageToken = first.nextPageToken
    #expect(try store.list(bucket: "bkt", query: query).items.first?.name == "n00057")
  }
}

extension GlobTests {
  /// However large the bucket and costly the pattern, one page does bounded work: past its step
  /// budget it ends early with a token, and following the tokens finds every match.
  @Test func aCostlyGlobOverManyNamesEndsThePageEarlyWithAToken() throws {
    let store = try ObjectStore(backend: MemoryBackend())
    let long = String(repeating: "a", count: 300)
    for index in 0..<300 { _ = try store.insert(bucket: "bkt", name: long + String(format: "%03d", index), data: []) }
    var query = ListQuery()
    query.matchGlob = String(repeating: "a*", count: 30) + "{7,9}"
    var pages = 0
    var found: [String] = []
    repeat {
      let page = try store.list(bucket: "bkt", query: query, globStepBudget: 200_000)
      found += page.items.map(\.name)
      query.pageToken = page.nextPageToken
      pages += 1
    } while query.pageToken != nil && pages < 1000
    #expect(pages > 5, "the budget ended pages early")
    let expected = (0..<300).filter { $0 % 10 == 7 || $0 % 10 == 9 }.map { long + String(format: "%03d", $0) }
    #expect(found == expected)
  }
}
