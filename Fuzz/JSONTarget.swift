// Fuzz target `json`: the JSON decoder every request body goes through.
//
// Oracles: nothing traps (nesting is bounded, so no stack overflow); a document that parses,
// written back out with JSONWriter, parses again to the same value.

func fuzzJSON(_ bytes: UnsafeBufferPointer<UInt8>) {
  guard let value = try? JSONValue.parse(Array(bytes)) else { return }
  var writer = JSONWriter()
  write(value, into: &writer)
  guard let again = try? JSONValue.parse(writer.bytes) else {
    fatalError("the rewritten document does not parse: \(String(decoding: writer.bytes, as: UTF8.self))")
  }
  if again != value {
    fatalError("round trip changed the document: \(String(decoding: writer.bytes, as: UTF8.self))")
  }
}

private func write(_ value: JSONValue, into json: inout JSONWriter) {
  switch value {
  case .null: json.rawValue("null")
  case .bool(let flag): json.rawValue(flag ? "true" : "false")
  case .number(let text): json.rawValue(text)
  case .string(let text): json.string(text)
  case .array(let values):
    json.beginArray()
    for element in values { write(element, into: &json) }
    json.endArray()
  case .object(let members):
    json.beginObject()
    for (key, member) in members {
      json.key(key)
      write(member, into: &json)
    }
    json.endObject()
  }
}
