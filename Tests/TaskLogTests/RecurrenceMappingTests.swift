@_spi(Engine) import TaskInterchange
@_spi(Engine) import TaskModel
import Testing

/// How each format writes a recurrence, and which texts no rule holds (Spec/interop.md).
@Suite("recurrence mappings")
struct RecurrenceMappingTests {
    func rule(_ text: String) -> RecurrenceRule { RecurrenceRule(text)! }

    @Test("Taskwarrior durations: named, counted, with or without a space; hours and weekdays hold no rule",
          arguments: [
              ("daily", "every 1 days"), ("weekly", "every 1 weeks"), ("2weeks", "every 2 weeks"), ("2 wks", "every 2 weeks"),
              ("3d", "every 3 days"), ("6mo", "every 6 months"), ("1m", "every 1 months"), ("biweekly", "every 2 weeks"),
              ("fortnight", "every 2 weeks"), ("quarterly", "every 3 months"), ("2q", "every 6 months"), ("yearly", "every 1 years"),
              ("annual", "every 1 years"), ("2y", "every 2 years"), ("weekdays", ""), ("3h", ""), ("1.5d", ""), ("P1W", ""),
          ])
    func taskwarriorDurations(_ text: String, _ expected: String) {
        #expect(TaskwarriorJSON.recurrence(text)?.text ?? "" == expected)
    }

    @Test("export writes Taskwarrior's own words and counts, and they read back as the same rule")
    func taskwarriorExportForms() {
        let forms = ["every 1 days": "daily", "every 2 weeks": "2w", "every 1 months": "monthly", "every 3 months": "3mo", "every 5 years": "5y"]
        for (text, written) in forms {
            #expect(TaskwarriorJSON.durationText(rule(text)) == written)
            #expect(TaskwarriorJSON.recurrence(written) == rule(text))
        }
    }

    @Test("todo.txt rec: strict or not, with a unit or days by default; business days hold no rule",
          arguments: [
              ("1w", "every 1 weeks"), ("+1m", "every 1 months"), ("2d", "every 2 days"), ("1y", "every 1 years"), ("10", "every 10 days"),
              ("5b", ""), ("b", ""), ("+w", ""), ("1wk", ""), ("-1d", ""),
          ])
    func todoTxtRec(_ text: String, _ expected: String) {
        #expect(TodoTxt.recurrence(text)?.text ?? "" == expected)
    }

    @Test("todo.txt export writes + for a dated task; a line's own rec: stays while it states the rule")
    func todoTxtRecRoundTrips() throws {
        #expect(TodoTxt.canonicalRec(rule("every 2 weeks"), strict: true) == "+2w")
        #expect(TodoTxt.canonicalRec(rule("every 1 months"), strict: false) == "1m")
        let line = try TodoTxt.read("Water plants due:2026-12-01 rec:1w", number: 1)
        #expect(line.planning == ["recur": "every 1 weeks", "todotxt.rec": "1w"])
        let undated = try TodoTxt.read("Water plants rec:1w t:2026-11-30 parent:abc", number: 1)
        #expect(undated.planning == ["recur": "every 1 weeks", "wait": "2026-11-30", "parent": "abc"])
        #expect(try TodoTxt.read("Call rec:5b", number: 1).unknown == ["rec": "5b"])
    }

    @Test("RRULE with FREQ and INTERVAL only is a rule; BYDAY, COUNT, UNTIL or an hourly FREQ is none",
          arguments: [
              ("FREQ=DAILY", "every 1 days"), ("FREQ=WEEKLY;INTERVAL=2", "every 2 weeks"), ("INTERVAL=3;FREQ=MONTHLY", "every 3 months"),
              ("freq=yearly", "every 1 years"), ("FREQ=WEEKLY;BYDAY=MO,WE", ""), ("FREQ=DAILY;COUNT=5", ""),
              ("FREQ=DAILY;UNTIL=20270101", ""), ("FREQ=HOURLY", ""), ("FREQ=WEEKLY;INTERVAL=0", ""), ("INTERVAL=2", ""),
          ])
    func rrules(_ value: String, _ expected: String) {
        #expect(ICalendar.rule(fromRRULE: value)?.text ?? "" == expected)
    }

    @Test("a rule exports as FREQ with INTERVAL only past 1")
    func rruleExport() {
        #expect(ICalendar.rrule(rule("every 1 weeks")) == "FREQ=WEEKLY")
        #expect(ICalendar.rrule(rule("every 4 months")) == "FREQ=MONTHLY;INTERVAL=4")
    }

    @Test("Taskwarrior depends reads as an array or as comma-separated text")
    func dependsForms() {
        #expect(TaskwarriorJSON.dependsUUIDs(.array([.string("a"), .string("b")])) == ["a", "b"])
        #expect(TaskwarriorJSON.dependsUUIDs(.string("a, b,,c")) == ["a", "b", "c"])
        #expect(TaskwarriorJSON.dependsUUIDs(nil).isEmpty)
    }
}
