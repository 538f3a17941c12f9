@_spi(Engine) import TaskModel
@testable import TaskLogCLI
@testable import TaskPlanning
import Testing

/// A zone a fixed number of hours from UTC, so that the forms are checked against a fixed clock.
struct FixedOffsetZone: CivilZone {
    let hours: Int

    func civil(milliseconds ms: Int64) -> (days: Int64, hour: Int, minute: Int, second: Int, weekday: Int) {
        let local = CivilTime.floorDivide(ms + Int64(hours) * 3_600_000, 1000)
        let days = CivilTime.floorDivide(local, 86_400)
        let second = Int(local - days * 86_400)
        let weekday = Int(((days + 4) % 7 + 7) % 7)  // 1970-01-01 was a Thursday
        return (days, second / 3600, second / 60 % 60, second % 60, weekday)
    }

    func instant(days: Int64, hour: Int, minute: Int, second: Int) -> Int64 {
        (days * 86_400 + Int64(hour * 3600 + minute * 60 + second) - Int64(hours) * 3600) * 1000
    }
}

/// The date forms people typed and were refused before, at a fixed clock: Monday 7 December
/// 2026, 10:00 local, five hours behind UTC.
@Suite("date forms with a time, a locale order or a next")
struct DateFormsTests {
    static let zone = FixedOffsetZone(hours: -5)
    static let now = Int64(1_796_655_600_000)  // 2026-12-07T15:00:00Z

    func parsed(_ text: String, dayFirst: Bool = false) -> String? {
        DateInput.parse(text, now: Self.now, zone: Self.zone, dayFirst: dayFirst)?.description
    }

    @Test("the fixed clock is Monday 10:00 local")
    func clockIsMondayMorning() {
        let c = Self.zone.civil(milliseconds: Self.now)
        #expect(CivilTime.dateString(days: c.days) == "2026-12-07" && c.weekday == 1 && c.hour == 10)
    }

    @Test("next WEEKDAY is the next such day after today, as the weekday alone")
    func nextWeekday() {
        let expected = [
            ("next tuesday", "2026-12-08"), ("next tue", "2026-12-08"), ("Next Friday", "2026-12-11"),
            ("next monday", "2026-12-14"), ("next  sun", "2026-12-13"), ("next week", "2026-12-14"),
        ]
        for (text, want) in expected { #expect(parsed(text) == want, "\(text)") }
    }

    @Test("a date form then a time of day gives that local instant")
    func dateThenTime() {
        let expected = [
            ("tomorrow 9:00", "2026-12-08T14:00:00.000Z"), ("fri 17:30", "2026-12-11T22:30:00.000Z"),
            ("tue 9am", "2026-12-08T14:00:00.000Z"), ("today 9:30pm", "2026-12-08T02:30:00.000Z"),
            ("today 12am", "2026-12-07T05:00:00.000Z"), ("today 12pm", "2026-12-07T17:00:00.000Z"),
            ("today noon", "2026-12-07T17:00:00.000Z"), ("2026-12-24 9:05", "2026-12-24T14:05:00.000Z"),
            ("next tue 9:05", "2026-12-08T14:05:00.000Z"), ("12/20 9AM", "2026-12-20T14:00:00.000Z"),
            ("+3d 0:00", "2026-12-10T05:00:00.000Z"), ("2026-12-24 09:00", "2026-12-24T14:00:00.000Z"),
        ]
        for (text, want) in expected { #expect(parsed(text) == want, "\(text)") }
    }

    @Test("M/D reads month first, D/M in day-first locales: the next such day, today included")
    func slashDates() {
        #expect(parsed("12/20") == "2026-12-20")
        #expect(parsed("20/12", dayFirst: true) == "2026-12-20")
        #expect(parsed("1/5") == "2027-01-05")
        #expect(parsed("1/5", dayFirst: true) == "2027-05-01")
        #expect(parsed("12/7") == "2026-12-07")
        #expect(parsed("12/6") == "2027-12-06")
        #expect(parsed("12-24", dayFirst: true) == "2026-12-24", "12-24 is month first everywhere")
        #expect(parsed("12/20", dayFirst: true) == nil)
        #expect(parsed("20/12") == nil)
    }

    @Test("the locale's name decides the order of day and month")
    func localeOrder() {
        for name in ["en_GB.UTF-8", "de_DE", "fr_FR@euro", "pt_BR.UTF-8", "en_AU"] { #expect(DateInput.writesDayFirst(locale: name), "\(name)") }
        for name in ["", "C", "C.UTF-8", "POSIX", "en_US.UTF-8", "en_CA", "ja_JP.UTF-8", "zh_CN"] { #expect(!DateInput.writesDayFirst(locale: name), "\(name)") }
    }

    @Test("hostile and impossible text is refused, with one short line naming the forms")
    func hostileTextRefused() {
        let huge = String(repeating: "9", count: 100_000)
        let refused = [
            "99:99", "today 99:99", "13/45", "45/13", "next next", "next", "next week 9:00 9:00", "tomorrow 24:00",
            "tomorrow 9", "tomorrow 0am", "tomorrow 13pm", "tomorrow 9:5", "tomorrow 9:005", "9:00", "1/2/3", "/5", "12/",
            "123/4", "0/5", "2/30", "next tuesday tuesday", "-12/20", "tomorrow \u{0}", huge, "tomorrow " + huge, "12/" + huge,
            "today pm", "today am", "today :30", "today 9:30xm",
        ]
        for text in refused {
            #expect(parsed(text) == nil && parsed(text, dayFirst: true) == nil, "\(text.prefix(40))")
        }
        let line = DateInput.refusal("due", huge + "\n")
        #expect(!line.contains("\n") && line.count < 400 && line.contains("tomorrow 9:00") && line.contains("12/24"), "\(line)")
    }
}
