import EmulatorSupport

/// Where a page ended. Encoded as an opaque, URL-safe token (base64url of a tag byte and the name).
enum ListCursor {
  case afterKey([UInt8])
  case afterPrefix([UInt8])
  /// After this generation of this name (a listing of every generation).
  case afterVersion([UInt8], generation: Int64)

  init?(token: String) {
    var text = token.replacing("-", with: "+").replacing("_", with: "/")
    while text.count % 4 != 0 { text += "=" }
    guard let data = Data(base64Encoded: text), let tag = data.first else { return nil }
    let rest = Array(data.dropFirst())
    switch tag {
    case 1: self = .afterKey(rest)
    case 2: self = .afterPrefix(rest)
    case 3:
      guard rest.count >= 8 else { return nil }
      let generation = rest.prefix(8).reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
      self = .afterVersion(Array(rest.dropFirst(8)), generation: Int64(bitPattern: generation))
    default: return nil
    }
  }

  /// With a generation cursor on `key`: the generation to resume after.
  func generation(after key: [UInt8]) -> Int64? {
    if case .afterVersion(let name, let generation) = self, name == key { return generation }
    return nil
  }

  var token: String {
    let bytes: [UInt8]
    switch self {
    case .afterKey(let key): bytes = [1] + key
    case .afterPrefix(let prefix): bytes = [2] + prefix
    case .afterVersion(let key, let generation):
      let value = UInt64(bitPattern: generation)
      bytes = [3] + (0..<8).map { UInt8(truncatingIfNeeded: value >> (56 - 8 * $0)) } + key
    }
    return Data(bytes).base64EncodedString().replacing("+", with: "-")
      .replacing("/", with: "_").replacing("=", with: "")
  }

  /// The index of the first key after this cursor.
  func position(in keys: SortedKeys) -> SortedKeys.Index {
    switch self {
    case .afterKey(let key):
      return keys.position(after: ObjectKey(bytes: key))
    case .afterVersion(let key, _):
      // The name itself again: its later generations are still to come.
      return keys.lowerBound(ObjectKey(bytes: key))
    case .afterPrefix(let prefix):
      // The smallest byte string greater than every string starting with `prefix`.
      var successor = prefix
      while let last = successor.last, last == 0xFF { successor.removeLast() }
      guard !successor.isEmpty else { return keys.endIndex }
      successor[successor.count - 1] += 1
      return keys.lowerBound(ObjectKey(bytes: successor))
    }
  }
}
