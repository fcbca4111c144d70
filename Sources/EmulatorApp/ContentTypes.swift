/// Content types by file extension, for seeded files (the common web, image, document and data
/// types; anything else is `application/octet-stream`, as GCS stores an upload without one).
enum ContentTypes {
  static func forName(_ name: String) -> String {
    let file = name.split(separator: "/", omittingEmptySubsequences: false).last ?? ""
    guard let dot = file.lastIndex(of: "."), dot != file.startIndex else { return "application/octet-stream" }
    return table[file[file.index(after: dot)...].lowercased()] ?? "application/octet-stream"
  }

  static let table: [String: String] = [
    "html": "text/html", "htm": "text/html", "css": "text/css", "js": "text/javascript",
    "mjs": "text/javascript", "json": "application/json", "map": "application/json",
    "txt": "text/plain", "text": "text/plain", "log": "text/plain", "md": "text/markdown",
    "csv": "text/csv", "tsv": "text/tab-separated-values", "xml": "application/xml",
    "yaml": "application/yaml", "yml": "application/yaml", "toml": "application/toml",
    "jpg": "image/jpeg", "jpeg": "image/jpeg", "png": "image/png", "gif": "image/gif",
    "webp": "image/webp", "svg": "image/svg+xml", "ico": "image/x-icon", "bmp": "image/bmp",
    "tif": "image/tiff", "tiff": "image/tiff", "avif": "image/avif", "heic": "image/heic",
    "mp3": "audio/mpeg", "wav": "audio/wav", "ogg": "audio/ogg", "m4a": "audio/mp4", "flac": "audio/flac",
    "mp4": "video/mp4", "m4v": "video/mp4", "mov": "video/quicktime", "webm": "video/webm",
    "pdf": "application/pdf", "zip": "application/zip", "gz": "application/gzip", "tgz": "application/gzip",
    "tar": "application/x-tar", "bz2": "application/x-bzip2", "xz": "application/x-xz",
    "7z": "application/x-7z-compressed", "wasm": "application/wasm", "woff": "font/woff",
    "woff2": "font/woff2", "ttf": "font/ttf", "otf": "font/otf", "parquet": "application/vnd.apache.parquet",
    "avro": "application/avro", "ndjson": "application/x-ndjson", "jsonl": "application/jsonl",
    "proto": "text/plain", "bin": "application/octet-stream",
  ]
}
