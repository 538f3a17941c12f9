import Dispatch
import Synchronization

/// Chunks passed in order from a thread that makes them to the one that uses them, then
/// the maker's outcome: what lets decoding run on a second thread ahead of its use. Chunks
/// the user gives back are freed by the maker, between chunks, in the thread (and malloc
/// arena) that made them: freed by the user instead, the rebuild was no faster, freeing into
/// the maker's arena from another thread taking that arena's lock.
///
/// At most a few chunks wait at once (``init(depth:)``): a maker that runs ahead waits for
/// room, so the memory of the chunks given back is used again for the next ones. Unbounded,
/// a fast maker took fresh memory for every chunk of a file, and each fresh page costs a
/// fault (about 2.5 µs on a virtual machine, more than decoding the operations it holds).
final class Handoff<Chunk: Sendable, Outcome: Sendable>: Sendable {
    enum Item: Sendable {
        case chunk(Chunk)
        case finished(Outcome)
    }

    private let items = Mutex<(queue: [Item?], head: Int, cancelled: Bool)>(([], 0, false))
    private let ready = DispatchSemaphore(value: 0)
    /// Free places in the queue.
    private let room: DispatchSemaphore
    private let spent = Mutex<[Chunk]>([])

    /// - Parameter depth: how many chunks may wait to be taken.
    init(depth: Int = 2) { room = DispatchSemaphore(value: depth) }

    /// Queues a chunk, waiting while the queue is full; false once the user has
    /// stopped taking them. Frees the chunks given back.
    @discardableResult
    func put(_ chunk: Chunk) -> Bool {
        room.wait()
        let given = spent.withLock { spent in
            defer { spent = [] }
            return spent
        }
        withExtendedLifetime(given) {}  // the last reference: freed here, on the maker's thread
        let open = items.withLock { state -> Bool in
            guard !state.cancelled else {
                room.signal()
                return false
            }
            state.queue.append(.chunk(chunk))
            return true
        }
        if open { ready.signal() }
        return open
    }

    func finish(_ outcome: Outcome) {
        items.withLock { $0.queue.append(.finished(outcome)) }
        ready.signal()
    }

    /// Tells the maker that no more chunks are wanted (``put(_:)`` then returns false).
    func cancel() { items.withLock { $0.cancelled = true } }

    /// Hands a used chunk back for the maker to free.
    func giveBack(_ chunk: Chunk) { spent.withLock { $0.append(chunk) } }

    /// The next item, waiting for it. The user takes items until ``Item/finished(_:)``, even
    /// after ``cancel()`` (a maker waiting for room is let go that way).
    func take() -> Item {
        ready.wait()
        let item = items.withLock { state in
            let item = state.queue[state.head]!
            state.queue[state.head] = nil  // the chunk goes with its user
            state.head += 1
            return item
        }
        if case .chunk = item { room.signal() }
        return item
    }
}
