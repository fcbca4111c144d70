import Foundation
import Testing

@testable import EmulatorHTTP

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Each event loop implementation on its own (epoll and poll): work handed to it runs on its one
/// thread, in order; readiness of a registered descriptor reaches its handler, and only the
/// readiness asked for; a stopped loop drops work instead of running it.
@Suite struct EventLoopTests {
  static let kinds: [EventLoopKind] = [.epoll, .portable]

  final class Recorder: EventLoopHandler, @unchecked Sendable {
    // Touched on the loop's thread, read after `done` fires.
    var events: [(readable: Bool, writable: Bool, failed: Bool)] = []
    let done = DispatchSemaphore(value: 0)
    let fd: Int32

    init(fd: Int32) { self.fd = fd }

    func handleEvents(readable: Bool, writable: Bool, failed: Bool) {
      events.append((readable, writable, failed))
      if readable {
        // Level-triggered: what is not read is reported again.
        var byte: UInt8 = 0
        _ = read(fd, &byte, 1)
      }
      done.signal()
    }
  }

  @Test(arguments: kinds)
  func workRunsOnTheLoopThreadInTheOrderItWasQueued(kind: EventLoopKind) {
    let loop = makeEventLoop(kind, name: "test.loop")
    defer { loop.stop() }
    let seen = NSLock()
    nonisolated(unsafe) var order: [Int] = []
    nonisolated(unsafe) var threads = Set<pthread_t>()
    let finished = DispatchSemaphore(value: 0)
    DispatchQueue.concurrentPerform(iterations: 4) { producer in
      for step in 0..<250 {
        loop.execute {
          seen.withLock {
            order.append(producer * 1000 + step)
            threads.insert(pthread_self())
            if order.count == 1000 { finished.signal() }
          }
        }
      }
    }
    #expect(finished.wait(timeout: .now() + 10) == .success)
    seen.withLock {
      #expect(threads.count == 1)
      for producer in 0..<4 {
        let mine = order.filter { $0 / 1000 == producer }
        #expect(mine == (0..<250).map { producer * 1000 + $0 })
      }
    }
  }

  /// Work for the end of the turn runs on the loop's thread after the work that scheduled it has
  /// returned; work the loop's thread queues for itself runs without a wake-up (the turn it was
  /// queued in runs it; the test would time out otherwise); from another thread, `afterTurn`
  /// still runs the work on the loop's thread.
  @Test(arguments: kinds)
  func workForTheEndOfATurnRunsAfterTheWorkThatScheduledIt(kind: EventLoopKind) {
    let loop = makeEventLoop(kind, name: "test.loop")
    defer { loop.stop() }
    let log = StepLog()
    let record = log.record
    let finished = DispatchSemaphore(value: 0)
    loop.execute {
      record("work begins")
      loop.work.afterTurn {
        record("turn end")
        loop.execute {
          record("queued by the turn end")
          finished.signal()
        }
      }
      loop.execute { record("queued by the work") }
      record("work ends")
    }
    #expect(finished.wait(timeout: .now() + 10) == .success)
    let fromAnother = DispatchSemaphore(value: 0)
    loop.work.afterTurn {
      record("from another thread")
      fromAnother.signal()
    }
    #expect(fromAnother.wait(timeout: .now() + 10) == .success)
    log.read { order, threads in
      #expect(
        order == [
          "work begins", "work ends", "turn end", "queued by the work", "queued by the turn end",
          "from another thread",
        ])
      #expect(threads.count == 1)
    }
  }

  /// Steps recorded from any thread, with the threads they ran on.
  final class StepLog: @unchecked Sendable {
    // Touched only under `lock`.
    private let lock = NSLock()
    private var order: [String] = []
    private var threads = Set<pthread_t>()

    @Sendable func record(_ step: String) {
      lock.withLock {
        order.append(step)
        threads.insert(pthread_self())
      }
    }

    func read(_ body: ([String], Set<pthread_t>) -> Void) { lock.withLock { body(order, threads) } }
  }

  @Test(arguments: kinds)
  func readinessOfARegisteredSocketReachesItsHandler(kind: EventLoopKind) throws {
    var pair: [Int32] = [0, 0]
    #if canImport(Glibc)
      let stream = Int32(SOCK_STREAM.rawValue)
    #else
      let stream = SOCK_STREAM
    #endif
    #expect(socketpair(AF_UNIX, stream, 0, &pair) == 0)
    let fds = pair
    defer {
      close(fds[0])
      close(fds[1])
    }
    let loop = makeEventLoop(kind, name: "test.loop")
    defer { loop.stop() }
    let recorder = Recorder(fd: fds[0])
    let registered = DispatchSemaphore(value: 0)
    loop.execute {
      #expect(loop.register(fds[0], recorder, reading: true, writing: false))
      registered.signal()
    }
    #expect(registered.wait(timeout: .now() + 5) == .success)
    #expect(write(fds[1], "x", 1) == 1)
    #expect(recorder.done.wait(timeout: .now() + 5) == .success)
    // Now writability only.
    let switched = DispatchSemaphore(value: 0)
    loop.execute {
      loop.update(fds[0], reading: false, writing: true)
      switched.signal()
    }
    #expect(switched.wait(timeout: .now() + 5) == .success)
    #expect(recorder.done.wait(timeout: .now() + 5) == .success)
    let deregistered = DispatchSemaphore(value: 0)
    loop.execute {
      loop.deregister(fds[0])
      deregistered.signal()
    }
    #expect(deregistered.wait(timeout: .now() + 5) == .success)
    let events = recorder.events
    #expect(events.first.map { $0.readable && !$0.writable } == true)
    #expect(events.dropFirst().first.map { $0.writable && !$0.readable } == true)
  }

  /// What a deferred reply asks to know whether it can be completed without the loop's queue.
  @Test(arguments: kinds)
  func aLoopKnowsItsOwnThread(kind: EventLoopKind) {
    let loop = makeEventLoop(kind, name: "test.loop")
    let other = makeEventLoop(kind, name: "test.other")
    defer {
      loop.stop()
      other.stop()
    }
    #expect(!loop.work.isCurrentThread)
    let answers = Answers()
    let done = DispatchSemaphore(value: 0)
    loop.execute {
      answers.append(loop.work.isCurrentThread)
      answers.append(other.work.isCurrentThread)
      DispatchQueue.global().async {
        answers.append(loop.work.isCurrentThread)
        done.signal()
      }
    }
    #expect(done.wait(timeout: .now() + 5) == .success)
    #expect(answers.value == [true, false, false])
  }

  /// Answers collected from several threads, under a lock.
  final class Answers: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: [Bool] = []
    var value: [Bool] { lock.withLock { stored } }
    func append(_ answer: Bool) { lock.withLock { stored.append(answer) } }
  }

  @Test(arguments: kinds)
  func aStoppedLoopDropsWork(kind: EventLoopKind) {
    let loop = makeEventLoop(kind, name: "test.loop")
    loop.stop()
    let stopped = DispatchSemaphore(value: 0)
    DispatchQueue.global().async {
      while !loop.isStopped { usleep(1000) }
      stopped.signal()
    }
    #expect(stopped.wait(timeout: .now() + 5) == .success)
    let ran = DispatchSemaphore(value: 0)
    loop.execute { ran.signal() }
    #expect(ran.wait(timeout: .now() + 0.2) == .timedOut)
  }
}
