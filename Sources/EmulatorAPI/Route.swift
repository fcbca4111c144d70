import EmulatorHTTP

/// Which URL surface a request came in on; it decides the JSON flavour.
public enum Surface: Sendable, Equatable {
  /// `/b/...`: the design card's paths, what the Node GCS client calls. GCS flavour.
  case bare
  /// `/storage/v1/b/...`. GCS flavour.
  case json
  /// `/upload/storage/v1/b/...`. GCS flavour.
  case upload
  /// `/download/storage/v1/b/...`. GCS flavour.
  case download
  /// `/v0/b/...`: the Firebase Storage API. Firebase flavour.
  case firebase

  public var isFirebase: Bool { self == .firebase }
}

/// What a request path addresses.
public enum Resource: Sendable, Equatable {
  /// `/b` (and `/storage/v1/b`): the bucket collection.
  case buckets
  case bucket(String)
  /// `.../b/{bucket}/o`: the objects of a bucket.
  case objects(bucket: String)
  case object(bucket: String, name: String)
}

public struct Route: Sendable, Equatable {
  public var surface: Surface
  public var resource: Resource

  /// Matches the raw (still percent-encoded) path, so `%2F` inside an object name is never taken
  /// for a separator. The object name is everything after `/o/`, decoded once; a raw `/` and `%2F`
  /// both mean `/`. Returns nil for a path no surface has.
  public static func match(rawPath: Substring) throws(APIError) -> Route? {
    let surfaces: [(String, Surface)] = [
      ("/v0/b", .firebase), ("/storage/v1/b", .json), ("/upload/storage/v1/b", .upload),
      ("/download/storage/v1/b", .download), ("/b", .bare),
    ]
    for (prefix, surface) in surfaces where rawPath.hasPrefix(prefix) {
      let rest = rawPath.dropFirst(prefix.count)
      if rest.isEmpty {
        return surface == .json || surface == .bare ? Route(surface: surface, resource: .buckets) : nil
      }
      guard rest.first == "/" else { continue }
      let afterSlash = rest.dropFirst()
      let bucketRaw = afterSlash.prefix { $0 != "/" }
      guard !bucketRaw.isEmpty else { return nil }
      guard let bucket = URLCoding.percentDecode(bucketRaw) else {
        throw APIError(400, .invalid, "The bucket name in the path has a malformed percent-escape.")
      }
      let tail = afterSlash.dropFirst(bucketRaw.count)
      if tail.isEmpty {
        return surface == .json || surface == .bare ? Route(surface: surface, resource: .bucket(bucket)) : nil
      }
      if tail == "/o" || tail == "/o/" {
        return Route(surface: surface, resource: .objects(bucket: bucket))
      }
      guard tail.hasPrefix("/o/") else { return nil }
      let nameRaw = tail.dropFirst(3)
      guard let name = URLCoding.percentDecode(nameRaw) else {
        throw APIError(
          400, .invalid, "The object name in the path has a malformed percent-escape or is not valid UTF-8.")
      }
      return Route(surface: surface, resource: .object(bucket: bucket, name: name))
    }
    return nil
  }
}
