import Dispatch
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Work split into parts done side by side, one per core: for filling a large array whose
/// elements are independent of each other (decoding a snapshot's tasks, making items of
/// records). Most of that time goes to memory the process touches for the first time, which
/// costs the kernel about as much as the work itself, and two cores take it in half the time.
///
/// Invariant: the parts cover the elements exactly, disjoint and in order
/// (``coverageViolations(_:count:)``), so no element is touched by two threads or by none.
enum SideBySide {
    /// Below this many elements a part is not worth a second thread.
    static let smallestPart = 2048

    /// The cores this process may run on (at least 1).
    static let cores: Int = max(1, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN))))

    /// `0..<count` split into near-equal parts, one per core, each at least ``smallestPart``
    /// long (one part when it is shorter).
    static func parts(of count: Int) -> [Range<Int>] {
        let n = max(1, min(cores, count / smallestPart))
        return (0..<n).map { (count * $0 / n)..<(count * ($0 + 1) / n) }
    }

    /// Calls `body` with each part's number and bounds, side by side when there is more than
    /// one. `body` must touch only its own part's elements.
    static func forEach(_ parts: [Range<Int>], _ body: @Sendable (Int, Range<Int>) -> Void) {
        guard parts.count > 1 else {
            if let only = parts.first { body(0, only) }
            return
        }
        DispatchQueue.concurrentPerform(iterations: parts.count) { body($0, parts[$0]) }
    }
}

/// A pointer handed to the parts of ``SideBySide/forEach(_:_:)``, each of which
/// touches only its own elements through it.
struct Shared<Pointer>: @unchecked Sendable {
    let pointer: Pointer?
    init(_ pointer: Pointer?) { self.pointer = pointer }
}
