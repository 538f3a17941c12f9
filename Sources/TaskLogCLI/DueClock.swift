#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
@_spi(Engine) import CRDTCore
@_spi(Engine) import TaskModel
@_spi(Engine) import TaskStore

/// How tables show a due date: in local time without milliseconds, marked when an open task
/// is overdue or due today, and coloured so on a terminal unless `NO_COLOR` is set.
struct DueClock {
    enum Urgency {
        case overdue, today, later

        var colour: String? {
            switch self {
            case .overdue: "\u{1B}[31m"
            case .today: "\u{1B}[33m"
            case .later: nil
            }
        }
    }

    static let reset = "\u{1B}[0m"

    let now = Int64(Posix.wallClockMilliseconds())
    let zone = LocalZone()
    /// The local date, in days: worked out once, not per row.
    let today: Int64
    /// Whether standard output is a terminal that takes colour.
    let colours = Context.standardOutputIsTerminal && getenv("NO_COLOR") == nil

    init() { today = zone.civil(milliseconds: now).days }

    /// A clock time as `2026-12-24 09:00:05` in local time.
    func local(_ t: Timestamp) -> String {
        let c = zone.civil(milliseconds: Int64(clamping: t.physical))
        return CivilTime.dateString(days: c.days) + " " + CivilTime.pad(c.hour, 2) + ":" + CivilTime.pad(c.minute, 2) + ":" + CivilTime.pad(c.second, 2)
    }

    /// `2026-12-24` for a date, `2026-12-24 09:00` (local) for an instant, then ` (overdue)`
    /// or ` (today)` for an open task.
    func text(_ due: Due, open: Bool) -> (text: String, urgency: Urgency) {
        var text: String
        var day: Int64
        switch due {
        case .date(let d):
            (text, day) = (CivilTime.dateString(days: d), d)
        case .instant(let ms):
            let local = zone.civil(milliseconds: ms)
            text = CivilTime.dateString(days: local.days) + " " + CivilTime.pad(local.hour, 2) + ":" + CivilTime.pad(local.minute, 2)
            day = local.days
        }
        guard open else { return (text, .later) }
        if due.isOverdue(now: now, today: today) {
            text += " (overdue)"
            return (text, .overdue)
        }
        if day == today {
            text += " (today)"
            return (text, .today)
        }
        return (text, .later)
    }
}
