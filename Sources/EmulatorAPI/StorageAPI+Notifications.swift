import EmulatorHTTP
import EmulatorStorage

/// A bucket's Pub/Sub notification configurations (`notificationConfigs`: insert, list, get,
/// delete). Pub/Sub is not emulated: configurations are checked, kept with the bucket (they
/// survive a restart) and returned as GCS returns them, but no message is published; the
/// emulator's own webhooks (`--webhook`) report the same changes.
extension StorageAPI {
  /// At most this many configurations per bucket (GCS's limit).
  static let maxNotificationConfigs = 100
  static let eventTypes = ["OBJECT_FINALIZE", "OBJECT_METADATA_UPDATE", "OBJECT_DELETE", "OBJECT_ARCHIVE"]

  func notificationConfigs(_ context: RequestContext, bucket: String, id: String?) throws -> HTTPResponse {
    switch (context.method, id) {
    case ("GET", nil), ("HEAD", nil):
      let info = try store.bucket(bucket)
      var json = JSONWriter()
      json.beginObject()
      json.string("kind", "storage#notifications")
      json.beginArray("items")
      for config in info.access.notifications { writeNotification(config, bucket: bucket, into: &json) }
      json.endArray()
      json.endObject()
      return context.ok(json.bytes)
    case ("POST", nil):
      let body = try RequestOptions.jsonObject(context.request.bodyBytes())
      let (_, config) = try store.changeBucket(bucket, bumpsMetageneration: false) { info throws(StorageError) -> JSONValue in
        guard info.access.notifications.count < Self.maxNotificationConfigs else {
          throw StorageError.invalid("A bucket may have at most \(Self.maxNotificationConfigs) notification configurations.")
        }
        let config = try Self.notificationConfig(body, id: String(info.access.nextNotificationID))
        info.access.nextNotificationID += 1
        info.access.notifications.append(config)
        return config
      }
      return context.ok(notificationJSON(config, bucket: bucket))
    case ("GET", let id?), ("HEAD", let id?):
      let info = try store.bucket(bucket)
      guard let config = info.access.notifications.first(where: { $0["id"]?.stringValue == id }) else {
        throw APIError(404, .notFound, "No such notification configuration: \(bucket)/\(id)")
      }
      return context.ok(notificationJSON(config, bucket: bucket))
    case ("DELETE", let id?):
      let (_, found) = try store.changeBucket(bucket, bumpsMetageneration: false) { info throws(StorageError) -> Bool in
        let before = info.access.notifications.count
        info.access.notifications.removeAll { $0["id"]?.stringValue == id }
        return info.access.notifications.count != before
      }
      guard found else { throw APIError(404, .notFound, "No such notification configuration: \(bucket)/\(id)") }
      return HTTPResponse(status: 204)
    case (_, nil): throw Self.notAllowed(context.method, "GET, HEAD, POST")
    case (_, _?): throw Self.notAllowed(context.method, "GET, HEAD, DELETE")
    }
  }

  /// Checks a configuration a client sent and returns it in stored form.
  static func notificationConfig(_ body: JSONValue, id: String) throws(StorageError) -> JSONValue {
    guard var topic = body["topic"]?.stringValue else {
      throw StorageError.required("A notification configuration needs a 'topic' (projects/<project>/topics/<topic>).")
    }
    if topic.hasPrefix("//pubsub.googleapis.com/") { topic.removeFirst("//pubsub.googleapis.com/".count) }
    let parts = topic.split(separator: "/", omittingEmptySubsequences: false)
    guard parts.count == 4, parts[0] == "projects", parts[2] == "topics", !parts[1].isEmpty, !parts[3].isEmpty,
      topic.utf8.count <= 512
    else {
      throw StorageError.invalid("Invalid topic '\(topic)': use projects/<project>/topics/<topic>.")
    }
    let format = body["payload_format"]?.stringValue ?? "JSON_API_V1"
    guard format == "JSON_API_V1" || format == "NONE" else {
      throw StorageError.invalid("Invalid payload_format '\(format)': use JSON_API_V1 or NONE.")
    }
    var members: [(String, JSONValue)] = [
      ("id", .string(id)), ("topic", .string("//pubsub.googleapis.com/" + topic)),
      ("payload_format", .string(format)),
    ]
    if let value = body["event_types"], value != .null {
      guard case .array(let items) = value, items.count <= eventTypes.count,
        items.allSatisfy({ $0.stringValue.map(eventTypes.contains) ?? false })
      else {
        throw StorageError.invalid("event_types must be an array of \(eventTypes.joined(separator: ", ")).")
      }
      members.append(("event_types", value))
    }
    if let value = body["custom_attributes"], value != .null {
      guard case .object(let pairs) = value, pairs.count <= 10,
        pairs.allSatisfy({ $0.1.stringValue != nil && $0.0.utf8.count <= 256 && ($0.1.stringValue?.utf8.count ?? 0) <= 1024 })
      else {
        throw StorageError.invalid("custom_attributes must be an object of at most 10 string values.")
      }
      members.append(("custom_attributes", value))
    }
    if let value = body["object_name_prefix"], value != .null {
      guard let prefix = value.stringValue, prefix.utf8.count <= 1024 else {
        throw StorageError.invalid("object_name_prefix must be a string of at most 1024 bytes.")
      }
      members.append(("object_name_prefix", value))
    }
    members.append(("etag", .string(id)))
    return .object(members)
  }

  private func notificationJSON(_ config: JSONValue, bucket: String) -> [UInt8] {
    var json = JSONWriter()
    writeNotification(config, bucket: bucket, into: &json)
    return json.bytes
  }

  private func writeNotification(_ config: JSONValue, bucket: String, into json: inout JSONWriter) {
    guard case .object(let members) = config else { return }
    let id = config["id"]?.stringValue ?? ""
    json.beginObject()
    json.string("kind", "storage#notification")
    json.string("selfLink", "/storage/v1/b/\(URLCoding.encodeComponent(bucket))/notificationConfigs/\(id)")
    for (key, value) in members {
      json.key(key)
      value.write(into: &json)
    }
    json.endObject()
  }
}
