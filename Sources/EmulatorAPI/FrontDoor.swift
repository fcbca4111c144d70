import EmulatorHTTP
import EmulatorStorage

/// The server's handler: one `RouteTable` of the storage API's routes (`StorageAPI.routes`) and
/// the emulator's own, which their owners register (`Maintenance.routes()`, `WebUI.routes()`:
/// exact paths such as `/internal/reset`). A storage request pays one comparison per first segment
/// of the own routes' paths.
public final class FrontDoor: HTTPHandler {
  public let api: StorageAPI
  public let table: RouteTable

  public init(api: StorageAPI, routes: [RouteEntry]) {
    self.api = api
    self.table = RouteTable(StorageAPI.routes + routes)
  }

  public func bodyLimit(for head: HTTPRequestHead) -> Int { api.bodyLimit(for: head, in: table) }

  public var bodyLimitFloor: Int { api.bodyLimitFloor }

  /// A state-changing route at an exact path (`POST /internal/reset`, `/internal/export`,
  /// `PUT /internal/setRules`…) called by a web page of another origin (a browser sends `Origin`;
  /// tools and SDKs do not): refused with 403, so a page the developer happens to visit cannot
  /// empty or export the emulator.
  static func crossSiteRefusal(_ head: HTTPRequestHead) -> HTTPResponse? {
    guard head.method != "GET" && head.method != "HEAD", let origin = head.headers["origin"] else { return nil }
    let host = head.headers["host"] ?? ""
    if !host.isEmpty && (origin == "http://" + host || origin == "https://" + host) { return nil }
    return APIError(
      403, .forbidden, "\(head.method) \(head.rawPath) is refused from a web page of another origin (\(origin)).")
      .response(.gcs)
  }

  /// Refused heads get the API's GCS-shaped errors.
  public func errorResponse(for error: HTTPParseError) -> HTTPResponse { api.errorResponse(for: error) }

  public func errorResponse(for error: HTTPParseError, head: HTTPRequestHead) -> HTTPResponse {
    api.errorResponse(for: error, head: head)
  }

  /// For CORS preflights and `Allow`: the methods the table serves at the target.
  public func allowedMethods(for head: HTTPRequestHead) -> [String]? { api.allowedMethods(for: head, in: table) }

  /// A bucket's own CORS configuration applies to storage downloads only.
  public func crossOriginRules(for head: HTTPRequestHead) -> [CrossOriginRule]? {
    table.pathEntries(head.rawPath) == nil ? api.crossOriginRules(for: head) : nil
  }

  public func start(_ request: HTTPRequest) -> HTTPHandling { api.start(request, in: table) }
}

extension HTTPResponse {
  /// A 200 (or other) answer with a JSON body.
  public static func json(_ body: [UInt8], status: Int = 200) -> HTTPResponse {
    HTTPResponse(status: status, headers: ["content-type": "application/json; charset=UTF-8"], body: body)
  }
}
