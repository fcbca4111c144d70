extension UploadSessions {
  /// The sessions by id, with how many are active and finished (kept in step by every change).
  struct Table {
    private(set) var sessions: [String: UploadSession] = [:]
    private(set) var active = 0
    private(set) var finished = 0
    /// The order sessions finished in (a tie-break when several finish within one millisecond).
    private var finishOrder: [String: UInt64] = [:]
    private var nextFinish: UInt64 = 0

    var count: Int { sessions.count }
    var keys: Dictionary<String, UploadSession>.Keys { sessions.keys }
    subscript(id: String) -> UploadSession? { sessions[id] }

    @discardableResult
    mutating func removeValue(forKey id: String) -> UploadSession? {
      guard let old = sessions.removeValue(forKey: id) else { return nil }
      count(old, -1)
      finishOrder[id] = nil
      return old
    }

    mutating func put(_ session: UploadSession) {
      if let old = sessions.updateValue(session, forKey: session.id) { count(old, -1) }
      count(session, 1)
      if session.state != .active && finishOrder[session.id] == nil {
        finishOrder[session.id] = nextFinish
        nextFinish += 1
      }
    }

    /// The finished session finished longest ago (by `touched`, then by the order they finished).
    func oldestFinished() -> UploadSession? {
      sessions.values.filter { $0.state != .active }.min {
        ($0.touched, finishOrder[$0.id] ?? 0) < ($1.touched, finishOrder[$1.id] ?? 0)
      }
    }

    private mutating func count(_ session: UploadSession, _ delta: Int) {
      if session.state == .active { active += delta } else { finished += delta }
    }
  }
}
