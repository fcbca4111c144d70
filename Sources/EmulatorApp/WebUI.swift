import EmulatorAPI
import EmulatorHTTP
import EmulatorStorage
import EmulatorSupport

/// The web UI at `/ui/`: one page (HTML, CSS and JavaScript kept in this binary, no framework)
/// that uses the storage API itself (GCS JSON API for lists, uploads, PATCH, DELETE) plus two
/// read-only helpers of its own:
///
/// - `GET /ui/api/object?bucket=B&name=N`: `{"gcs": …, "firebase": …}`, the object in both
///   flavours, without the side effect of a Firebase GET (which gives an object a download token);
/// - `GET /ui/api/changes?since=N[&timeout=S]`: a long poll on the store's changes
///   (`ChangeFeed`), for live updates.
///
/// A browser asking for `/` (an `Accept` naming `text/html`) is redirected to `/ui/`; any other
/// client gets the storage API's JSON answer as before.
struct WebUI {
  let store: ObjectStore
  let api: StorageAPI
  let feed: ChangeFeed
  /// Longest wait of a long poll.
  static let maxPollSeconds = 25.0

  func routes() -> [RouteEntry] {
    let page = Self.asset(WebUIAssets.html, type: "text/html; charset=utf-8")
    let script = Self.asset(WebUIScript.source, type: "text/javascript; charset=utf-8")
    let style = Self.asset(WebUIAssets.css, type: "text/css; charset=utf-8")
    return [
      // On a lane: a request that is not a browser's is the XML API's ListBuckets.
      RouteEntry("GET", "/", .blocking) { [api] request in
        guard Self.wantsHTML(request.headers["accept"]) else { return api.answer(request) }
        return Self.redirect("/ui/")
      },
      RouteEntry("GET", "/ui", .memory) { _ in Self.redirect("/ui/") },
      RouteEntry("GET", "/ui/", .memory) { _ in page },
      RouteEntry("GET", "/ui/index.html", .memory) { _ in page },
      RouteEntry("GET", "/ui/app.js", .memory) { _ in script },
      RouteEntry("GET", "/ui/app.css", .memory) { _ in style },
      RouteEntry("GET", "/ui/api/object", .memory) { request in objectBothFlavours(request) },
      RouteEntry("GET", "/ui/api/changes", deferred: { [feed] request, responder in
        let query = try? QueryParameters(request.head.rawQuery)
        let since = query?["since"].flatMap { Int($0) } ?? -1
        let timeout = min(max(query?["timeout"].flatMap { Double($0) } ?? Self.maxPollSeconds, 0), Self.maxPollSeconds)
        feed.poll(since: since, timeout: timeout) { body in
          var response = HTTPResponse.json(body)
          response.headers.set("cache-control", "no-store")
          responder.reply(response)
        }
      }),
    ]
  }

  /// Whether an `Accept` header asks for HTML (what browsers send for a page).
  static func wantsHTML(_ accept: String?) -> Bool {
    guard let accept else { return false }
    return accept.split(separator: ",").contains { part in
      let type = part.split(separator: ";").first?.trimmingWhitespace().lowercased()
      return type == "text/html" || type == "application/xhtml+xml"
    }
  }

  static func redirect(_ location: String) -> HTTPResponse {
    HTTPResponse(
      status: 302, headers: ["location": location, "content-type": "text/plain; charset=utf-8"],
      body: Array("Found: \(location)\n".utf8))
  }

  static func asset(_ text: String, type: String) -> HTTPResponse {
    HTTPResponse(
      status: 200,
      headers: [
        "content-type": type, "cache-control": "no-cache", "x-content-type-options": "nosniff",
        "content-security-policy":
          "default-src 'self'; img-src 'self' data: blob:; style-src 'self'; script-src 'self'; frame-ancestors 'none'",
      ],
      body: Array(text.utf8))
  }

  private func objectBothFlavours(_ request: HTTPRequest) -> HTTPResponse {
    guard let query = try? QueryParameters(request.head.rawQuery), let bucket = query["bucket"],
      let name = query["name"]
    else {
      return APIError(400, .required, "Give bucket= and name=.").response(firebase: false)
    }
    let object: ObjectMetadata
    do {
      object = try store.metadata(bucket: bucket, name: name)
    } catch {
      return APIError(error).response(firebase: false)
    }
    let base = "http://" + (request.headers["host"] ?? "127.0.0.1")
    var body = Array(#"{"gcs":"#.utf8)
    body += ObjectJSON.gcs(object, baseURL: base)
    body += Array(#","firebase":"#.utf8)
    body += ObjectJSON.firebase(object, baseURL: base)
    body.append(UInt8(ascii: "}"))
    var response = HTTPResponse.json(body)
    response.headers.set("cache-control", "no-store")
    return response
  }
}
