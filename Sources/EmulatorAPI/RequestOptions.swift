import EmulatorHTTP
import EmulatorStorage

/// Reading the query parameters and headers that every surface shares.
enum RequestOptions {
  /// The most items one list page holds; a larger `maxResults` is capped to it (as GCS does).
  static let maxResultsCap = 1000

  static func int64(_ query: QueryParameters, _ name: String) throws(APIError) -> Int64? {
    guard let text = query[name] else { return nil }
    return try integer(text, field: name)
  }

  /// `ifGenerationMatch`… from the query (also Python's `ifMetaGenerationNotMatch` spelling), and
  /// on reads `If-Match` / `If-None-Match`.
  static func preconditions(
    _ query: QueryParameters, _ headers: HTTPHeaders, read: Bool
  ) throws(APIError) -> Preconditions {
    var conditions = Preconditions()
    if !query.isEmpty {
      conditions.generation = try int64(query, "generation")
      conditions.ifGenerationMatch = try int64(query, "ifGenerationMatch")
      conditions.ifGenerationNotMatch = try int64(query, "ifGenerationNotMatch")
      conditions.ifMetagenerationMatch = try int64(query, "ifMetagenerationMatch")
      conditions.ifMetagenerationNotMatch = try int64(query, "ifMetagenerationNotMatch")
      if conditions.ifMetagenerationNotMatch == nil {
        conditions.ifMetagenerationNotMatch = try int64(query, "ifMetaGenerationNotMatch")
      }
    }
    if read {
      // One pass over the fields; most reads carry neither.
      var ifMatch: [String] = []
      var ifNoneMatch: [String] = []
      for field in headers.fields {
        // By bytes: a `switch` on the name compares each field's with `==` (Unicode rules).
        if field.name.sameUTF8("if-match") {
          ifMatch += field.value.split(separator: ",").map(String.init)
        } else if field.name.sameUTF8("if-none-match") {
          ifNoneMatch += field.value.split(separator: ",").map(String.init)
        }
      }
      if !ifMatch.isEmpty { conditions.ifMatch = ifMatch }
      if !ifNoneMatch.isEmpty { conditions.ifNoneMatch = ifNoneMatch }
    }
    return conditions
  }

  static func listQuery(_ query: QueryParameters) throws(APIError) -> ListQuery {
    var list = ListQuery()
    list.prefix = query["prefix"].flatMap { $0.isEmpty ? nil : $0 }
    list.delimiter = query["delimiter"].flatMap { $0.isEmpty ? nil : $0 }
    if let text = query["maxResults"] {
      // Any positive count is accepted and capped at 1000, as GCS does; past Int64 it is 400.
      guard let value = DecimalInteger.value(text, in: 1...Int64.max) else {
        throw APIError(400, .invalid, "Invalid value for 'maxResults': '\(text)' is not a positive integer.")
      }
      list.maxResults = Int(min(value, Int64(maxResultsCap)))
    }
    list.pageToken = query["pageToken"]
    list.startOffset = query["startOffset"].flatMap { $0.isEmpty ? nil : $0 }
    list.endOffset = query["endOffset"].flatMap { $0.isEmpty ? nil : $0 }
    list.includeTrailingDelimiter = query["includeTrailingDelimiter"] == "true"
    list.versions = query["versions"]?.lowercased() == "true"
    if let glob = query["matchGlob"], !glob.isEmpty {
      if let delimiter = list.delimiter, delimiter != "/" {
        throw APIError(400, .invalid, "matchGlob can only be combined with delimiter '/'.")
      }
      list.matchGlob = glob
    }
    return list
  }

  /// The top-level keys named by `fields=` (`items(name),nextPageToken` keeps `items` whole).
  static func fields(_ query: QueryParameters) -> Set<String>? {
    guard let text = query["fields"], !text.isEmpty else { return nil }
    var names = Set<String>()
    var depth = 0
    var current = ""
    for character in text {
      switch character {
      case "(": depth += 1
      case ")": depth -= 1
      case "," where depth == 0:
        names.insert(String(current.prefix { $0 != "/" }).trimmingASCIIWhitespace())
        current = ""
        continue
      default: break
      }
      if depth == 0 && character != ")" { current.append(character) }
    }
    names.insert(String(current.prefix { $0 != "/" }).trimmingASCIIWhitespace())
    names.remove("")
    return names
  }

  /// A request body that must be a JSON object; empty means `{}`.
  static func jsonObject(_ body: [UInt8]) throws(APIError) -> JSONValue {
    if body.allSatisfy({ $0 == 32 || $0 == 9 || $0 == 10 || $0 == 13 }) { return .object([]) }
    let value: JSONValue
    do {
      value = try JSONValue.parse(body)
    } catch {
      throw APIError(400, .invalid, "The request body is not valid JSON: \(error.description).")
    }
    guard case .object = value else { throw APIError(400, .invalid, "The request body must be a JSON object.") }
    return value
  }
}
