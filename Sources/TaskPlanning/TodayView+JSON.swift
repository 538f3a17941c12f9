@_spi(Engine) import TaskModel

extension TodayView {
    /// The view as `tasklog today --json` prints it: an object with one array of tasks per
    /// section, in ``Section`` order, each task in the JSON task form; ends with a newline.
    package var json: [UInt8] {
        var w = JSONWriter()
        for (i, section) in Section.allCases.enumerated() {
            w.raw(i == 0 ? "{\n\"" : ",\n\"")
            w.raw(json: section.rawValue)
            w.raw("\": ")
            w.taskArray(self[section])
        }
        w.raw("\n}\n")
        return w.bytes
    }
}
