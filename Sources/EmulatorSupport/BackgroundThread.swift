#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Detached threads of their own (event loops, snapshot writers, the snapshot reader), in place
/// of Foundation's `Thread`: one `pthread_create` with an explicit stack size.
public enum BackgroundThread {
  /// Starts `body` on a new detached thread with `stackSize` bytes of stack (address space; only
  /// the pages a thread touches are resident). `name` shows in `top -H` and debuggers; Linux keeps
  /// 15 bytes of it, so a longer name keeps its part after the last `.` (`loop0` of
  /// `storage-emulator.loop0`). A thread that cannot be created stops the process: the server
  /// cannot work without it.
  public static func start(name: String? = nil, stackSize: Int = 1 << 20, _ body: @escaping @Sendable () -> Void) {
    let work = Work(name: name.map(shortName), body: body)
    var attributes = pthread_attr_t()
    pthread_attr_init(&attributes)
    defer { pthread_attr_destroy(&attributes) }
    pthread_attr_setstacksize(&attributes, stackSize)
    pthread_attr_setdetachstate(&attributes, Int32(PTHREAD_CREATE_DETACHED))
    let context = Unmanaged.passRetained(work).toOpaque()
    #if canImport(Glibc)
      var thread = pthread_t()
    #elseif canImport(Darwin)
      var thread: pthread_t?
    #endif
    let result = pthread_create(
      &thread, &attributes,
      { context in
        #if canImport(Glibc)
          let work = Unmanaged<Work>.fromOpaque(context!).takeRetainedValue()
        #elseif canImport(Darwin)
          let work = Unmanaged<Work>.fromOpaque(context).takeRetainedValue()
        #endif
        work.run()
        return nil
      }, context)
    if result != 0 {
      Unmanaged<Work>.fromOpaque(context).release()
      fatalError("cannot start a thread: \(SystemError("pthread_create", code: result))")
    }
  }

  /// At most 15 bytes (Linux's limit for a thread's name, without the terminating zero).
  static func shortName(_ name: String) -> String {
    guard name.utf8.count > 15 else { return name }
    var tail = name.split(separator: ".").last.map(String.init) ?? name
    while tail.utf8.count > 15 { tail.removeLast() }
    return tail
  }

  private final class Work {
    let name: String?
    let body: @Sendable () -> Void

    init(name: String?, body: @escaping @Sendable () -> Void) {
      self.name = name
      self.body = body
    }

    func run() {
      if let name {
        #if canImport(Glibc)
          // pthread_setname_np needs _GNU_SOURCE, which Glibc's Swift module leaves out.
          let fd = SystemCall.retrying { open("/proc/thread-self/comm", O_WRONLY | O_CLOEXEC) }
          if fd >= 0 {
            _ = Array(name.utf8).withUnsafeBytes { SystemCall.writeAll(fd, $0) }
            _ = close(fd)
          }
        #elseif canImport(Darwin)
          _ = pthread_setname_np(name)
        #endif
      }
      body()
    }
  }
}
