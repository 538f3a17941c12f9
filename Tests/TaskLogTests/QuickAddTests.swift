@_spi(Engine) import TaskModel
@testable import TaskPlanning
import Testing

/// The quick-add grammar (Spec/cli.md, "Quick add") at the fixed clock of the date forms:
/// Monday 7 December 2026, 10:00 local, five hours behind UTC.
@Suite("quick add grammar")
struct QuickAddTests {
    func parse(_ text: String, dayFirst: Bool = false) throws -> QuickAdd.Result {
        try QuickAdd.parse(text, now: DateFormsTests.now, zone: DateFormsTests.zone, dayFirst: dayFirst)
    }

    func refusal(_ text: String) -> QuickAddError? {
        do throws(QuickAddError) {
            _ = try QuickAdd.parse(text, now: DateFormsTests.now, zone: DateFormsTests.zone, dayFirst: false)
            return nil
        } catch {
            return error
        }
    }

    func date(_ text: String) -> Due { Due(parsing: text)! }

    @Test("the issue's example gives title, due, tag, list, priority and rule")
    func issueExample() throws {
        let r = try parse("Buy milk tomorrow #shop +groceries !2 every week")
        #expect(r == QuickAdd.Result(
            title: "Buy milk", due: date("2026-12-08"), tags: ["shop"], list: "groceries", priority: 2,
            recurrence: RecurrenceRule(count: 1, unit: .weeks)))
        #expect(r.task.meta == [PlanningKey.recur: "every 1 weeks"])
    }

    @Test("markers stand anywhere; a date and a rule only at the end, in either order")
    func markersAnywhereDatesAtTheEnd() throws {
        #expect(try parse("#work Call Tom !high fri 17:30").due == date("2026-12-11T22:30:00Z"))
        #expect(try parse("#work Call Tom !high fri 17:30").title == "Call Tom")
        let r = try parse("Pay rent monthly 12/24")
        #expect(r.title == "Pay rent" && r.due == date("2026-12-24") && r.recurrence == RecurrenceRule("monthly"))
        #expect(try parse("Stretch in 3 days").due == date("2026-12-10"))
        #expect(try parse("Review notes every 2 weeks").recurrence == RecurrenceRule(count: 2, unit: .weeks))
        #expect(try parse("Gym every monday").due == date("2026-12-14"))
        #expect(try parse("Gym every monday").title == "Gym")
        let gym = try parse("Gym every monday 18:00")
        #expect(gym.title == "Gym" && gym.due == date("2026-12-14T23:00:00Z") && gym.recurrence == RecurrenceRule(count: 1, unit: .weeks))
        #expect(try parse("Submit report by friday").title == "Submit report")
        #expect(try parse("Read 24/12", dayFirst: true).due == date("2026-12-24"))
    }

    @Test("words that only look like dates or markers stay in the title")
    func wordsThatStay() throws {
        let kept = [
            "Call Tom about Friday's meeting", "Call Tom friday about the deal", "Fix issue #42",
            "Vote +1 on the proposal", "Meet @home", "Watch the sun", "Cat sat", "Friday", "Wow !",
            "Go on", "Email a@b.example about due: dates",
        ]
        for text in kept {
            let r = try parse(text)
            #expect(r.title == text && r.due == nil && r.tags.isEmpty && r.list == nil && r.priority == nil, "\(text)")
        }
    }

    @Test("an escaped or quoted word stays literal, however it reads")
    func escapedWordsStayLiteral() throws {
        #expect(try parse("Buy \\#shop stuff \\tomorrow") == QuickAdd.Result(title: "Buy #shop stuff tomorrow"))
        #expect(try parse("Print \\+groceries \\!2 list \\every \\week") == QuickAdd.Result(title: "Print +groceries !2 list every week"))
        let quoted = try parse("Watch \"Friday Night Lights\" #tv")
        #expect(quoted.title == "Watch \"Friday Night Lights\"" && quoted.tags == ["tv"] && quoted.due == nil)
        #expect(try parse("Read \"tomorrow\"").title == "Read \"tomorrow\"")
        #expect(try parse("Keep \\due:fri").title == "Keep due:fri")
    }

    @Test("due:, wait: and sched: name dates anywhere, over several words")
    func explicitDates() throws {
        let r = try parse("due:next tue 9:00 Plan trip wait:12/20 sched:fri tomorrow")
        #expect(r.due == date("2026-12-08T14:00:00Z"))
        #expect(r.wait == date("2026-12-20") && r.scheduled == date("2026-12-11"))
        #expect(r.title == "Plan trip tomorrow", "with due: no trailing date is read")
        #expect(r.task.meta == [PlanningKey.wait: "2026-12-20", PlanningKey.scheduled: "2026-12-11"])
    }

    @Test("bad markers, doubled fields and hostile text are refused with the fix")
    func refusals() {
        #expect(refusal("Buy !urgent") == .badPriority("!urgent"))
        #expect(refusal("Buy !4") == .badPriority("!4"))
        #expect(refusal("Buy +a +b") == .twice("a list (+b)"))
        #expect(refusal("Buy !1 !2") == .twice("a priority (!2)"))
        #expect(refusal("Buy due:never") == .badDate(key: "due", text: "never"))
        #expect(refusal("Buy due:fri due:sat") == .twice("due dates"))
        #expect(refusal("#shop +groceries !2") == .noTitle)
        #expect(refusal("Read \"Dune tomorrow") == .unclosedQuote("\"Dune"))
        #expect(refusal("Buy milk\nrm -rf /") == .controlCharacter(10))
        #expect(refusal("Buy\u{1}depends:x") == .controlCharacter(1))
        #expect(refusal("Buy \u{2028} milk") == .controlCharacter(0x2028))
        #expect(refusal(String(repeating: "a", count: QuickAdd.maximumLength + 1)) == .tooLong(bytes: QuickAdd.maximumLength + 1))
        for e in [QuickAddError.badPriority("!x"), .noTitle, .unclosedQuote("\"a"), .twice("x")] {
            #expect(!e.description.contains("--"), "library errors name no CLI flag: \(e)")
        }
    }

    @Test("shell syntax and long text within the bound are title text")
    func shellSyntaxIsText() throws {
        for text in ["Run $(rm -rf ~) now", "Echo `id`; ls | cat > x", "Check 'single' && \"double\""] {
            #expect(try parse(text).title == text)
        }
        let long = String(repeating: "word ", count: 199) + "end"
        #expect(try parse(long).title == long)
    }
}
