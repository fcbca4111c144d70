import Dispatch
import EmulatorHTTP
import Logging

/// Wraps the server's handler and writes one `info` line per request: method, path (with its
/// query), status, bytes in (the body), bytes out (the body; `-` for a streamed one of unknown
/// length) and duration (from the complete request to its response being ready, so a slow
/// reader does not count). Installed only when the level lets `info` through, so a quieter level
/// costs the request path nothing.
final class RequestLog: HTTPHandler {
  let inner: any HTTPHandler
  let logger: Logger

  init(_ inner: any HTTPHandler, logger: Logger) {
    self.inner = inner
    self.logger = logger
  }

  func bodyLimit(for head: HTTPRequestHead) -> Int { inner.bodyLimit(for: head) }

  var bodyLimitFloor: Int { inner.bodyLimitFloor }

  func errorResponse(for error: HTTPParseError) -> HTTPResponse { inner.errorResponse(for: error) }

  func errorResponse(for error: HTTPParseError, head: HTTPRequestHead) -> HTTPResponse {
    inner.errorResponse(for: error, head: head)
  }

  func screen(_ head: HTTPRequestHead) -> HTTPResponse? { inner.screen(head) }

  func allowedMethods(for head: HTTPRequestHead) -> [String]? { inner.allowedMethods(for: head) }

  func crossOriginRules(for head: HTTPRequestHead) -> [CrossOriginRule]? { inner.crossOriginRules(for: head) }

  func start(_ request: HTTPRequest) -> HTTPHandling {
    let started = DispatchTime.now().uptimeNanoseconds
    switch inner.start(request) {
    case .respond(let response):
      record(request, response, since: started)
      return .respond(response)
    case .blocking(let work):
      return .blocking { [self] in
        let response = work()
        record(request, response, since: started)
        return response
      }
    case .deferred(let work):
      return .deferred { [self] responder in
        work(
          HTTPResponder(turnEnd: responder.turnEnd) { make in
            responder.reply(making: { [self] in
              let response = make()
              record(request, response, since: started)
              return response
            })
          })
      }
    }
  }

  private func record(_ request: HTTPRequest, _ response: HTTPResponse, since started: UInt64) {
    let micros = (DispatchTime.now().uptimeNanoseconds &- started) / 1000
    let bytesOut: Logger.MetadataValue
    if request.method == "HEAD" || response.status == 204 || response.status == 304 {
      bytesOut = .stringConvertible(0)
    } else if let file = response.bodyFile {
      bytesOut = .stringConvertible(file.length)
    } else if response.bodyStream != nil {
      bytesOut = "-"
    } else {
      bytesOut = .stringConvertible(response.body.count)
    }
    let target = request.head.target
    logger.info(
      "\(request.method) \(target.utf8.count > 1024 ? String(target.utf8.prefix(1024))! + "…" : target)",
      metadata: [
        "status": .stringConvertible(response.status),
        "in": .stringConvertible(request.bodyCount),
        "out": bytesOut,
        "ms": .stringConvertible(Double(micros) / 1000),
      ])
  }
}
