import Foundation
import Testing

/// The HTTP layer over real sockets: keep-alive, pipelining, Expect, chunked bodies, HTTP/1.0,
/// malformed and stalled clients. After each, the server still answers a normal request.
@Suite struct HTTPConnectionTests {
  let server: RunningEmulator

  init() throws {
    server = try RunningEmulator(inMemory: true)
    _ = try Curl.request("POST", server.base + "/upload/storage/v1/b/bkt/o?uploadType=media&name=o", body: "hello")
  }

  func stillServes() throws {
    #expect(try Curl.request("GET", server.base + "/storage/v1/b/bkt/o/o?alt=media").text == "hello")
  }

  @Test func keepAliveReusesOneConnection() throws {
    defer { server.stop() }
    let curl = Curl()
    let first = try curl.perform("GET", server.base + "/storage/v1/b/bkt/o/o")
    let second = try curl.perform("PATCH", server.base + "/storage/v1/b/bkt/o/o", body: Array("{}".utf8))
    let third = try curl.perform("GET", server.base + "/storage/v1/b/bkt/o/o?alt=media")
    #expect(first.newConnections == 1)
    #expect(second.newConnections == 0 && third.newConnections == 0)
    #expect(third.text == "hello")
  }

  @Test func pipelinedRequestsAreAnsweredInOrder() throws {
    defer { server.stop() }
    for index in 0..<10 {
      _ = try Curl.request(
        "POST", server.base + "/upload/storage/v1/b/bkt/o?uploadType=media&name=p\(index)", body: "body-\(index)")
    }
    let socket = try RawSocket(port: server.port)
    var batch = ""
    for index in 0..<100 { batch += "GET /b/bkt/o/p\(index % 10)?alt=media HTTP/1.1\r\nHost: x\r\n\r\n" }
    socket.send(batch)
    let responses = socket.receiveResponses(100)
    #expect(responses.count == 100)
    for (index, response) in responses.enumerated() {
      #expect(response.hasPrefix("HTTP/1.1 200"))
      #expect(response.hasSuffix("body-\(index % 10)"))
    }
    try stillServes()
  }

  @Test func expectContinueGetsAnInterimResponse() throws {
    defer { server.stop() }
    let socket = try RawSocket(port: server.port)
    socket.send(
      "POST /upload/storage/v1/b/bkt/o?uploadType=media&name=big HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\n"
    )
    let interim = socket.receive { String(decoding: $0, as: UTF8.self).contains("\r\n\r\n") }
    #expect(String(decoding: interim.bytes, as: UTF8.self) == "HTTP/1.1 100 Continue\r\n\r\n")
    socket.send("abcde")
    let final = socket.receiveResponses(1)
    #expect(final.first?.hasPrefix("HTTP/1.1 200") == true)
    // libcurl sends Expect: 100-continue on its own for bodies over 1 MiB.
    let big = [UInt8](repeating: 7, count: 2 << 20)
    let reply = try Curl().perform(
      "POST", server.base + "/upload/storage/v1/b/bkt/o?uploadType=media&name=big2", body: big)
    #expect(reply.status == 200)
    #expect(reply.json["size"] as? String == String(2 << 20))
  }

  @Test func chunkedRequestBodiesAreAccepted() throws {
    defer { server.stop() }
    let socket = try RawSocket(port: server.port)
    socket.send(
      "PATCH /storage/v1/b/bkt/o/o HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
        + "a;ext=1\r\n{\"metadata\r\n12\r\n\":{\"via\":\"chunk\"}}\r\n0\r\nTrailer: t\r\n\r\n")
    let response = socket.receiveResponses(1).first ?? ""
    #expect(response.hasPrefix("HTTP/1.1 200"))
    #expect(response.contains(#""via":"chunk""#))
  }

  @Test func http10GetsAnAnswerAndTheConnectionCloses() throws {
    defer { server.stop() }
    let socket = try RawSocket(port: server.port)
    socket.send("GET /b/bkt/o/o?alt=media HTTP/1.0\r\n\r\n")
    let (bytes, closed) = socket.receive()
    let text = String(decoding: bytes, as: UTF8.self)
    #expect(text.hasPrefix("HTTP/1.1 200"))
    #expect(text.hasSuffix("hello"))
    #expect(closed)
  }

