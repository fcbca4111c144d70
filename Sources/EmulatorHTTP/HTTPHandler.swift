import Dispatch

/// What the server calls for each request. Implementations must be thread-safe: requests from
/// different connections run concurrently.
public protocol HTTPHandler: Sendable {
  /// The largest body accepted for this head, asked before the body is read, so an oversized
  /// request is refused with 413 without reading it.
  func bodyLimit(for head: HTTPRequestHead) -> Int

  /// A body of at most this many bytes is accepted whatever the head: no `bodyLimit(for:)`
  /// returns less. A request that declares a Content-Length this small is not asked about (for
  /// the storage API that saves routing every small upload twice). 0: always ask.
  var bodyLimitFloor: Int { get }

  /// The response sent, with `Connection: close`, for a request that could not be parsed or was
  /// refused from its head (413, 431…). A requirement, so a handler's own version is the one called.
  func errorResponse(for error: HTTPParseError) -> HTTPResponse

  /// Called on the connection's own thread: answers at once (from memory, without blocking: no
  /// thread hand-off at all), or starts work that answers later, or returns the work that may
  /// block, which the server runs on one of its blocking lanes. The one way a request is run.
  func start(_ request: HTTPRequest) -> HTTPHandling

  /// Called when a head has arrived, before its body is read: a response refuses the request
  /// (it is sent with `Connection: close` and the body is never read); nil lets it through.
  func screen(_ head: HTTPRequestHead) -> HTTPResponse?

  /// The methods the resource at this head's target supports (for `Allow` and CORS preflights);
  /// nil when there is no such resource.
  func allowedMethods(for head: HTTPRequestHead) -> [String]?

  /// The resource's own CORS configuration, when it has one (a bucket's `cors` list, for its
  /// downloads): it then decides the CORS answers for this target instead of the server-wide
  /// `OriginPolicy` (the first entry that covers the origin and method applies; none: no CORS
  /// headers). nil: the server-wide policy applies. Asked only for requests with an `Origin`.
  func crossOriginRules(for head: HTTPRequestHead) -> [CrossOriginRule]?

  /// The response for a request that could not be read, when its head is known (a body over the
  /// limit, a malformed body): `errorResponse(for:)` unless a handler adds to it.
  func errorResponse(for error: HTTPParseError, head: HTTPRequestHead) -> HTTPResponse
}

/// How a request is answered: now, later, or by work that may block (file I/O, fsync).
public enum HTTPHandling: Sendable {
  case respond(HTTPResponse)
  /// Called at once on the connection's thread, where it must not block; it hands its work on
  /// and replies exactly once, from any thread, through the responder.
  case deferred(@Sendable (HTTPResponder) -> Void)
  case blocking(@Sendable () -> HTTPResponse)
}

/// Answers one deferred request, once, from any thread.
public struct HTTPResponder: Sendable {
  private let deliver: @Sendable (@escaping @Sendable () -> HTTPResponse) -> Void
  /// The end of the current turn of the event loop the request arrived on, for work the
  /// request shares with others of its turn (nil: no loop, as when a caller blocks for the
  /// reply). A responder that wraps another passes this on.
  public let turnEnd: TurnEnd?

  /// `deliver` gets a function that makes the response and must run it where the response is sent.
  public init(
    turnEnd: TurnEnd? = nil, _ deliver: @escaping @Sendable (@escaping @Sendable () -> HTTPResponse) -> Void
  ) {
    self.turnEnd = turnEnd
    self.deliver = deliver
  }

  public func reply(_ response: HTTPResponse) { deliver { response } }

  /// Replies with a response made on the connection's thread: a thread that completes many
  /// requests at once (a group write) only hands them over, and their rendering is spread over
  /// the connections' threads.
  public func reply(making response: @escaping @Sendable () -> HTTPResponse) { deliver(response) }
}

extension HTTPHandler {
  public func bodyLimit(for head: HTTPRequestHead) -> Int { Int.max }

  public var bodyLimitFloor: Int { 0 }

  public func screen(_ head: HTTPRequestHead) -> HTTPResponse? { nil }

  public func allowedMethods(for head: HTTPRequestHead) -> [String]? { nil }

  public func crossOriginRules(for head: HTTPRequestHead) -> [CrossOriginRule]? { nil }

  public func errorResponse(for error: HTTPParseError, head: HTTPRequestHead) -> HTTPResponse {
    errorResponse(for: error)
  }

  public func errorResponse(for error: HTTPParseError) -> HTTPResponse {
    HTTPResponse.plainJSONError(status: error.status, message: error.message)
  }
}

extension HTTPHandler {
  /// Runs a request through `start` where the caller is and waits for its response: blocking work
  /// runs here, deferred work is awaited. For tests, and for a route that hands a request to
  /// another handler from a blocking lane; never on a connection's thread.
  public func answer(_ request: HTTPRequest) -> HTTPResponse { start(request).wait() }
}

extension HTTPHandling {
  /// The response, made here (see `HTTPHandler.answer`).
  public func wait() -> HTTPResponse {
    switch self {
    case .respond(let response): return response
    case .blocking(let work): return work()
    case .deferred(let start):
      let reply = Reply()
      start(HTTPResponder { make in reply.set(make()) })
      return reply.get()
    }
  }

  /// One response handed from whichever thread replies to the one waiting.
  private final class Reply: @unchecked Sendable {
    private let ready = DispatchSemaphore(value: 0)
    private var response: HTTPResponse?  // written once, before `ready` is signalled

    func set(_ value: HTTPResponse) {
      response = value
      ready.signal()
    }

    func get() -> HTTPResponse {
      ready.wait()
      return response ?? HTTPResponse(status: 500)
    }
  }
}

extension HTTPResponse {
  /// `{"error":{"code":N,"message":"..."}}`, the smallest error body every client here understands.
  public static func plainJSONError(status: Int, message: String) -> HTTPResponse {
    var escaped = ""
    for scalar in message.unicodeScalars {
      switch scalar {
      case "\"": escaped += "\\\""
      case "\\": escaped += "\\\\"
      case _ where scalar.value < 0x20:
        escaped +=
          "\\u" + String(repeating: "0", count: 4 - String(scalar.value, radix: 16).count)
          + String(scalar.value, radix: 16)
      default: escaped.unicodeScalars.append(scalar)
      }
    }
    let body = "{\"error\":{\"code\":\(status),\"message\":\"\(escaped)\"}}"
    return HTTPResponse(
      status: status, headers: ["content-type": "application/json; charset=UTF-8"], body: Array(body.utf8))
  }
}

/// Runs work on an event loop's thread when the loop's current turn ends: after every request
/// that arrived in the same turn has been read and started. A handler that starts work many
/// requests can share (one write for all the changes of a turn) schedules it here, instead of
/// on another thread, which would cost each request a hand-off and a wake-up.
public struct TurnEnd: Sendable {
  let queue: LoopWorkQueue

  /// Called on the loop's thread, as a handler's `start` is; from another thread the work still
  /// runs on the loop's thread, as soon as the loop next wakes.
  public func run(_ work: @escaping @Sendable () -> Void) { queue.afterTurn(work) }
}
