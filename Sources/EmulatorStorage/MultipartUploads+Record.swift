/// How an XML multipart upload is kept in its `UploadSpace`: `<id>.json`, the upload (this
/// record), and `<id>.<n>.part`, part `n`'s bytes. A part's size, MD5 and time are read from
/// its entry at start-up, so the record is written once, at initiate.
extension MultipartUploads {
  static func recordName(_ id: String) -> String { id + ".json" }
  static func recordTemp(_ id: String) -> String { "." + id + ".tmp" }
  static func partName(_ id: String, _ number: Int) -> String { id + "." + String(number) + ".part" }
  static func partTemp(_ id: String, _ number: Int) -> String { "." + id + "." + String(number) + ".tmp" }
  static func handOffName(_ id: String) -> String { id + ".assembled" }

  /// What an entry's name says: an upload's record, one of its parts, or something else (a
  /// temporary entry or a hand-off left by an interrupted write).
  enum EntryName: Equatable {
    case record(id: String)
    case part(id: String, number: Int)
    case leftover
  }

  static func parse(name: String) -> EntryName {
    let pieces = name.split(separator: ".", omittingEmptySubsequences: false)
    guard let first = pieces.first, !first.isEmpty, first.allSatisfy(\.isHexDigit) else { return .leftover }
    if pieces.count == 2 && pieces[1] == "json" { return .record(id: String(first)) }
    if pieces.count == 3 && pieces[2] == "part", pieces[1].count <= 5,
      pieces[1].allSatisfy({ $0.isASCII && $0.isNumber }),
      let number = Int(pieces[1]), (1...maxParts).contains(number)
    {
      return .part(id: String(first), number: number)
    }
    return .leftover
  }
}

extension MultipartUploads.Upload {
  var record: [UInt8] {
    var json = JSONWriter()
    json.beginObject()
    json.string("id", id)
    json.string("bucket", bucket)
    json.string("name", name)
    json.string("initiated", String(initiated))
    json.objectKey("patch")
    patch.writeRecord(to: &json)
    json.endObject()
    json.endObject()
    return json.bytes
  }

  /// An upload from its record; nil when it is damaged.
  init?(record bytes: [UInt8]) {
    guard let json = try? JSONValue.parse(bytes), let id = json["id"]?.stringValue,
      let bucket = json["bucket"]?.stringValue, let name = json["name"]?.stringValue,
      let initiated = json["initiated"]?.stringValue.flatMap({ Int64($0) }),
      let patch = json["patch"].flatMap(MetadataPatch.init(record:))
    else { return nil }
    self.init(id: id, bucket: bucket, name: name, patch: patch, initiated: initiated)
  }
}

extension MetadataPatch {
  /// Writes the members of this patch's record into an open object.
  func writeRecord(to json: inout JSONWriter) {
    json.objectKey("fields")
    for field in WritableField.allCases {
      switch fields[field] {
      case .set(let value)?: json.string(field.rawValue, value)
      case .remove?: json.null(field.rawValue)
      case nil: break
      }
    }
    json.endObject()
    json.bool("clearCustom", clearCustom)
    json.objectKey("custom")
    for (key, value) in customUpdates.sorted(by: { $0.key < $1.key }) {
      if let value { json.string(key, value) } else { json.null(key) }
    }
    json.endObject()
    let (mode, list): (String, [String]) =
      switch tokens {
      case .keep: ("keep", [])
      case .replace(let list): ("replace", list)
      case .add(let list): ("add", list)
      }
    json.string("tokens", mode)
    json.beginArray("tokenList")
    for token in list { json.string(token) }
    json.endArray()
  }

  /// A patch from its record; nil when it is damaged.
  init?(record: JSONValue) {
    guard case .object(let fieldMembers)? = record["fields"], case .object(let customMembers)? = record["custom"],
      case .array(let tokenValues)? = record["tokenList"], let mode = record["tokens"]?.stringValue
    else { return nil }
    self.init()
    for (key, value) in fieldMembers {
      guard let field = WritableField(rawValue: key) else { return nil }
      switch value {
      case .string(let text): fields[field] = .set(text)
      case .null: fields[field] = .remove
      default: return nil
      }
    }
    for (key, value) in customMembers {
      switch value {
      case .string(let text): customUpdates[key] = .some(text)
      case .null: customUpdates[key] = .some(nil)
      default: return nil
      }
    }
    clearCustom = record["clearCustom"] == .bool(true)
    let list = tokenValues.compactMap(\.stringValue)
    guard list.count == tokenValues.count else { return nil }
    switch mode {
    case "keep": tokens = .keep
    case "replace": tokens = .replace(list)
    case "add": tokens = .add(list)
    default: return nil
    }
  }
}