  @Test func aMalformedRequestGetsOne400AndTheConnectionCloses() throws {
    defer { server.stop() }
    let socket = try RawSocket(port: server.port)
    socket.send("GARBAGE\r\n\r\nGET / HTTP/1.1\r\nHost: x\r\n\r\n")
    let (bytes, closed) = socket.receive()
    let text = String(decoding: bytes, as: UTF8.self)
    #expect(text.hasPrefix("HTTP/1.1 400"))
    #expect(text.contains("connection: close"))
    #expect(text.contains(#""error":{"code":400"#))
    #expect(RawSocket.split(bytes).count == 1)
    #expect(closed)
    try stillServes()
  }

  @Test func oversizeRequestLineIs414() throws {
    defer { server.stop() }
    let socket = try RawSocket(port: server.port)
    socket.send("GET /" + String(repeating: "a", count: 9000) + " HTTP/1.1\r\nHost: x\r\n\r\n")
    let text = String(decoding: socket.receive().bytes, as: UTF8.self)
    #expect(text.hasPrefix("HTTP/1.1 414"))
    try stillServes()
  }

  @Test func oversizeMetadataBodyIs413AndChangesNothing() throws {
    defer { server.stop() }
    let big = #"{"metadata":{"k":""# + String(repeating: "x", count: 2 << 20) + #""}}"#
    let reply = try Curl().perform("PATCH", server.base + "/storage/v1/b/bkt/o/o", body: Array(big.utf8))
    #expect(reply.status == 413)
    let meta = try Curl.request("GET", server.base + "/storage/v1/b/bkt/o/o")
    #expect(meta.json["metageneration"] as? String == "1")
  }

  @Test func stalledClientsDoNotHoldUpOthers() throws {
    defer { server.stop() }
    var stalled: [RawSocket] = []
    for _ in 0..<50 {
      let socket = try RawSocket(port: server.port)
      socket.send("GET /b/bkt/o/o HTTP/1.1\r\nHost: x\r\nX-Partial: ")
      stalled.append(socket)
    }
    let body = try RawSocket(port: server.port)
    body.send("PATCH /b/bkt/o/o HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{")
    let start = Date()
    try stillServes()
    #expect(Date().timeIntervalSince(start) < 2)
    #expect(stalled.count == 50)
  }

  @Test func aClientThatClosesEarlyDoesNotHurtTheServer() throws {
    defer { server.stop() }
    for _ in 0..<20 {
      let socket = try RawSocket(port: server.port)
      socket.send("GET /b/bkt/o/o?alt=media HTTP/1.1\r\nHost: x\r\n\r\n")
    }
    try stillServes()
  }
}

@Suite struct LargeTransferTests {
  @Test func tenMiBResumableUploadThenRangesStreamedFromDisk() throws {
    let server = try RunningEmulator()
    defer {
      server.stop()
      server.removeFolder()
    }
    let size = 10 << 20
    let data = (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 2_654_435_761 >> 13) }
    let start = try Curl.request(
      "POST", server.base + "/upload/storage/v1/b/bkt/o?uploadType=resumable&name=big.bin", body: "{}",
      headers: ["X-Upload-Content-Length: \(size)"])
    let location = try #require(start.header("location"))
    let half = 4 << 20
    let first = try Curl().perform(
      "PUT", location, body: Array(data[0..<half]), headers: ["Content-Range: bytes 0-\(half - 1)/\(size)"])
    #expect(first.status == 308)
    #expect(first.header("range") == "bytes=0-\(half - 1)")
    let last = try Curl().perform(
      "PUT", location, body: Array(data[half...]), headers: ["Content-Range: bytes \(half)-\(size - 1)/\(size)"])
    #expect(last.status == 200)
    #expect(last.json["size"] as? String == String(size))
    let whole = try Curl().perform("GET", server.base + "/download/storage/v1/b/bkt/o/big.bin?alt=media")
    #expect(whole.body == data)
    let range = try Curl().perform(
      "GET", server.base + "/download/storage/v1/b/bkt/o/big.bin?alt=media", headers: ["Range: bytes=5000000-5000009"])
    #expect(range.status == 206)
    #expect(range.body == Array(data[5_000_000...5_000_009]))
    // A big media upload is spooled to disk and moved into place.
    let media = try Curl().perform(
      "POST", server.base + "/upload/storage/v1/b/bkt/o?uploadType=media&name=media.bin", body: data)
    #expect(media.json["md5Hash"] as? String == last.json["md5Hash"] as? String)
    let tmp = try FileManager.default.contentsOfDirectory(
      atPath: server.dataDirectory.appendingPathComponent("tmp").path)
    #expect(tmp.isEmpty)
  }
}
