import Testing

@testable import EmulatorStorage

/// The bucket's chunked name list against the plainest model of it: a sorted array of distinct
/// names. Enough operations that chunks split (more than `chunkLimit` names) and join again.
@Suite struct SortedKeysTests {
  private static func key(_ number: Int) -> ObjectKey {
    // Zero-padded, so byte order is numeric order.
    let digits = Array(String(number).utf8)
    return ObjectKey(bytes: Array(repeating: UInt8(ascii: "0"), count: 6 - digits.count) + digits)
  }

  private static func expectSame(_ keys: SortedKeys, _ model: [ObjectKey], sourceLocation: SourceLocation = #_sourceLocation) {
    #expect(keys.count == model.count, sourceLocation: sourceLocation)
    #expect(keys.elementsEqual(model), "forward order", sourceLocation: sourceLocation)
    #expect(keys.reversed().elementsEqual(model.reversed()), "backward order", sourceLocation: sourceLocation)
  }

  @Test func randomInsertsAndRemovesMatchASortedArray() {
    var generator = SystemRandomNumberGenerator()
    var keys = SortedKeys()
    var model: [ObjectKey] = []
    for round in 0..<20_000 {
      let key = Self.key(Int.random(in: 0..<3_000, using: &generator))
      let at = model.firstIndex { !($0 < key) } ?? model.count
      let present = at < model.count && model[at] == key
      // Mostly inserts at first, then mostly removes, so chunks both split and join.
      if Int.random(in: 0..<10, using: &generator) < (round < 10_000 ? 8 : 2) {
        let inserted = keys.insert(key)
        #expect(inserted == !present)
        if !present { model.insert(key, at: at) }
      } else {
        let removed = keys.remove(key)
        #expect(removed == present)
        if present { model.remove(at: at) }
      }
      if round % 1_000 == 0 { Self.expectSame(keys, model) }
    }
    Self.expectSame(keys, model)
    for number in stride(from: 0, to: 3_000, by: 7) {
      let key = Self.key(number)
      let at = model.firstIndex { !($0 < key) } ?? model.count
      let position = keys.lowerBound(key)
      #expect(keys.distance(from: keys.startIndex, to: position) == at, "lower bound of \(number)")
      #expect(keys.contains(key) == (at < model.count && model[at] == key))
      let after = keys.position(after: key)
      let expected = at < model.count && model[at] == key ? at + 1 : at
      #expect(keys.distance(from: keys.startIndex, to: after) == expected, "position after \(number)")
    }
  }

  @Test func insertsBeforeEveryNameSplitChunksAndKeepOrder() {
    var keys = SortedKeys()
    for number in (0..<5_000).reversed() { keys.insert(Self.key(number)) }
    Self.expectSame(keys, (0..<5_000).map(Self.key))
    #expect(keys.lowerBound(Self.key(9_999)) == keys.endIndex)
    #expect(keys[keys.lowerBound(Self.key(0))] == Self.key(0))
  }

  @Test func removingEveryNameLeavesAnEmptyList() {
    var keys = SortedKeys(sorted: (0..<2_000).map(Self.key))
    for number in (0..<2_000).shuffled() {
      let removed = keys.remove(Self.key(number))
      #expect(removed)
    }
    #expect(keys.isEmpty)
    #expect(keys.startIndex == keys.endIndex)
    let removedAgain = keys.remove(Self.key(1))
    #expect(!removedAgain)
    let inserted = keys.insert(Self.key(1))
    #expect(inserted)
    Self.expectSame(keys, [Self.key(1)])
  }

  @Test func mergingInterleavesInByteOrder() {
    let evens = SortedKeys(sorted: stride(from: 0, to: 3_000, by: 2).map(Self.key))
    let odds = stride(from: 1, to: 3_001, by: 2).map(Self.key)
    Self.expectSame(evens.merging(odds), (0..<3_000).map(Self.key))
    Self.expectSame(evens.merging([]), stride(from: 0, to: 3_000, by: 2).map(Self.key))
  }
}
