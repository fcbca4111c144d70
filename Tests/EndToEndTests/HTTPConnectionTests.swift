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
    for index in 0..<100 { batch += "GET /b/bkt/o/p\(index % 10)?alt=media HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n" }
    socket.send(batch)
    let responses = socket.receiveResponses(100)
    #expect(responses.count == 100)
    for (index, response) in responses.enumerated() {
      #expect(response.hasPrefix("HTTP/1.1 200"))
      #expect(response.hasSuffix("body-\(index % 10)"))
    }
    try stillServes()
  }

  /// PATCHes are answered later, from the store's writer: pipelined on one connection they are
  /// still answered in order, each with its own change, and an invalid one (answered at once)
  /// takes its place in the sequence.
  @Test func pipelinedPatchesAreAnsweredInOrderEachWithItsOwnChange() throws {
    defer { server.stop() }
    let socket = try RawSocket(port: server.port)
    var batch = ""
    for index in 0..<40 {
      let body = index == 20 ? "{\"metadata\":" : "{\"metadata\":{\"step\":\"\(index)\"}}"
      batch += "PATCH /storage/v1/b/bkt/o/o HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)"
    }
    socket.send(batch + "GET /storage/v1/b/bkt/o/o HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
    let responses = socket.receiveResponses(41)
    #expect(responses.count == 41)
    var metageneration = 1
    for (index, response) in responses.prefix(40).enumerated() {
      if index == 20 {
        #expect(response.hasPrefix("HTTP/1.1 400"))
        continue
      }
      metageneration += 1
      #expect(response.hasPrefix("HTTP/1.1 200"))
      #expect(response.contains("\"metageneration\":\"\(metageneration)\""))
      #expect(response.contains("\"step\":\"\(index)\""))
    }
    #expect(responses.last?.contains("\"metageneration\":\"40\"") == true)
    #expect(responses.last?.contains("\"step\":\"39\"") == true)
    try stillServes()
  }

  @Test func expectContinueGetsAnInterimResponse() throws {
    defer { server.stop() }
    let socket = try RawSocket(port: server.port)
    socket.send(
      "POST /upload/storage/v1/b/bkt/o?uploadType=media&name=big HTTP/1.1\r\nHost: 127.0.0.1\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\n"
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
      "PATCH /storage/v1/b/bkt/o/o HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\n"
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
    socket.send("GARBAGE\r\n\r\nGET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
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
    socket.send("GET /" + String(repeating: "a", count: 9000) + " HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
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
      socket.send("GET /b/bkt/o/o HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Partial: ")
      stalled.append(socket)
    }
    let body = try RawSocket(port: server.port)
    body.send("PATCH /b/bkt/o/o HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 100\r\n\r\n{")
    let start = Date()
    try stillServes()
    #expect(Date().timeIntervalSince(start) < 2)
    #expect(stalled.count == 50)
  }

  @Test func aClientThatClosesEarlyDoesNotHurtTheServer() throws {
    defer { server.stop() }
    for _ in 0..<20 {
      let socket = try RawSocket(port: server.port)
      socket.send("GET /b/bkt/o/o?alt=media HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
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

/// Attacks on the connection layer, each followed by a normal request that must still work.
@Suite struct ConnectionAbuseTests {
  func makeServer(_ configure: (inout EmulatorConfiguration) -> Void = { _ in }) throws -> RunningEmulator {
    let server = try RunningEmulator(inMemory: true) { configuration in
      configuration.server.timeouts.idleSeconds = 1
      configuration.server.timeouts.headerSeconds = 1
      configuration.server.timeouts.bodyStallSeconds = 1
      configuration.server.timeouts.writeStallSeconds = 1
      configure(&configuration)
    }
    _ = try Curl.request("POST", server.base + "/upload/storage/v1/b/bkt/o?uploadType=media&name=o", body: "hello")
    return server
  }

  func stillServes(_ server: RunningEmulator) throws {
    #expect(try Curl.request("GET", server.base + "/storage/v1/b/bkt/o/o?alt=media").text == "hello")
  }

  @Test func testDripFedHeadersAreCutOffWith408() throws {
    let server = try makeServer()
    defer { server.stop() }
    let socket = try RawSocket(port: server.port, receiveTimeout: 0.2)
    socket.send("GET /b/bkt/o/o HTTP/1.1\r\n")
    var received: [UInt8] = []
    var closed = false
    let start = Date()
    for index in 0..<20 where !closed {
      socket.send("X-Drip-\(index): y\r\n")
      let (bytes, eof) = socket.receive()
      received += bytes
      closed = eof
    }
    #expect(String(decoding: received, as: UTF8.self).hasPrefix("HTTP/1.1 408"))
    #expect(closed)
    #expect(Date().timeIntervalSince(start) < 3.5)
    try stillServes(server)
  }

  @Test func testIdleKeepAliveConnectionsAreClosed() throws {
    let server = try makeServer()
    defer { server.stop() }
    // The idle timeout is 1 s; the wait is generous so a loaded machine (CI runs the suite twice,
    // once per event loop) cannot turn a late close into a failure.
    let socket = try RawSocket(port: server.port, receiveTimeout: 8)
    socket.send("GET /b/bkt/o/o?alt=media HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
    #expect(socket.receiveResponses(1).first?.hasSuffix("hello") == true)
    let (rest, closed) = socket.receive()
    #expect(rest.isEmpty && closed)
    try stillServes(server)
  }

  @Test func testStalledBodyIsCutOff() throws {
    let server = try makeServer()
    defer { server.stop() }
    // The stall limit is 1 s; the wait is long so that a loaded machine (the whole suite runs
    // in parallel) cannot fail it, while a server that never cuts the body off still does.
    let socket = try RawSocket(port: server.port, receiveTimeout: 10)
    socket.send("PATCH /b/bkt/o/o HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 100\r\n\r\n{\"meta")
    let (_, closed) = socket.receive()
    #expect(closed)
    #expect(try Curl.request("GET", server.base + "/b/bkt/o/o").json["metageneration"] as? String == "1")
  }

  @Test func testClientThatNeverReadsItsResponseIsDroppedWithoutHarm() throws {
    let server = try makeServer()
    defer { server.stop() }
    let big = [UInt8](repeating: 42, count: 8 << 20)
    _ = try Curl().perform("POST", server.base + "/upload/storage/v1/b/bkt/o?uploadType=media&name=big", body: big)
    let socket = try RawSocket(port: server.port)
    var requests = ""
    for _ in 0..<20 { requests += "GET /b/bkt/o/big?alt=media HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n" }
    socket.send(requests)
    // The server is blocked writing to that socket; others are served all the while.
    for _ in 0..<5 { try stillServes(server) }
    let deadline = Date().addingTimeInterval(5)
    while server.emulator.server.connectionCount > 0 && Date() < deadline { usleep(50_000) }
    #expect(server.emulator.server.connectionCount == 0)
    try stillServes(server)
  }

  @Test func testHalfClosedSocketStillGetsItsAnswer() throws {
    let server = try makeServer()
    defer { server.stop() }
    let socket = try RawSocket(port: server.port)
    socket.send("GET /b/bkt/o/o?alt=media HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
    shutdown(socket.fd, Int32(SHUT_WR))
    let (bytes, closed) = socket.receive()
    let text = String(decoding: bytes, as: UTF8.self)
    #expect(text.hasPrefix("HTTP/1.1 200") && text.hasSuffix("hello"))
    #expect(closed)
    try stillServes(server)
  }

  @Test func testThousandConcurrentConnectionsAreAllServed() throws {
    let server = try makeServer { $0.server.timeouts.idleSeconds = 30 }
    defer { server.stop() }
    var sockets: [RawSocket] = []
    for _ in 0..<1000 { sockets.append(try RawSocket(port: server.port)) }
    for socket in sockets { socket.send("GET /b/bkt/o/o?alt=media HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n") }
    var served = 0
    for socket in sockets where socket.receiveResponses(1).first?.hasSuffix("hello") == true { served += 1 }
    #expect(served == 1000)
    #expect(server.emulator.server.connectionCount >= 1000)
    try stillServes(server)
  }

  @Test func testConnectionFloodPastTheCapIsRefusedCleanly() throws {
    let server = try makeServer { $0.server.maxConnections = 5 }
    defer { server.stop() }
    var held: [RawSocket] = []
    for _ in 0..<5 {
      let socket = try RawSocket(port: server.port)
      socket.send("GET /b/bkt/o/o?alt=media HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
      #expect(socket.receiveResponses(1).count == 1)
      held.append(socket)
    }
    let refused = try RawSocket(port: server.port)
    let (bytes, closed) = refused.receive()
    let text = String(decoding: bytes, as: UTF8.self)
    #expect(text.hasPrefix("HTTP/1.1 503"))
    #expect(text.lowercased().contains("retry-after: 1"))
    #expect(text.contains("Too many open connections"))
    #expect(closed)
    held.removeAll()
    let deadline = Date().addingTimeInterval(3)
    while server.emulator.server.connectionCount > 0 && Date() < deadline { usleep(20_000) }
    try stillServes(server)
  }
}

import EmulatorApp

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif
