import EmulatorHTTP
import EmulatorRules
import EmulatorStorage

/// `PUT /internal/setRules`, the Firebase emulator's call for replacing security rules (what
/// `@firebase/rules-unit-testing` sends): `{"rules":{"files":[{"name","content"[,"resource"]}]}}`.
/// One file applies to every bucket; with several, each names its bucket in `resource`.
extension StorageAPI {
  static let setRulesPath = "/internal/setRules"

  /// `PUT /internal/setRules` (its entry is in `StorageRoutes.swift`).
  func setRules(_ request: HTTPRequest) -> HTTPResponse {
    guard case .object(let members)? = try? JSONValue.parse(request.bodyBytes()),
      case .object(let section)? = members.first(where: { $0.0 == "rules" })?.1,
      case .array(let files)? = section.first(where: { $0.0 == "files" })?.1, !files.isEmpty
    else {
      return Self.message(400, "Request body must include 'rules.files' array")
    }
    var parsed: [RulesFile] = []
    for file in files {
      let name = file["name"]?.stringValue
      let content = file["content"]?.stringValue
      let resource = file["resource"]?.stringValue
      if files.count == 1 {
        guard let name, let content else {
          return Self.message(400, "Each member of 'rules.files' array must contain 'name' and 'content'")
        }
        parsed.append(RulesFile(name: name, content: content))
      } else {
        guard let name, let content, let resource, !resource.isEmpty else {
          return Self.message(
            400, "Each member of 'rules.files' array must contain 'name', 'content', and 'resource'")
        }
        parsed.append(RulesFile(name: name, content: content, bucket: resource))
      }
    }
    do throws(RulesSyntaxError) {
      try rules.replace(with: parsed)
    } catch {
      rules.log("rules: setRules refused: \(error)")
      return Self.message(
        400, "There was an error updating rules, see logs for more details", detail: error.description)
    }
    rules.log("rules: replaced by setRules (\(parsed.map(\.name).joined(separator: ", ")))")
    return Self.message(200, "Rules updated successfully")
  }

  /// `{"message": ...}` (and the syntax error, under `error`, when there is one).
  static func message(_ status: Int, _ text: String, detail: String? = nil, headers: HTTPHeaders = [:])
    -> HTTPResponse
  {
    var json = JSONWriter(capacity: 128)
    json.beginObject()
    json.string("message", text)
    if let detail { json.string("error", detail) }
    json.endObject()
    var headers = headers
    headers.set("content-type", "application/json; charset=UTF-8")
    return HTTPResponse(status: status, headers: headers, body: json.bytes)
  }
}
