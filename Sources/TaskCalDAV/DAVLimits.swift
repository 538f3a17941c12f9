@_spi(Engine) import TaskStore

/// The most one CalDAV request may ask of the server (Spec/interop.md, "CalDAV server").
enum DAVLimits {
    /// Hrefs one `calendar-multiget` may name.
    static let hrefsPerMultiget = 10_000
    /// Tags (CATEGORIES values) one PUT may give a task.
    static let tagsPerTask = 1_000
    /// Seconds a request may run before the server stops and answers 503.
    static let requestSeconds: UInt64 = 15
    /// Bytes a multistatus answer may reach before the server stops and answers 503.
    static let answerBytes = 128 << 20
    /// comp-filters one `calendar-query` may nest (VCALENDAR, VTODO, VALARM need three).
    static let filterDepth = 8
    /// comp-, prop- and param-filters one `calendar-query` may hold.
    static let filterTests = 256
    /// Bytes of one text-match.
    static let textMatchBytes = 4096
}

/// What one request may still spend: time, and bytes of its answer. Checked between the
/// objects a request walks, so a request whose client has gone stops within one object of
/// its deadline, and no answer grows past ``DAVLimits/answerBytes``.
struct Budget {
    let end: UInt64

    /// A budget whose time ends `seconds` from now.
    init(seconds: UInt64 = DAVLimits.requestSeconds) {
        end = Posix.monotonicNanoseconds() + seconds * 1_000_000_000
    }

    /// Throws 503 once the time is up or `answer` is over its bound.
    func check(_ answer: Multistatus) throws(DAVRefusal) {
        if answer.byteCount > DAVLimits.answerBytes {
            throw DAVRefusal(
                status: 503, message: "the answer grew past \(DAVLimits.answerBytes >> 20) MiB and was stopped; ask for fewer objects or properties")
        }
        guard Posix.monotonicNanoseconds() > end else { return }
        throw DAVRefusal(
            status: 503,
            message: "the request ran past \(DAVLimits.requestSeconds) s and was stopped; ask for fewer objects at once")
    }
}
