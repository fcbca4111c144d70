/// Matching: the compiled program as flat arrays (`Machine`), run as a Thompson simulation over
/// the name's characters, linear in the name's length.
extension Glob {
  /// The program in flat arrays of integers, so a step copies no reference-counted payload.
  struct Machine: Sendable {
    enum Op: UInt8 { case character, anyButSlash, any, charClass, starAnyButSlash, starAny, fork, jump, accept }
    var ops: [Op] = []
    /// `character`: the scalar; `charClass`: its index; `jump`: the target; `fork`: where its
    /// targets start in `targets`.
    var args: [Int32] = []
    /// `fork`: how many targets.
    var counts: [Int32] = []
    var targets: [Int32] = []
    var classes: [(ranges: [ClosedRange<UInt32>], negated: Bool)] = []

    init(_ program: [Instruction]) {
      for instruction in program {
        var arg: Int32 = 0
        var count: Int32 = 0
        let op: Op
        switch instruction {
        case .consume(.character(let scalar)): (op, arg) = (.character, Int32(bitPattern: scalar))
        case .consume(.anyButSlash): op = .anyButSlash
        case .consume(.any): op = .any
        case .star(.any): op = .starAny
        case .star(_): op = .starAnyButSlash
        case .consume(.charClass(let ranges, let negated)):
          (op, arg) = (.charClass, Int32(classes.count))
          classes.append((ranges, negated))
        case .fork(let to):
          (op, arg, count) = (.fork, Int32(targets.count), Int32(to.count))
          targets.append(contentsOf: to.reversed().map { Int32($0) })  // pushed, so popped in order
        case .jump(let target): (op, arg) = (.jump, Int32(target))
        case .accept: op = .accept
        }
        ops.append(op)
        args.append(arg)
        counts.append(count)
      }
    }

    private static let slash = UInt32(UInt8(ascii: "/"))

    /// Whether consuming state `state` accepts `character`.
    func accepts(_ state: Int, _ character: UInt32) -> Bool {
      switch ops[state] {
      case .character: return UInt32(bitPattern: args[state]) == character
      case .anyButSlash, .starAnyButSlash: return character != Self.slash
      case .any, .starAny: return true
      case .charClass:
        guard character != Self.slash else { return false }
        let entry = classes[Int(args[state])]
        return entry.ranges.contains { $0.contains(character) } != entry.negated
      case .fork, .jump, .accept: return false
      }
    }
  }

  /// The set of live states, advanced one character at a time (a Thompson simulation). Its
  /// four work areas are allocated once per name, each as large as the program, and every index
  /// written is a state number below that size (a state is added to `next` and to the stack only
  /// when unmarked, so each holds every state at most once per round; a fork pushes its
  /// targets only when visited, once per round, so the stack never holds more than the program).
  struct Simulation {
    let machine: Machine
    let size: Int
    var current: UnsafeMutablePointer<Int32>
    var next: UnsafeMutablePointer<Int32>
    var currentCount = 0
    var nextCount = 0
    /// `mark[state] == generation`: already in `next` this round.
    let mark: UnsafeMutablePointer<UInt32>
    var generation: UInt32 = 0
    let stack: UnsafeMutablePointer<Int32>

    init(machine: Machine) {
      self.machine = machine
      size = machine.ops.count
      current = .allocate(capacity: size)
      next = .allocate(capacity: size)
      mark = .allocate(capacity: size)
      mark.initialize(repeating: 0, count: size)
      stack = .allocate(capacity: size + machine.targets.count + 1)
    }

    func deallocate() {
      current.deallocate()
      next.deallocate()
      mark.deallocate()
      stack.deallocate()
    }

    var accepts: Bool { (0..<currentCount).contains { machine.ops[Int(current[$0])] == .accept } }

    /// Adds `state` and everything reachable from it without consuming to `next`.
    private mutating func add(_ state: Int32, _ steps: inout Int) {
      var depth = 1
      stack[0] = state
      while depth > 0 {
        depth -= 1
        let index = Int(stack[depth])
        guard mark[index] != generation else { continue }
        mark[index] = generation
        steps += 1
        switch machine.ops[index] {
        case .jump:
          stack[depth] = machine.args[index]
          depth += 1
        case .fork:
          let start = Int(machine.args[index])
          for target in machine.targets[start..<(start + Int(machine.counts[index]))] {
            stack[depth] = target
            depth += 1
          }
        case .starAny, .starAnyButSlash:
          // Alive itself, and what follows it is reachable at once.
          next[nextCount] = Int32(index)
          nextCount += 1
          stack[depth] = Int32(index + 1)
          depth += 1
        default:
          next[nextCount] = Int32(index)
          nextCount += 1
        }
      }
    }

    mutating func start(_ steps: inout Int) {
      generation += 1
      add(0, &steps)
      swap(&current, &next)
      currentCount = nextCount
    }

    /// Advances over one character; false when no state is left alive.
    mutating func step(_ character: UInt32, _ steps: inout Int) -> Bool {
      generation += 1
      nextCount = 0
      for position in 0..<currentCount {
        steps += 1
        let state = current[position]
        guard machine.accepts(Int(state), character) else { continue }
        switch machine.ops[Int(state)] {
        case .starAny, .starAnyButSlash: add(state, &steps)  // stays alive
        default: add(state + 1, &steps)
        }
      }
      swap(&current, &next)
      currentCount = nextCount
      return currentCount > 0
    }
  }
}
