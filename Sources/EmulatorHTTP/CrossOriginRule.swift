/// One entry of a resource's own CORS configuration (a GCS bucket's `cors` list): the origins and
/// methods it covers (`*`: any), the response headers pages may read (and, in a preflight, send),
/// and how long a preflight answer may be reused.
public struct CrossOriginRule: Sendable, Equatable {
  public var origins: [String]
  public var methods: [String]
  public var responseHeaders: [String]
  public var maxAgeSeconds: Int?

  public init(origins: [String], methods: [String], responseHeaders: [String] = [], maxAgeSeconds: Int? = nil) {
    self.origins = origins
    self.methods = methods
    self.responseHeaders = responseHeaders
    self.maxAgeSeconds = maxAgeSeconds
  }

  /// Whether the entry covers this origin (exactly, or `*`) and method (any case, or `*`).
  public func matches(origin: String, method: String) -> Bool {
    (origins.contains("*") || origins.contains(origin))
      && (methods.contains("*") || methods.contains { $0.uppercased() == method })
  }
}
