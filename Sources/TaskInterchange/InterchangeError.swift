/// An entry of an interchange file that does not describe a task: a todo.txt line, or a task
/// of a JSON array, named by its number from 1 (0: the file as a whole).
package struct InterchangeError: Error, Equatable, CustomStringConvertible {
    /// What an entry is called in this format: "line" or "task".
    package var noun: String
    package var number: Int
    package var reason: String

    package var description: String { number == 0 ? reason : "\(noun) \(number): \(reason)" }

    package static func line(_ number: Int, _ reason: String) -> InterchangeError {
        InterchangeError(noun: "line", number: number, reason: reason)
    }

    package static func task(_ number: Int, _ reason: String) -> InterchangeError {
        InterchangeError(noun: "task", number: number, reason: reason)
    }
}
