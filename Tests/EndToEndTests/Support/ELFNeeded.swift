import Foundation

/// The `DT_NEEDED` entries of a 64-bit little-endian ELF file: the shared libraries it names
/// itself (what `readelf -d` lists as NEEDED), read from the section headers, the `.dynamic`
/// section and the string table it links to. Nil for anything that is not such a file.
enum ELFNeeded {
  static func libraries(of path: String) -> [String]? {
    guard let file = FileHandle(forReadingAtPath: path) else { return nil }
    defer { try? file.close() }
    func read(_ offset: UInt64, _ count: Int) -> [UInt8]? {
      guard (try? file.seek(toOffset: offset)) != nil, let data = try? file.read(upToCount: count),
        data.count == count
      else { return nil }
      return Array(data)
    }
    guard let header = read(0, 64), header[0..<4] == [0x7F, 0x45, 0x4C, 0x46], header[4] == 2, header[5] == 1
    else { return nil }
    let sectionsAt = integer(header, 0x28, 8)
    let sectionSize = Int(integer(header, 0x3A, 2))
    let sectionCount = Int(integer(header, 0x3C, 2))
    guard sectionSize >= 64, sectionCount > 0 else { return nil }
    func section(_ index: Int) -> (type: UInt64, offset: UInt64, size: UInt64, link: Int)? {
      guard let bytes = read(sectionsAt + UInt64(index * sectionSize), 64) else { return nil }
      return (integer(bytes, 4, 4), integer(bytes, 0x18, 8), integer(bytes, 0x20, 8), Int(integer(bytes, 0x28, 4)))
    }
    for index in 0..<sectionCount {
      guard let dynamic = section(index), dynamic.type == 6 else { continue }  // SHT_DYNAMIC
      guard dynamic.size < 1 << 20, let entries = read(dynamic.offset, Int(dynamic.size)),
        dynamic.link < sectionCount, let strings = section(dynamic.link), strings.size < 64 << 20,
        let table = read(strings.offset, Int(strings.size))
      else { return nil }
      var names: [String] = []
      var at = 0
      while at + 16 <= entries.count {
        let tag = integer(entries, at, 8)
        if tag == 0 { break }  // DT_NULL
        if tag == 1 {  // DT_NEEDED: an offset into the string table
          let start = Int(integer(entries, at + 8, 8))
          guard start < table.count else { return nil }
          let end = table[start...].firstIndex(of: 0) ?? table.count
          names.append(String(decoding: table[start..<end], as: UTF8.self))
        }
        at += 16
      }
      return names
    }
    return []
  }

  /// The little-endian unsigned integer of `count` bytes at `offset`.
  private static func integer(_ bytes: [UInt8], _ offset: Int, _ count: Int) -> UInt64 {
    var value: UInt64 = 0
    for index in (0..<count).reversed() { value = value << 8 | UInt64(bytes[offset + index]) }
    return value
  }
}
