import Foundation

/// What a 64-bit little-endian ELF file links. `libraries`: the `DT_NEEDED` entries, the shared
/// libraries it names itself (what `readelf -d` lists as NEEDED), read from the section headers,
/// the `.dynamic` section and the string table it links to. `symbolNames`: its symbols' names.
enum ELFNeeded {
  static func libraries(of path: String) -> [String]? {
    guard let file = Sections(path) else { return nil }
    let (read, section, sectionCount) = (file.read, file.section, file.count)
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

  /// The names in the string tables of the symbol tables (`.symtab` and `.dynsym`), each
  /// preceded by a zero byte: defined and undefined symbols alike. Nil for anything that is not
  /// a 64-bit little-endian ELF file or has neither table.
  static func symbolNames(of path: String) -> [UInt8]? {
    guard let file = Sections(path) else { return nil }
    var names: [UInt8] = []
    var found = false
    for index in 0..<file.count {
      // SHT_SYMTAB, SHT_DYNSYM
      guard let symbols = file.section(index), symbols.type == 2 || symbols.type == 11 else { continue }
      guard symbols.link < file.count, let strings = file.section(symbols.link), strings.size < 1 << 30,
        let table = file.read(strings.offset, Int(strings.size))
      else { return nil }
      names += [0] + table
      found = true
    }
    return found ? names : nil
  }

  /// An open ELF file's section headers.
  private final class Sections {
    let file: FileHandle
    private(set) var sectionsAt: UInt64
    private(set) var size: Int
    private(set) var count: Int

    init?(_ path: String) {
      guard let file = FileHandle(forReadingAtPath: path) else { return nil }
      self.file = file
      sectionsAt = 0
      size = 0
      count = 0
      guard let header = read(0, 64), header[0..<4] == [0x7F, 0x45, 0x4C, 0x46], header[4] == 2, header[5] == 1
      else { return nil }
      sectionsAt = ELFNeeded.integer(header, 0x28, 8)
      size = Int(ELFNeeded.integer(header, 0x3A, 2))
      count = Int(ELFNeeded.integer(header, 0x3C, 2))
      guard size >= 64, count > 0 else { return nil }
    }

    deinit { try? file.close() }

    func read(_ offset: UInt64, _ count: Int) -> [UInt8]? {
      guard (try? file.seek(toOffset: offset)) != nil, let data = try? file.read(upToCount: count),
        data.count == count
      else { return nil }
      return Array(data)
    }

    func section(_ index: Int) -> (type: UInt64, offset: UInt64, size: UInt64, link: Int)? {
      guard let bytes = read(sectionsAt + UInt64(index * size), 64) else { return nil }
      return (
        ELFNeeded.integer(bytes, 4, 4), ELFNeeded.integer(bytes, 0x18, 8), ELFNeeded.integer(bytes, 0x20, 8),
        Int(ELFNeeded.integer(bytes, 0x28, 4))
      )
    }
  }

  /// The little-endian unsigned integer of `count` bytes at `offset`.
  static func integer(_ bytes: [UInt8], _ offset: Int, _ count: Int) -> UInt64 {
    var value: UInt64 = 0
    for index in (0..<count).reversed() { value = value << 8 | UInt64(bytes[offset + index]) }
    return value
  }
}
