import CRDTCore
@_spi(Engine) import TaskModel
import TaskPlanning
@_spi(Engine) import TaskStore

/// The planning endpoints (Spec/sync-http.md): quick-add text read by the library's one
/// grammar, the `today` view, and the urgency order of the list.
extension HTTPService {
    /// The list in urgency order (``Urgency/ranked(_:now:today:)``), then the tasks it does not
    /// rank (done or waiting) in the order given: every task comes back.
    public static let urgencyOrder: TaskOrdering = { tasks in
        let now = Int64(Posix.wallClockMilliseconds())
        let ranked = Urgency.ranked(tasks, now: now, today: LocalZone().civil(milliseconds: now).days)
        let placed = Set(ranked.map(\.id))
        return ranked + tasks.filter { !placed.contains($0.id) }
    }

    /// The latest instant a quick add may be read at: the end of the year 9999.
    static let latestQuickInstant: Int64 = 253_402_300_799_999

    /// `POST /v1/parse` with `{"text": …, "at": ms?}`: the task form fields the text states.
    func parseQuick(_ request: HTTPRequest) -> HTTPResponse {
        guard let value = try? JSONParser.parse(request.body) else { return .error(400, "expected a JSON object {\"text\": \"…\"}") }
        switch quickAdd(from: value, key: "text") {
        case .failure(let refusal): return refusal.response
        case .success(let parsed): return Self.json(200) { Self.write(parsed, to: &$0) }
        }
    }

    /// Reads `{key: text, "at": ms?}` with the quick-add grammar, at the instant `at` (now when
    /// absent) in the server's zone. Other members are refused.
    func quickAdd(from value: JSONValue, key: String) -> Result<QuickAdd.Result, HTTPResponseBox> {
        guard case .object(let members) = value else {
            return .failure(HTTPResponseBox(.error(400, "expected a JSON object {\"\(key)\": \"…\"}")))
        }
        if let other = members.first(where: { $0.key != key && $0.key != "at" }) {
            return .failure(HTTPResponseBox(.error(400, "unknown key \"\(other.key)\" beside \"\(key)\"; send \"\(key)\" and optionally \"at\"")))
        }
        guard case .string(let text)? = value[key] else {
            return .failure(HTTPResponseBox(.error(400, "\"\(key)\" must be the quick-add text, a string")))
        }
        var now = Int64(Posix.wallClockMilliseconds())
        if let at = value["at"] {
            guard case .number(let ms) = at, ms == ms.rounded(), (0...Double(Self.latestQuickInstant)).contains(ms) else {
                return .failure(HTTPResponseBox(.error(400, "\"at\" must be the instant typed, in whole milliseconds since 1970, before the year 10000")))
            }
            now = Int64(ms)
        }
        do {
            return .success(try QuickAdd.parse(text, now: now, zone: LocalZone(), dayFirst: DateInput.localeWritesDayFirst()))
        } catch {
            return .failure(HTTPResponseBox(.error(400, error.description)))
        }
    }

    /// The fields of a quick add in the task form; a field the text does not name is null.
    static func write(_ r: QuickAdd.Result, to w: inout JSONWriter) {
        w.raw("{\"title\":")
        w.string(r.title)
        w.raw(",\"due\":")
        if let due = r.due { w.due(due) } else { w.raw("null") }
        w.raw(",\"priority\":")
        if let p = r.priority { w.number(Int64(p)) } else { w.raw("null") }
        w.raw(",\"tags\":[")
        for (i, tag) in r.tags.enumerated() {
            if i > 0 { w.raw(",") }
            w.string(tag)
        }
        w.raw("],\"list\":")
        w.optionalString(r.list)
        for (key, value) in [(PlanningKey.recur, r.recurrence?.text), (PlanningKey.wait, r.wait?.description), (PlanningKey.scheduled, r.scheduled?.description)] {
            w.raw(json: ",\"\(key)\":")
            w.optionalString(value)
        }
        w.raw("}")
    }

    /// The patch a quick add makes of task `id`: every field it can name, set or cleared, so
    /// the same PUT sent twice leaves the same task.
    static func patch(_ r: QuickAdd.Result, id: TaskID) -> TaskPatch {
        var p = TaskPatch(id: id)
        p.title = r.title
        (p.due, p.priority, p.tags, p.list) = (.some(r.due), .some(r.priority), r.tags, .some(r.list))
        p.planning[PlanningKey.recur] = .some(r.recurrence?.text)
        p.planning[PlanningKey.wait] = .some(r.wait?.description)
        p.planning[PlanningKey.scheduled] = .some(r.scheduled?.description)
        return p
    }

    /// `GET /v1/today[?n=]`: the ``TodayView`` now in the server's zone, shaped as
    /// `tasklog today --json`; `n` (default 5) bounds the last section.
    func todayView(_ request: HTTPRequest) -> HTTPResponse {
        var n = 5
        if let text = request.query["n"] {
            guard let v = Int(text), (0...Self.topLimit).contains(v) else { return .error(400, "'n' must be a whole number from 0 to \(Self.topLimit)") }
            n = v
        }
        do {
            let view = try TodayView(store, next: n)
            return HTTPResponse(status: 200, headers: [("Content-Type", "application/json")], body: view.json)
        } catch {
            return Self.failure(error)
        }
    }
}
