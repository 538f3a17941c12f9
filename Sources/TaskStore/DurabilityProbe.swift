import Synchronization

/// A hook for simulations of power loss: told of every fsync the store makes, with the
/// descriptor and path it made durable, so a simulator can keep what was synced and drop the
/// rest. Not for applications (it runs inside the store's write path).
public enum DurabilityProbe {
    private static let observer = Mutex<(@Sendable (_ descriptor: Int32, _ path: String) -> Void)?>(nil)

    /// Installs (or, with nil, removes) the observer for this process.
    public static func install(_ observe: (@Sendable (_ descriptor: Int32, _ path: String) -> Void)?) {
        observer.withLock { $0 = observe }
    }

    static func synced(_ descriptor: Int32, _ path: String) {
        if let observe = observer.withLock({ $0 }) { observe(descriptor, path) }
    }
}
