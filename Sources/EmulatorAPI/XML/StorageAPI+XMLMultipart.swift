import EmulatorHTTP
import EmulatorStorage
import EmulatorSupport

/// XML multipart uploads: initiate (`POST ?uploads`), upload part (`PUT ?partNumber&uploadId`),
/// list parts (`GET ?uploadId`), complete (`POST ?uploadId` with a CompleteMultipartUpload
/// document), abort (`DELETE ?uploadId`).
extension StorageAPI {
  func xmlMultipart(_ context: XMLContext) throws -> HTTPResponse {
    let (request, query, bucket, name) = (context.request, context.query, context.bucket, context.name)
    guard let uploads = multipart else {
      throw XMLError(500, "InternalError", "The multipart upload folder could not be created.")
    }
    let method = request.method
    guard let id = query["uploadId"] else {
      guard method == "POST" else { throw Self.xmlNotAllowed(method, "POST") }
      let patch = try Self.xmlPatch(request.headers)
      if !limits.lenientBuckets { _ = try store.bucket(bucket) }
      let upload = try uploads.initiate(bucket: bucket, name: name, patch: patch)
      var xml = XMLWriter()
      xml.open("InitiateMultipartUploadResult", attributes: "xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\"")
      xml.element("Bucket", bucket)
      xml.element("Key", name)
      xml.element("UploadId", upload.id)
      xml.close("InitiateMultipartUploadResult")
      return xml.response()
    }
    switch method {
    case "PUT":
      guard let text = query["partNumber"], let number = Int(text) else {
        throw XMLError(400, "InvalidArgument", "An upload part needs partNumber=1…10000.")
      }
      let file = request.bodyFile?.take()
      let info = try uploads.putPart(id, bucket: bucket, name: name, number: number, bytes: request.body, file: file)
      return HTTPResponse(.ok, headers: ["etag": "\"" + Hex.encode(info.md5) + "\""])
    case "GET", "HEAD":
      return try xmlListParts(uploads, id: id, query, bucket: bucket, name: name)
    case "POST":
      let parts = try XMLCompleteDocument.parts(request.bodyBytes())
      let conditions = try Self.xmlConditions(request.headers, prefix: "x-goog-if-")
      let object = try uploads.complete(id, bucket: bucket, name: name, parts: parts) { upload, data throws(StorageError) in
        try store.insert(
          bucket: bucket, name: name, source: data,
          upload: ObjectStore.Upload(patch: upload.patch, createsBucket: limits.lenientBuckets),
          conditions: conditions)
      }
      var xml = XMLWriter()
      xml.open("CompleteMultipartUploadResult", attributes: "xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\"")
      xml.element("Location", "/\(bucket)/\(name)")
      xml.element("Bucket", bucket)
      xml.element("Key", name)
      xml.element("ETag", Self.xmlETag(object))
      xml.close("CompleteMultipartUploadResult")
      return xml.response(headers: Self.xmlObjectHeaders(object))
    case "DELETE":
      _ = try uploads.upload(id, bucket: bucket, name: name)
      uploads.abort(id)
      return HTTPResponse(.noContent)
    default:
      throw Self.xmlNotAllowed(method, "GET, PUT, POST, DELETE")
    }
  }

  private func xmlListParts(
    _ uploads: MultipartUploads, id: String, _ query: QueryParameters, bucket: String, name: String
  ) throws -> HTTPResponse {
    let upload = try uploads.upload(id, bucket: bucket, name: name)
    let maxParts = min(try Self.xmlInt(query["max-parts"], "max-parts").map { Int(max(0, $0)) } ?? 1000, 1000)
    let marker = Int(try Self.xmlInt(query["part-number-marker"], "part-number-marker") ?? 0)
    let numbers = upload.parts.keys.sorted().filter { $0 > marker }
    let shown = numbers.prefix(maxParts)
    var xml = XMLWriter()
    xml.open("ListPartsResult", attributes: "xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\"")
    xml.element("Bucket", bucket)
    xml.element("Key", name)
    xml.element("UploadId", id)
    xml.element("PartNumberMarker", String(marker))
    if let last = shown.last { xml.element("NextPartNumberMarker", String(last)) }
    xml.element("MaxParts", String(maxParts))
    xml.element("IsTruncated", shown.count < numbers.count ? "true" : "false")
    for number in shown {
      guard let info = upload.parts[number] else { continue }
      xml.open("Part")
      xml.element("PartNumber", String(number))
      xml.element("LastModified", Timestamp.format(milliseconds: info.modified))
      xml.element("ETag", "\"" + Hex.encode(info.md5) + "\"")
      xml.element("Size", String(info.size))
      xml.close("Part")
    }
    xml.close("ListPartsResult")
    return xml.response()
  }
}

/// A purpose-built reader of CompleteMultipartUpload documents: it finds each `<Part>` element
/// and its `<PartNumber>` and `<ETag>` in one linear pass, without recursion, over a body the
/// HTTP layer already bounded (metadata-sized).
enum XMLCompleteDocument {
  static func parts(_ body: [UInt8]) throws(XMLError) -> [(number: Int, md5: [UInt8]?)] {
    var parts: [(number: Int, md5: [UInt8]?)] = []
    var position = 0
    guard find(Array("<CompleteMultipartUpload".utf8), in: body, from: 0) != nil else {
      throw XMLError(400, "MalformedXML", "The body is not a CompleteMultipartUpload document.")
    }
    while let start = find(Array("<Part>".utf8), in: body, from: position) {
      guard let end = find(Array("</Part>".utf8), in: body, from: start) else {
        throw XMLError(400, "MalformedXML", "A <Part> element is not closed.")
      }
      let element = Array(body[(start + 6)..<end])
      position = end + 7
      guard parts.count < MultipartUploads.maxParts else {
        throw XMLError(400, "MalformedXML", "More than \(MultipartUploads.maxParts) parts.")
      }
      guard let numberText = text(of: "PartNumber", in: element), let number = Int(numberText),
        (1...MultipartUploads.maxParts).contains(number)
      else {
        throw XMLError(400, "MalformedXML", "Every <Part> needs a <PartNumber> of 1 to \(MultipartUploads.maxParts).")
      }
      var md5: [UInt8]?
      if var tag = text(of: "ETag", in: element) {
        tag = tag.replacing("&quot;", with: "\"").trimmingScalars(where: { $0 == "\"" || $0 == " " })
        guard let bytes = Hex.decode(tag), bytes.count == 16 else {
          throw XMLError(400, "InvalidPart", "The ETag of part \(number) is not one this emulator gave out.")
        }
        md5 = bytes
      }
      parts.append((number, md5))
    }
    guard !parts.isEmpty else { throw XMLError(400, "MalformedXML", "The document lists no <Part>.") }
    return parts
  }

  private static func text(of tag: String, in element: [UInt8]) -> String? {
    let open = Array("<\(tag)>".utf8)
    guard let start = find(open, in: element, from: 0),
      let end = find(Array("</\(tag)>".utf8), in: element, from: start + open.count)
    else { return nil }
    return String(decoding: element[(start + open.count)..<end], as: UTF8.self).trimmingWhitespaceAndNewlines()
  }

  private static func find(_ needle: [UInt8], in haystack: [UInt8], from start: Int) -> Int? {
    guard needle.count <= haystack.count, start <= haystack.count - needle.count else { return nil }
    var index = start
    while index <= haystack.count - needle.count {
      if haystack[index] == needle[0] && haystack[index..<(index + needle.count)].elementsEqual(needle) { return index }
      index += 1
    }
    return nil
  }
}
