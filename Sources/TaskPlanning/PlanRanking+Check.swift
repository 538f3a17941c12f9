@_spi(Engine) import TaskModel
@_spi(Engine) import TaskStore

extension Urgency {
    /// What is wrong with the urgency plan of `store`: the file against its snapshot, then
    /// `top` and `today` through it against ranking every task, at `now` in `zone`. Empty when
    /// nothing is, or there is no plan file (or only a stale one, which is not used).
    package static func planProblems(in store: TaskStore, now: Int64, zone: some CivilZone) throws(StoreError) -> [String] {
        switch try store.checkUrgencyPlan() {
        case .missing, .stale: return []
        case .damaged(let why): return ["the urgency plan is damaged: \(why)"]
        case .right: break
        }
        let today = zone.civil(milliseconds: now).days
        var problems: [String] = []
        let n = 100
        let planned = try topThroughPlan(n, in: store, now: now, today: today)
        let everyTask = try topOfEveryTask(n, in: store, now: now, today: today)
        if planned?.map(\.id) != everyTask.map(\.id) {
            problems.append("the \(n) most urgent tasks through the urgency plan differ from those of every task")
        }
        let view = try TodayView.throughPlan(store, next: n, now: now, zone: zone)
        if try view != TodayView(everyTaskOf: store, next: n, now: now, zone: zone) {
            problems.append("today through the urgency plan differs from today of every task")
        }
        return problems
    }
}
