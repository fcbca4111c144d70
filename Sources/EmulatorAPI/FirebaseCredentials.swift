import EmulatorRules
import EmulatorStorage
import EmulatorSupport

/// Who a Firebase request says it is, from its `Authorization` header.
///
/// `Bearer owner` and `Firebase owner` are the admin bypass (the Firebase emulator's convention).
/// `Firebase <jwt>` and `Bearer <jwt>` are decoded without checking any signature, as the
/// Firebase emulator does (Auth emulator tokens are unsigned, `alg: none`): `request.auth` is
/// `{uid: user_id claim (or sub), token: all claims}`. Anything that does not decode to a JSON
/// object is `null`, never an error.
enum FirebaseCredentials: Equatable {
  case admin
  case user(RulesValue)

  static func == (lhs: FirebaseCredentials, rhs: FirebaseCredentials) -> Bool {
    switch (lhs, rhs) {
    case (.admin, .admin): true
    case (.user(let a), .user(let b)): a.rulesEquals(b)
    default: false
    }
  }

  /// The largest token decoded; longer ones are `null` auth.
  static let maxTokenBytes = 16 * 1024

  /// Decoded headers by their text: clients send the same ID token for an hour, and decoding
  /// one costs more than evaluating typical rules. Bounded (cleared when full).
  private static let cache = Locked<[String: FirebaseCredentials]>([:])
  static let cacheLimit = 1024

  /// Through the cache.
  static func of(_ authorization: String?) -> FirebaseCredentials {
    guard let authorization, !authorization.isEmpty else { return .user(.null) }
    if let hit = cache.withLock({ $0[authorization] }) { return hit }
    let decoded = FirebaseCredentials(authorization: authorization)
    cache.withLock {
      if $0.count >= cacheLimit { $0.removeAll(keepingCapacity: true) }
      $0[authorization] = decoded
    }
    return decoded
  }

  init(authorization: String?) {
    guard let header = authorization?.trimmingWhitespace(), !header.isEmpty else {
      self = .user(.null)
      return
    }
    if header == "Bearer owner" || header == "Firebase owner" {
      self = .admin
      return
    }
    let parts = header.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
    guard parts.count == 2, parts[0] == "Bearer" || parts[0] == "Firebase" else {
      self = .user(.null)
      return
    }
    self = .user(Self.decode(jwt: parts[1].trimmingWhitespace()))
  }

  /// `request.auth` for a JWT: the payload's claims, or `null`.
  static func decode(jwt: String) -> RulesValue {
    guard jwt.utf8.count <= maxTokenBytes else { return .null }
    let sections = jwt.split(separator: ".", omittingEmptySubsequences: false)
    guard sections.count >= 2, let payload = base64URLDecode(sections[1]),
      case .object(let members)? = try? JSONValue.parse(payload)
    else { return .null }
    var claims: [String: RulesValue] = [:]
    for (key, value) in members { claims[key] = rulesValue(value) }
    var uid = RulesValue.null
    if case .string(let id)? = claims["user_id"] {
      uid = .string(id)
    } else if case .string(let id)? = claims["sub"] {
      uid = .string(id)
    }
    return .map(["uid": uid, "token": .map(claims)])
  }

  /// Base64url (either alphabet, padding optional); nil on any other byte.
  static func base64URLDecode(_ text: Substring) -> [UInt8]? {
    var output: [UInt8] = []
    output.reserveCapacity(text.utf8.count * 3 / 4)
    var buffer: UInt32 = 0
    var bits = 0
    for byte in text.utf8 {
      let value: UInt32
      switch byte {
      case UInt8(ascii: "A")...UInt8(ascii: "Z"): value = UInt32(byte - UInt8(ascii: "A"))
      case UInt8(ascii: "a")...UInt8(ascii: "z"): value = UInt32(byte - UInt8(ascii: "a")) + 26
      case UInt8(ascii: "0")...UInt8(ascii: "9"): value = UInt32(byte - UInt8(ascii: "0")) + 52
      case UInt8(ascii: "-"), UInt8(ascii: "+"): value = 62
      case UInt8(ascii: "_"), UInt8(ascii: "/"): value = 63
      case UInt8(ascii: "="): continue
      default: return nil
      }
      buffer = buffer << 6 | value
      bits += 6
      if bits >= 8 {
        bits -= 8
        output.append(UInt8(truncatingIfNeeded: buffer >> UInt32(bits)))
      }
    }
    return output
  }

  /// JSON claims as rules values: integral numbers are ints, others floats.
  static func rulesValue(_ json: JSONValue) -> RulesValue {
    switch json {
    case .null: return .null
    case .bool(let flag): return .bool(flag)
    case .number(let text):
      if let value = Int64(text) { return .int(value) }
      return Double(text).map { .float($0) } ?? .null
    case .string(let text): return .string(text)
    case .array(let values): return .list(values.map(rulesValue))
    case .object(let members):
      var map: [String: RulesValue] = [:]
      for (key, value) in members { map[key] = rulesValue(value) }
      return .map(map)
    }
  }
}

extension ObjectMetadata {
  /// The object as rules see it (`resource`, `request.resource`). Unset optional strings are
  /// absent (reading one is an error, so the condition is false); `metadata` is always a map.
  /// `md5Hash` and `crc32c` are base64, as in the GCS resource; they are left out of a proposed
  /// upload, whose bytes are hashed only when stored.
  func rulesResource(includeHashes: Bool = true) -> RulesValue {
    var map: [String: RulesValue] = [
      "name": .string(name), "bucket": .string(bucket), "size": .int(size),
      "metageneration": .int(metageneration),
      "timeCreated": .timestamp(milliseconds: timeCreated), "updated": .timestamp(milliseconds: updated),
      "metadata": .map(custom.mapValues { .string($0) }),
    ]
    if includeHashes {
      map["generation"] = .int(generation)
      map["etag"] = .string(etag)
      map["crc32c"] = .string(crc32cBase64)
      if let md5 = md5Base64 { map["md5Hash"] = .string(md5) }
    }
    for (key, value) in [
      ("contentType", contentType), ("contentEncoding", contentEncoding), ("contentDisposition", contentDisposition),
      ("contentLanguage", contentLanguage), ("cacheControl", cacheControl),
    ] {
      if let value { map[key] = .string(value) }
    }
    return .map(map)
  }
}

/// The rules view of stored objects by version: an object read again and again (the common
/// case) is turned into a rules value once. Bounded (cleared when full).
enum RulesViewCache {
  /// An object version: its path, and the numbers that change with every new generation or
  /// metadata change.
  struct Key: Hashable {
    var bucket: String
    var name: String
    var version: Version
  }

  struct Version: Hashable {
    var generation: Int64
    var metageneration: Int64
    var updated: Int64
  }

  private static let entries = Locked<[Key: RulesValue]>([:])
  static let limit = 4096

  static func view(of object: ObjectMetadata) -> RulesValue {
    let version = Version(generation: object.generation, metageneration: object.metageneration, updated: object.updated)
    let key = Key(bucket: object.bucket, name: object.name, version: version)
    if let hit = entries.withLock({ $0[key] }) { return hit }
    let view = object.rulesResource()
    entries.withLock {
      if $0.count >= limit { $0.removeAll(keepingCapacity: true) }
      $0[key] = view
    }
    return view
  }
}
