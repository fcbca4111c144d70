import EmulatorHTTP
import EmulatorStorage

/// One object's metadata and the listing of a bucket's objects (PROTOCOL.md §3–§5).
extension StorageAPI {
  func list(_ context: RequestContext) throws -> HTTPResponse {
    let bucket = context.bucket
    try authorizeList(context, bucket: bucket)
    let query = try RequestOptions.listQuery(context.query)
    let page = try store.list(bucket: bucket, query: query)
    return context.ok(context.flavour.list(context.json, page))
  }

  func getMetadata(_ context: RequestContext) throws -> HTTPResponse {
    let (bucket, name) = (context.bucket, context.name)
    try Self.validate(name)
    try authorizeRead(context, bucket: bucket, name: name)
    let conditions = try RequestOptions.preconditions(context.query, context.request.headers, read: true)
    var object = try store.metadata(bucket: bucket, name: name, conditions: conditions)
    if context.flavour.readsNoncurrentVersions, let generation = conditions.generation,
      let version = store.noncurrentVersion(bucket: bucket, name: name, generation: generation)
    {
      var response = context.ok(context.json.gcsObject(version.object, timeDeleted: version.timeDeleted))
      response.headers.set("etag", version.object.etag)
      return response
    }
    if context.flavour.usesDownloadTokens && object.downloadTokens.isEmpty {
      object = try store.ensureDownloadToken(bucket: bucket, name: name)
    }
    return context.object(object, cache: renderCache)
  }

  /// A metadata update (PATCH merges, PUT replaces): parsed and applied at once; answered once
  /// the change is written (the response rendered by the connection, not the store's writer), or
  /// at once with an error.
  /// PATCH: the body's fields are merged into the metadata.
  func merge(_ context: RequestContext, responder: HTTPResponder) { update(context, replace: false, responder: responder) }

  /// PUT: the body replaces the writable metadata.
  func replace(_ context: RequestContext, responder: HTTPResponder) { update(context, replace: true, responder: responder) }

  private func update(_ context: RequestContext, replace: Bool, responder: HTTPResponder) {
    let (bucket, name) = (context.bucket, context.name)
    let flavour = context.flavour
    let patch: MetadataPatch
    let conditions: Preconditions
    do {
      try Self.validate(name)
      let body = try RequestOptions.jsonObject(context.request.bodyBytes())
      var options = flavour.patchOptions(replace: replace)
      // A metadata update keeps the storage class (a rewrite changes it); `predefinedAcl` sets the ACL.
      options.newGeneration = false
      if flavour == .gcs { options.predefinedAcl = context.query["predefinedAcl"] }
      conditions = try RequestOptions.preconditions(context.query, context.request.headers, read: false)
      patch = try MetadataPatch(json: body, options: options)
      try authorizePatch(context, bucket: bucket, name: name, patch: patch)
    } catch {
      return responder.reply(APIError(mapping: error).response(flavour))
    }
    // The group write runs when the loop's turn ends, shared by every change to the object that
    // arrived in the turn; with --fsync on a worker (a loop's thread must not wait for the disk).
    let writer: GroupWriter =
      if let turnEnd = responder.turnEnd, !store.syncsWrites { .scheduled(turnEnd.run) } else { .worker }
    store.update(bucket: bucket, name: name, patch: patch, conditions: conditions, writer: writer) {
      [renderCache] result in
      switch result {
      case .success(let object): responder.reply { context.object(object, cache: renderCache) }
      case .failure(let error): responder.reply(APIError(error).response(flavour))
      }
    }
  }

  func deleteObject(_ context: RequestContext) throws -> HTTPResponse {
    let (bucket, name) = (context.bucket, context.name)
    try Self.validate(name)
    try authorizeDelete(context, bucket: bucket, name: name)
    let conditions = try RequestOptions.preconditions(context.query, context.request.headers, read: false)
    try store.delete(bucket: bucket, name: name, conditions: conditions)
    return HTTPResponse(.noContent)
  }
}
