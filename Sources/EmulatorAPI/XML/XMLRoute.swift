import EmulatorHTTP

/// A check every XML API request passes before it is handled (signed URLs plug in here); a
/// thrown error is answered as an XML error document.
public typealias XMLGate = @Sendable (HTTPRequest, XMLRoute) throws(APIError) -> Void

/// What a request on the XML API addresses: `/<bucket>/<object>` (path style), or `/<object>`
/// with `Host: <bucket>.<virtual host>` (virtual-host style).
///
/// The path space `/<bucket>/...` is shared with the JSON surfaces: a path the JSON router
/// knows (`/b/...`, `/v0/b/...`, `/storage/v1/...`, `/upload/...`, `/download/...`,
/// `/resumable/...`) is routed as before, and a first segment that names one of the emulator's
/// own surfaces (`b`, `v0`, `storage`, `upload`, `download`, `resumable`, `internal`, `ui`) is
/// never taken for a bucket on the path style. Those buckets are reachable through the
/// virtual-host style.
public struct XMLRoute: Sendable, Equatable {
  /// nil: the service (`GET /`, ListBuckets).
  public var bucket: String?
  /// nil: the bucket itself (list, create, delete).
  public var name: String?
  public var virtualHost: Bool

  public init(bucket: String?, name: String?, virtualHost: Bool = false) {
    self.bucket = bucket
    self.name = name
    self.virtualHost = virtualHost
  }

  /// First path segments that belong to the emulator's other surfaces.
  static let reserved: Set<String> = ["b", "v0", "storage", "upload", "download", "resumable", "internal", "ui", "batch"]

  /// The XML route of a request, or nil when it is not one (the JSON router then answers).
  /// `host` is the configured virtual host (`localhost`: `Host: bkt.localhost:9199`).
  /// Object names are percent-decoded once, every byte alike (obstore encodes `-` and `.`).
  public static func match(_ head: HTTPRequestHead, virtualHost host: String) throws(APIError) -> XMLRoute? {
    let path = head.rawPath
    guard path.utf8.first == UInt8(ascii: "/") else { return nil }
    let afterSlash = path.utf8.dropFirst().asSubstring(of: path)
    if let bucket = bucket(fromHost: head.headers["host"], suffix: host) {
      return XMLRoute(bucket: bucket, name: afterSlash.isEmpty ? nil : try decode(afterSlash), virtualHost: true)
    }
    if afterSlash.isEmpty { return XMLRoute(bucket: nil, name: nil) }
    let bucketRaw = afterSlash.utf8.prefix { $0 != UInt8(ascii: "/") }.asSubstring(of: afterSlash)
    guard let bucket = URLCoding.percentDecode(bucketRaw), !bucket.isEmpty, !reserved.contains(bucket) else {
      return nil
    }
    let tail = afterSlash[bucketRaw.endIndex...]
    let nameRaw = tail.utf8.dropFirst().asSubstring(of: tail)
    return XMLRoute(bucket: bucket, name: nameRaw.isEmpty ? nil : try decode(nameRaw))
  }

  private static func decode(_ raw: Substring) throws(APIError) -> String {
    guard let name = URLCoding.percentDecode(raw) else {
      throw APIError(400, .invalid, "The object name in the path has a malformed percent-escape or is not valid UTF-8.")
    }
    return name
  }

  /// `bkt.localhost:9199` with suffix `localhost`: `bkt`. Case-insensitive (ASCII) on the
  /// suffix; the port is ignored. Byte comparisons: this runs on every request.
  static func bucket(fromHost header: String?, suffix: String) -> String? {
    guard var header, !suffix.isEmpty else { return nil }
    var wanted = suffix
    return header.withUTF8 { whole in
      wanted.withUTF8 { wanted -> String? in
        var end = whole.count
        if whole.last != UInt8(ascii: "]"), let colon = whole.lastIndex(of: UInt8(ascii: ":")) { end = colon }
        guard end > wanted.count + 1 else { return nil }
        func lower(_ byte: UInt8) -> UInt8 { byte >= 65 && byte <= 90 ? byte + 32 : byte }
        let dot = end - wanted.count - 1
        for offset in 0..<wanted.count where lower(whole[dot + 1 + offset]) != lower(wanted[offset]) { return nil }
        guard whole[dot] == UInt8(ascii: ".") else { return nil }
        return String(unsafeUninitializedCapacity: dot) { out in
          for offset in 0..<dot { out[offset] = lower(whole[offset]) }
          return dot
        }
      }
    }
  }

  /// Whether the raw path's first segment is one of `reserved`, compared as raw bytes (no
  /// decoding, no allocation): every JSON-surface request is rejected for the XML API here.
  static func startsWithReservedSegment(_ rawPath: Substring) -> Bool {
    guard rawPath.utf8.first == UInt8(ascii: "/") else { return false }
    return rawPath.firstPathSegmentIsOne(of: reservedWords)
  }

  private static let reservedWords = reserved.map { Array($0.utf8) }
}
