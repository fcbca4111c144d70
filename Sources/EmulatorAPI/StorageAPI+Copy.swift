import EmulatorHTTP
import EmulatorStorage

/// Copy, rewrite and compose (GCS JSON API).
extension StorageAPI {
  /// GCS composes 1 to 32 source objects per request.
  static let maxComposeSources = 32

  /// The body of a copy, rewrite or compose: a JSON object; empty and `null` (what rclone and the
  /// Go client send for a plain server-side copy) mean no metadata changes.
  static func actionBody(_ bytes: [UInt8]) throws(APIError) -> JSONValue {
    let trimmed = bytes.drop { $0 == 32 || $0 == 9 || $0 == 10 || $0 == 13 }
    if trimmed.starts(with: Array("null".utf8)),
      trimmed.dropFirst(4).allSatisfy({ $0 == 32 || $0 == 9 || $0 == 10 || $0 == 13 })
    {
      return .object([])
    }
    return try RequestOptions.jsonObject(bytes)
  }

  /// The POST of `copyTo`, `rewriteTo` or `compose` (named by the path's suffix).
  func objectAction(_ context: RequestContext) throws(APIError) -> HTTPResponse {
    guard let action = context.route.action else { throw APIError(404, .notFound, "No such object action.") }
    let bucket = context.bucket
    let query = context.query
    let conditions = try RequestOptions.preconditions(query, context.request.headers, read: false)
    let body = try Self.actionBody(context.request.bodyBytes())
    switch action {
    case .copyTo(let source, let destinationBucket, let destination),
      .rewriteTo(let source, let destinationBucket, let destination):
      try Self.validate(source)
      try Self.validate(destination)
      var sourceConditions = Preconditions()
      sourceConditions.generation = try RequestOptions.int64(query, "sourceGeneration")
      sourceConditions.ifGenerationMatch = try RequestOptions.int64(query, "ifSourceGenerationMatch")
      sourceConditions.ifGenerationNotMatch = try RequestOptions.int64(query, "ifSourceGenerationNotMatch")
      sourceConditions.ifMetagenerationMatch = try RequestOptions.int64(query, "ifSourceMetagenerationMatch")
      sourceConditions.ifMetagenerationNotMatch = try RequestOptions.int64(query, "ifSourceMetagenerationNotMatch")
      let patch = try storage { () throws(StorageError) in try MetadataPatch(json: body, options: patchOptions(context))
      }
      let object = try storage { () throws(StorageError) in
        try store.copy(
          from: bucket, source, sourceConditions: sourceConditions, to: destinationBucket, destination,
          upload: ObjectStore.Upload(patch: patch, createsBucket: createsBucket(context.route.surface)),
          conditions: conditions)
      }
      if case .copyTo = action { return context.object(object) }
      var json = JSONWriter(capacity: 1024)
      json.beginObject()
      json.string("kind", "storage#rewriteResponse")
      json.string("totalBytesRewritten", String(object.size))
      json.string("objectSize", String(object.size))
      json.bool("done", true)
      json.key("resource")
      context.json.writeGCSObject(object, into: &json, topLevel: false)
      json.endObject()
      return context.ok(json.bytes)
    case .compose(let destination):
      try Self.validate(destination)
      guard case .array(let list)? = body["sourceObjects"], !list.isEmpty else {
        throw APIError(400, .required, "sourceObjects is required: a list of {\"name\": …}.")
      }
      var sources: [ObjectStore.ComposeSource] = []
      guard list.count <= Self.maxComposeSources else {
        throw APIError(400, .invalid, "A compose request needs 1 to 32 source objects, got \(list.count).")
      }
      for entry in list {
        guard let name = entry["name"]?.stringValue else {
          throw APIError(400, .required, "Every source object needs a name.")
        }
        sources.append(
          ObjectStore.ComposeSource(
            name: name, generation: try RequestOptions.generation(entry["generation"], field: "generation"),
            ifGenerationMatch: try RequestOptions.generation(
              entry["objectPreconditions"]?["ifGenerationMatch"], field: "ifGenerationMatch")))
      }
      let destinationDocument = body["destination"] ?? .object([])
      let patch = try storage { () throws(StorageError) in
        try MetadataPatch(json: destinationDocument, options: patchOptions(context))
      }
      let object = try storage { () throws(StorageError) in
        try store.compose(
          bucket: bucket, name: destination, sources: sources,
          upload: ObjectStore.Upload(patch: patch, createsBucket: createsBucket(context.route.surface)),
          conditions: conditions)
      }
      return context.object(object)
    }
  }
}
