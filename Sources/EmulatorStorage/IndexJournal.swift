import EmulatorSupport

/// The names of objects and buckets changed since the snapshot of its epoch: one line each,
/// appended *before* the change reaches the folder, so after any interruption the journal names
/// at least every object whose record may differ from the snapshot. A line also names the data
/// files the change creates or drops (by generation), so replaying it can remove what an
/// interrupted change left without listing the object's folder; `*` asks for that listing.
///
///     storage-emulator index journal <epoch in hex>
///     o <bucket> <object name as hex UTF-8> [<generation>|* ...]
///     b <bucket>
enum IndexJournal {
  static let headerPrefix = "storage-emulator index journal "

  /// An object compared by the bytes of its name: as Swift `String`s, a precomposed and a
  /// decomposed "é" would be one key, and replay would bring back only one of the two objects.
  struct Key: Hashable {
    var bucket: String
    var object: ObjectKey

    init(bucket: String, name: String) { self.init(bucket: bucket, object: ObjectKey(name)) }
    init(bucket: String, object: ObjectKey) {
      self.bucket = bucket
      self.object = object
    }

    var name: String { object.name }
  }

  /// The data files a replay checks for one object.
  struct DataFiles: Equatable {
    var generations: Set<Int64> = []
    /// Every data file of the object's name is checked (a listing of its folder).
    var all = false
  }

  struct Contents {
    var epoch: UInt64
    var objects: [Key: DataFiles] = [:]
    var buckets: Set<String> = []
    /// Lines after the header (a name changed N times has N lines).
    var lineCount = 0
  }

  static func header(epoch: UInt64) -> [UInt8] { Array((headerPrefix + String(epoch, radix: 16) + "\n").utf8) }

  /// `generations` nil: every data file of the name.
  static func objectLine(bucket: String, name: String, generations: [Int64]? = []) -> [UInt8] {
    var line = Array("o \(bucket) ".utf8)
    line.reserveCapacity(line.count + name.utf8.count * 2 + 40)
    for byte in name.utf8 {
      let (high, low) = Hex.digits(byte)
      line.append(high)
      line.append(low)
    }
    if let generations {
      for generation in generations { line.append(contentsOf: " \(generation)".utf8) }
    } else {
      line.append(contentsOf: " *".utf8)
    }
    line.append(10)
    return line
  }

  static func bucketLine(_ bucket: String) -> [UInt8] { Array("b \(bucket)\n".utf8) }

  /// nil when the file is missing or any complete line is malformed. A last line without its
  /// newline is ignored: that append never completed, so its change never started.
  static func read(_ path: String) -> Contents? {
    guard let bytes = IndexSnapshot.readFile(path) else { return nil }
    var lines = bytes.split(separator: 10, omittingEmptySubsequences: false)
    lines.removeLast()  // after the final newline: empty, or an unfinished append
    guard let first = lines.first else { return nil }
    let header = String(decoding: first, as: UTF8.self)
    guard header.hasPrefix(headerPrefix), let epoch = UInt64(header.dropFirst(headerPrefix.count), radix: 16) else {
      return nil
    }
    var contents = Contents(epoch: epoch)
    contents.lineCount = lines.count - 1
    for line in lines.dropFirst() {
      let fields = line.split(separator: 32, omittingEmptySubsequences: false)
      switch (fields.first.map { Array($0) }, fields.count) {
      case ([UInt8(ascii: "b")], 2):
        contents.buckets.insert(String(decoding: fields[1], as: UTF8.self))
      case ([UInt8(ascii: "o")], 3...):
        guard let name = Hex.decode(String(decoding: fields[2], as: UTF8.self)),
          String(validating: name, as: UTF8.self) != nil
        else { return nil }
        var files = DataFiles()
        for field in fields.dropFirst(3) {
          if field.elementsEqual("*".utf8) {
            files.all = true
          } else if let generation = Int64(String(decoding: field, as: UTF8.self)) {
            files.generations.insert(generation)
          } else {
            return nil
          }
        }
        let key = Key(bucket: String(decoding: fields[1], as: UTF8.self), object: ObjectKey(bytes: name))
        var merged = contents.objects[key] ?? DataFiles()
        merged.generations.formUnion(files.generations)
        merged.all = merged.all || files.all
        contents.objects[key] = merged
      default:
        return nil
      }
    }
    return contents
  }
}
