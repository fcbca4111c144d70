extension JSONValue {
  /// Writes this value at the writer's position (after a key, in an array, or as the document).
  public func write(into json: inout JSONWriter) {
    switch self {
    case .null: json.rawValue("null")
    case .bool(let flag): json.rawValue(flag ? "true" : "false")
    case .number(let text): json.rawValue(text)
    case .string(let text): json.string(text)
    case .array(let values):
      json.beginArray()
      for element in values { element.write(into: &json) }
      json.endArray()
    case .object(let members):
      json.beginObject()
      for (key, member) in members {
        json.key(key)
        member.write(into: &json)
      }
      json.endObject()
    }
  }
}
