import EmulatorHTTP
import Foundation

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

  public init(surface: Surface, resource: Resource, action: ObjectAction? = nil) {
    self.surface = surface
    self.resource = resource
    self.action = action
  }

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
      var route = Route(surface: surface, resource: .object(bucket: bucket, name: name))
      if surface == .json || surface == .bare { route.action = try action(in: nameRaw) }
      return route
    }
    return nil
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
      guard let range = raw.range(of: marker) else { continue }
      let rest = raw[range.upperBound...]
      guard let slash = rest.range(of: "/o/") else { continue }
      let source = try decode(raw[..<range.lowerBound])
      let bucket = try decode(rest[..<slash.lowerBound])
      let name = try decode(rest[slash.upperBound...])
      return isCopy
        ? .copyTo(source: source, bucket: bucket, name: name) : .rewriteTo(source: source, bucket: bucket, name: name)
    }
    if raw.hasSuffix("/compose") {
      return .compose(destination: try decode(raw.dropLast("/compose".count)))
    }
    return nil
  }
}
