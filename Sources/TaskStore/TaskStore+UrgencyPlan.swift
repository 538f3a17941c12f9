#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
@_spi(Engine) import CRDTCore
@_spi(Engine) import OpLogFormat
@_spi(Engine) import TaskModel

extension StoreLayout {
    /// The urgency plan of the snapshot (``UrgencyPlan``).
    var planFile: String { Posix.join(root, "snapshot-plan") }
}

/// What ranking by urgency reads instead of every task: the snapshot's body, checked a block
/// at a time as read, the state of the log after it, and the snapshot's urgency plan.
package struct UrgencySource {
    package let saved: SharedBytes
    package let head: StateCodec.LookupHead
    package let after: TaskState
    package let plan: UrgencyPlan
    let file: SnapshotFile

    /// Checks the body's bytes at `range` against the snapshot's block checksums.
    package func checkBody(_ range: Range<Int>) throws(DecodeError) { try file.checkBody(range) }
}

extension TaskStore {
    /// The snapshot, the log after it and its urgency plan, read from the plan file; when the
    /// file is missing, stale or damaged, the plan is built from the snapshot's body (one read
    /// of every task, every block checked) and saved for the next call. Nil when the snapshot
    /// cannot be read so (``scanTasks(_:into:)`` says when): every task is then read.
    /// Unlike a listing, it reads the snapshot even when the state is loaded, so that a
    /// server that keeps the store open ranks from the plan too.
    package func urgencySource() throws(StoreError) -> UrgencySource? {
        guard let kept = try inner.withLock({ (inner) throws(StoreError) in try prepareScan(&inner, whole: false) }),
            let after = kept.after
        else { return nil }
        let file = kept.file
        let tie = UrgencyPlan.tie(snapshot: file.blocks.bytes, version: file.head.version)
        let source = { (plan: UrgencyPlan) in UrgencySource(saved: file.body, head: file.head, after: after, plan: plan, file: file) }
        if let plan = try savedPlan(tie: tie) { return source(plan) }
        guard (try? file.checkAll(mappingIn: true)) != nil, let bytes = try? UrgencyPlan.encode(body: file.body, tie: tie) ?? nil,
            let plan = try? UrgencyPlan(SharedBytes(bytes), tie: tie)
        else { return nil }
        // A cache: a store this process may not write to is ranked all the same.
        try? Posix.writeAtomically(layout.planFile, bytes, sync: false)
        return source(plan)
    }

    /// The plan file when it describes the snapshot `tie` names; nil when it is missing,
    /// stale or damaged.
    private func savedPlan(tie: [UInt8]) throws(StoreError) -> UrgencyPlan? {
        guard let file = try Posix.mapFile(layout.planFile, populated: false) else { return nil }
        return (try? UrgencyPlan(file, tie: tie)) ?? nil
    }

    /// Removes the plan file, found damaged past its header: the next ranking builds it anew.
    package func discardUrgencyPlan() { unlink(layout.planFile) }

    /// Saves the urgency plan of `snapshot`, the bytes of the snapshot file just installed.
    /// Best effort: without it, the next ranking builds it.
    func savePlan(ofSnapshot snapshot: [UInt8]) {
        // Bytes this process just encoded: they need no checking.
        let bytes = SharedBytes(snapshot)
        guard let file = try? SnapshotFile(bytes),
            let plan = try? UrgencyPlan.encode(body: file.body, tie: UrgencyPlan.tie(snapshot: bytes, version: file.head.version)) ?? nil
        else { return }
        try? Posix.writeAtomically(layout.planFile, plan, sync: false)
    }

    /// How the urgency plan file stands against the snapshot: missing, stale (for another
    /// snapshot, or no usable one: it is then not used), damaged, or right (equal to the plan
    /// built afresh from the snapshot).
    package func checkUrgencyPlan() throws(StoreError) -> UrgencyPlanCheck {
        guard let saved = try Posix.readFile(layout.planFile) else { return .missing }
        guard let snapshot = try Posix.mapFile(layout.snapshotFile), let file = try? SnapshotFile(snapshot), file.inCreationOrder,
            (try? file.checkAll()) != nil
        else { return .stale }
        let body = file.body
        let tie = UrgencyPlan.tie(snapshot: snapshot, version: file.head.version)
        do {
            guard try UrgencyPlan(SharedBytes(saved), tie: tie) != nil else { return .stale }
        } catch {
            return .damaged("\(error)")
        }
        let expected = (try? UrgencyPlan.encode(body: body, tie: tie)) ?? nil
        return saved == expected ? .right : .damaged("its lists differ from the snapshot's open tasks")
    }
}

/// How an urgency plan file stands (``TaskStore/checkUrgencyPlan()``).
package enum UrgencyPlanCheck: Equatable {
    case missing, stale, right
    case damaged(String)
}
