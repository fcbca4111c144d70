import EmulatorHTTP

/// Which URL surface a request came in on; it decides the JSON flavour (`Flavour`).
public enum Surface: Sendable, Equatable, CaseIterable {
  /// `/b/...`: the design card's paths, what the Node GCS client calls. GCS flavour.
  case bare
  /// `/storage/v1/b/...`. GCS flavour.
  case json
  /// `/upload/storage/v1/b/...`, and `/resumable/upload/storage/v1/b/...` where apitools (gcloud)
  /// starts resumable uploads: GCS serves both alike. GCS flavour.
  case upload
  /// `/download/storage/v1/b/...`. GCS flavour.
  case download
  /// `/v0/b/...`: the Firebase Storage API. Firebase flavour.
  case firebase
}

/// What a request path addresses.
public enum Resource: Sendable, Equatable {
  /// `/b` (and `/storage/v1/b`): the bucket collection.
  case buckets
  case bucket(String)
  /// `.../b/{bucket}/storageLayout`, which gcloud reads before it moves or deletes recursively.
  case storageLayout(String)
  /// `.../b/{bucket}/managedFolders`, which gcloud lists before it deletes a bucket recursively.
  case managedFolders(String)
  /// `.../b/{bucket}/o`: the objects of a bucket.
  case objects(bucket: String)
  case object(bucket: String, name: String)
  /// ACLs, IAM, notifications, service account, HMAC keys (`ClientResource.swift`).
  case client(ClientResource)
}

/// A POST on an object path that is an operation rather than the object itself.
public enum ObjectAction: Sendable, Equatable {
  case copyTo(source: String, bucket: String, name: String)
  case rewriteTo(source: String, bucket: String, name: String)
  case compose(destination: String)
}

public struct Route: Sendable, Equatable {
  public var surface: Surface
  public var resource: Resource
  /// Set when the raw object path ends in `/copyTo/b/{b}/o/{o}`, `/rewriteTo/b/{b}/o/{o}` or
  /// `/compose` (meaningful for POST only; other methods address the whole name).
  public var action: ObjectAction?

  /// Matches the raw (still percent-encoded) path, so `%2F` inside an object name is never taken
  /// for a separator. The object name is everything after `/o/`, decoded once; a raw `/` and `%2F`
  /// both mean `/`; `.../o/` is the object with the empty name (a 404, never a listing: the C++
  /// client reads a listing there as an object named ""). Returns nil for a path no surface has.
  public static func match(rawPath: Substring) throws(APIError) -> Route? {
    // Offsets over the path's bytes, found in one pass: this runs on every request, and each
    // `Substring` cut costs index checks (no grapheme breaking, no Foundation).
    if let project = try ClientResource.matchProject(rawPath: rawPath) {
      return Route(surface: .json, resource: .client(project))
    }
    guard let shape = rawPath.withUTF8Bytes(PathShape.init) else { return nil }
    let surface = shape.surface
    let bare = surface == .json || surface == .bare
    guard let bucketEnd = shape.bucketEnd else {
      return bare ? Route(surface: surface, resource: .buckets) : nil
    }
    guard bucketEnd > shape.bucketStart else { return nil }
    guard let bucket = shape.decode(rawPath, shape.bucketStart..<bucketEnd) else {
      throw APIError(400, .invalid, "The bucket name in the path has a malformed percent-escape.")
    }
    switch shape.tail {
    case .none:
      return bare ? Route(surface: surface, resource: .bucket(bucket)) : nil
    case .objects:
      return Route(surface: surface, resource: .objects(bucket: bucket))
    case .objectsSlash:
      // `/o/`: the upload surface's object collection, elsewhere the object with the empty name.
      if surface == .upload { return Route(surface: surface, resource: .objects(bucket: bucket)) }
    case .other:
      // The objects come first: no bucket subresource (`/storageLayout`, `/acl`…) starts with `/o`.
      guard bare else { return nil }
      let tail = shape.cut(rawPath, from: bucketEnd)
      if tail.utf8Equals("/storageLayout") { return Route(surface: surface, resource: .storageLayout(bucket)) }
      if tail.utf8Equals("/managedFolders") { return Route(surface: surface, resource: .managedFolders(bucket)) }
      if let client = try ClientResource.matchBucket(bucket, tail: tail) {
        return Route(surface: surface, resource: .client(client))
      }
      return nil
    case .object:
      break
    }
    let nameStart = bucketEnd + 3
    guard let name = shape.decode(rawPath, nameStart..<shape.count) else {
      throw APIError(
        400, .invalid, "The object name in the path has a malformed percent-escape or is not valid UTF-8.")
    }
    var route = Route(surface: surface, resource: .object(bucket: bucket, name: name))
    // An ACL (`{name}/acl…`) or an action (`/copyTo/b/…`, `/compose`) needs a raw `/` in the
    // name part; clients send a name's own `/` as `%2F`, so most names skip both searches.
    guard bare, shape.nameHasSlash else { return route }
    let nameRaw = shape.cut(rawPath, from: nameStart)
    if let client = try ClientResource.matchObject(bucket, rawName: nameRaw) {
      return Route(surface: surface, resource: .client(client))
    }
    route.action = try action(in: nameRaw)
    return route
  }

