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

  /// Lowers the calling thread's scheduling priority, for work nobody waits on (snapshots and
  /// compaction while requests are served): on Linux a nice value 10 above the thread's (at most 19), for this thread alone
  /// (`setpriority` with 0 names the calling thread there), on Darwin the utility QoS class. It
  /// still gets about a tenth of a busy core, so it finishes under sustained load.
  public static func lowerCurrentThreadPriority() {
    #if canImport(Glibc)
      let which = __priority_which_t(PRIO_PROCESS.rawValue)
      _ = setpriority(which, 0, min(getpriority(which, 0) + 10, 19))
    #elseif canImport(Darwin)
      _ = pthread_set_qos_class_self_np(QOS_CLASS_UTILITY, 0)
    #endif
  }

  /// At most 15 bytes (Linux's limit for a thread's name, without the terminating zero).
  static func shortName(_ name: String) -> String {
    guard name.utf8.count > 15 else { return name }
    var tail = name.split(separator: ".").last.map(String.init) ?? name
    while tail.utf8.count > 15 { tail.removeLast() }
    return tail
  }

  /// The calling thread's identity as a number (never 0), for storing in an atomic.
  public static func currentID() -> UInt {
    #if canImport(Glibc)
      return UInt(pthread_self())
    #else
      return UInt(bitPattern: pthread_self())
    #endif
  }

  /// Names the calling thread. On Linux through `pthread_setname_np` (a `prctl(PR_SET_NAME)`,
  /// no file opened), looked up at run time: Glibc's Swift module declares it only with
  /// `_GNU_SOURCE`, which it leaves out. Without it the thread keeps the process's name.
  static func nameCurrentThread(_ name: String) {
    #if canImport(Glibc)
      typealias SetName = @convention(c) (pthread_t, UnsafePointer<CChar>) -> Int32
      guard let symbol = setNameSymbol else { return }
      _ = unsafeBitCast(symbol, to: SetName.self)(pthread_self(), name)
    #elseif canImport(Darwin)
      _ = pthread_setname_np(name)
    #endif
  }

  #if canImport(Glibc)
    /// glibc's `pthread_setname_np`, found once (nil with a C library that has none).
    nonisolated(unsafe) private static let setNameSymbol = dlsym(
      UnsafeMutableRawPointer(bitPattern: 0), "pthread_setname_np")  // RTLD_DEFAULT
  #endif

  private final class Work {
    let name: String?
    let body: @Sendable () -> Void

    init(name: String?, body: @escaping @Sendable () -> Void) {
      self.name = name
      self.body = body
    }

    func run() {
      if let name { BackgroundThread.nameCurrentThread(name) }
      body()
    }
  }
}
