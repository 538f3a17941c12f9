@_spi(Engine) import TaskModel

extension TaskStore {
    /// The tag-set writes that make task `id` depend on exactly `wanted`: an addition for each
    /// new dependency, an observed removal for each one no longer wanted.
    func dependencyOperations(_ id: TaskID, _ wanted: [TaskID], _ held: [TaskID], in state: borrowing TaskState) -> [TaskOperation] {
        let (want, have) = (Set(wanted.map(PlanningKey.dependencyElement)), Set(held.map(PlanningKey.dependencyElement)))
        let removals = have.subtracting(want).sorted().map { element in
            TaskOperation.removeTag(id, element, observed: (state.records[id]?.tags.observedTags(of: element) ?? []).sorted())
        }
        return want.subtracting(have).sorted().map { .addTag(id, $0) } + removals
    }
}