  /// Where a raw path's parts are, as byte offsets: the surface's prefix, the bucket segment and
  /// what follows it.
  private struct PathShape {
    enum Tail { case none, objects, objectsSlash, object, other }
    var surface: Surface
    var count: Int
    var bucketStart = 0
    /// nil: the path is the surface's prefix alone.
    var bucketEnd: Int?
    var tail = Tail.none
    var nameHasSlash = false

    /// The first surface whose prefix the path has, followed by nothing or by `/`.
    init?(_ bytes: UnsafeBufferPointer<UInt8>) {
      func hasPrefix(_ prefix: [UInt8]) -> Bool {
        bytes.count >= prefix.count && prefix.withUnsafeBufferPointer { bytes.holds($0, at: 0) }
      }
      guard let (prefix, surface) = Route.surfaceBytes.first(where: { prefix, _ in
        hasPrefix(prefix) && (bytes.count == prefix.count || bytes[prefix.count] == UInt8(ascii: "/"))
      }) else { return nil }
      self.surface = surface
      count = bytes.count
      guard bytes.count > prefix.count else { return }
      bucketStart = prefix.count + 1
      let end = UnsafeBufferPointer(rebasing: bytes[bucketStart...]).firstIndex(of: UInt8(ascii: "/"))
      bucketEnd = end.map { $0 + bucketStart } ?? bytes.count
      let tail = UnsafeBufferPointer(rebasing: bytes[bucketEnd!...])
      func tailIs(_ text: StaticString) -> Bool {
        text.withUTF8Buffer { tail.count == $0.count && tail.holds($0, at: 0) }
      }
      if tail.isEmpty {
        self.tail = .none
      } else if tailIs("/o") {
        self.tail = .objects
      } else if tailIs("/o/") {
        self.tail = .objectsSlash
      } else if tail.count > 3 && tail[0] == UInt8(ascii: "/") && tail[1] == UInt8(ascii: "o")
        && tail[2] == UInt8(ascii: "/")
      {
        self.tail = .object
        nameHasSlash = tail[3...].contains(UInt8(ascii: "/"))
      } else {
        self.tail = .other
      }
    }

    func decode(_ path: Substring, _ range: Range<Int>) -> String? {
      path.withUTF8Bytes { URLCoding.percentDecode(bytes: UnsafeBufferPointer(rebasing: $0[range])) }
    }

    /// The path from byte `offset` on (cut at an ASCII `/`, so on a character boundary).
    func cut(_ path: Substring, from offset: Int) -> Substring {
      path[path.utf8.index(path.utf8.startIndex, offsetBy: offset)...]
    }
  }

  /// Splits `{source}/copyTo/b/{bucket}/o/{name}` and the like on the raw path, so `%2F` in
  /// either name stays part of it.
  private static func action(in raw: Substring) throws(APIError) -> ObjectAction? {
    func decode(_ part: Substring) throws(APIError) -> String {
      guard let text = URLCoding.percentDecode(part) else {
        throw APIError(400, .invalid, "An object name in the path has a malformed percent-escape.")
      }
      return text
    }
    for (marker, isCopy) in [("/copyTo/b/", true), ("/rewriteTo/b/", false)] {
      guard let range = raw.utf8Range(of: marker) else { continue }
      let rest = raw[range.upperBound...]
      guard let slash = rest.utf8Range(of: "/o/") else { continue }
      let source = try decode(raw[..<range.lowerBound])
      let bucket = try decode(rest[..<slash.lowerBound])
      let name = try decode(rest[slash.upperBound...])
      return isCopy
        ? .copyTo(source: source, bucket: bucket, name: name) : .rewriteTo(source: source, bucket: bucket, name: name)
    }
    if raw.utf8.count > 8 && raw.utf8HasSuffix("/compose") {
      return .compose(destination: try decode(raw.utf8.dropLast(8).asSubstring(of: raw)))
    }
    return nil
  }

  private static let surfaces: [(String, Surface)] = [
    ("/v0/b", .firebase), ("/storage/v1/b", .json), ("/upload/storage/v1/b", .upload),
    ("/download/storage/v1/b", .download), ("/resumable/upload/storage/v1/b", .upload), ("/b", .bare),
  ]
  private static let surfaceBytes = surfaces.map { (Array($0.0.utf8), $0.1) }
}

extension Substring.UTF8View {
  /// These bytes as a slice of `text` (their indices are `text`'s; cuts are on ASCII bytes).
  func asSubstring(of text: Substring) -> Substring { text[startIndex..<endIndex] }
}

extension Substring {
  /// Whether a `/` byte is in the text.
  var utf8ContainsSlash: Bool {
    withUTF8Bytes { $0.contains(UInt8(ascii: "/")) }
  }

  /// The first occurrence of `marker`, compared byte for byte (no copy of either).
  func utf8Range(of marker: String) -> Range<Index>? {
    var marker = marker
    return marker.withUTF8 { needle -> Range<Index>? in
      guard let first = needle.first else { return nil }
      let found: Int? = withUTF8Bytes { bytes -> Int? in
        guard bytes.count >= needle.count else { return nil }
        var offset = 0
        while offset <= bytes.count - needle.count {
          if bytes[offset] == first && needle.indices.allSatisfy({ bytes[offset + $0] == needle[$0] }) { return offset }
          offset += 1
        }
        return nil
      }
      guard let offset = found else { return nil }
      let start = utf8.index(utf8.startIndex, offsetBy: offset)
      return start..<utf8.index(start, offsetBy: needle.count)
    }
  }
}
