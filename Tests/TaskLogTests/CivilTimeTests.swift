@_spi(Engine) import TaskModel
import TestSupport
import Testing

@Suite struct CivilTimeTests {
    static let dayMs: Int64 = 86_400_000
    /// 0001-01-01 and 9999-12-31: the dates `YYYY-MM-DD` can spell (year 0000 too).
    static let firstDay = CivilTime.days(year: 1, month: 1, day: 1)
    static let lastDay = CivilTime.days(year: 9999, month: 12, day: 31)

    @Test func knownDates() {
        #expect(CivilTime.days(year: 1970, month: 1, day: 1) == 0)
        #expect(CivilTime.days(year: 1969, month: 12, day: 31) == -1)
        #expect(CivilTime.days(year: 2000, month: 3, day: 1) == 11_017)
        #expect(CivilTime.days(year: 2026, month: 1, day: 1) == 20_454)
        #expect(CivilTime.days(year: 2026, month: 3, day: 1) == 20_513)
        #expect(CivilTime.dateString(days: 0) == "1970-01-01")
        #expect(CivilTime.dateString(days: -1) == "1969-12-31")
        #expect(CivilTime.dateString(days: 11_016) == "2000-02-29")
        #expect(CivilTime.dateString(days: Self.firstDay) == "0001-01-01")
        #expect(CivilTime.dateString(days: Self.lastDay) == "9999-12-31")
        #expect(Self.firstDay == -719_162 && Self.lastDay == 2_932_896)
    }

    @Test func parseDateAcceptsRealDates() {
        #expect(CivilTime.parseDate("1970-01-01") == 0)
        #expect(CivilTime.parseDate("2026-03-01") == 20_513)
        #expect(CivilTime.parseDate("2024-02-29") == CivilTime.days(year: 2024, month: 2, day: 29))
        #expect(CivilTime.parseDate("2000-02-29") != nil, "divisible by 400: leap")
        #expect(CivilTime.parseDate("2026-12-31") == CivilTime.days(year: 2027, month: 1, day: 1) - 1)
        #expect(CivilTime.parseDate("0000-01-01") == CivilTime.days(year: 0, month: 1, day: 1))
        #expect(CivilTime.parseDate("0000-02-29") != nil, "year 0 is a leap year (proleptic Gregorian)")
        for (month, last) in [(1, 31), (4, 30), (6, 30), (7, 31), (8, 31), (9, 30), (11, 30), (12, 31)] {
            let m = month < 10 ? "0\(month)" : "\(month)"
            #expect(CivilTime.parseDate(Substring("2026-\(m)-\(last)")) != nil, "month \(month)")
            #expect(CivilTime.parseDate(Substring("2026-\(m)-\(last + 1)")) == nil, "month \(month)")
        }
    }

    @Test(arguments: [
        "2026-02-30", "2026-02-29", "2023-02-29", "1900-02-29", "2100-02-29", "2026-04-31", "2026-13-01",
        "2026-00-10", "2026-01-00", "2026-01-32", "2026-1-01", "2026-01-1", "20260101", "2026/01/01", "2026-01-01 ",
        " 2026-01-01", "+2026-01-01", "-002-01-01", "2026-0a-01", "", "2026-01-01T", "12026-01-01",
    ])
    func parseDateRejectsInvalidDates(_ text: String) {
        #expect(CivilTime.parseDate(Substring(text)) == nil, "\(text.debugDescription)")
    }

    @Test func dayCountsRoundTripThroughCivilDatesAndText() {
        forEachSeed { seed, rng in
            for _ in 0..<20 {
                let d = Int64(rng.int(Int(Self.firstDay)...Int(Self.lastDay)))
                let c = CivilTime.civil(days: d)
                #expect(CivilTime.days(year: c.year, month: c.month, day: c.day) == d, "days \(d), seed \(seed)")
                #expect((1...12).contains(c.month) && (1...31).contains(c.day), "days \(d), seed \(seed)")
                let text = CivilTime.dateString(days: d)
                #expect(CivilTime.parseDate(Substring(text)) == d, "\(text), seed \(seed)")
                #expect(Due(parsing: text) == .date(days: d), "\(text), seed \(seed)")
                // The next day is the next date.
                let n = CivilTime.civil(days: d + 1)
                let sameMonth = n.year == c.year && n.month == c.month && n.day == c.day + 1
                let nextMonth = n.day == 1 && (n.month == c.month + 1 || (c.month == 12 && n.month == 1 && n.year == c.year + 1))
                #expect(sameMonth || nextMonth, "days \(d), seed \(seed)")
            }
        }
    }

    @Test func instantsFormatWithMillisecondsInUTC() {
        #expect(CivilTime.instantString(milliseconds: 0) == "1970-01-01T00:00:00.000Z")
        #expect(CivilTime.instantString(milliseconds: 1_767_312_000_500) == "2026-01-02T00:00:00.500Z")
        #expect(CivilTime.instantString(milliseconds: -1) == "1969-12-31T23:59:59.999Z")
        #expect(CivilTime.instantString(milliseconds: -Self.dayMs) == "1969-12-31T00:00:00.000Z")
        #expect(CivilTime.instantString(milliseconds: -Self.dayMs - 1) == "1969-12-30T23:59:59.999Z")
        #expect(CivilTime.instantString(milliseconds: 951_782_400_000 + 45_296_789) == "2000-02-29T12:34:56.789Z")
    }

    @Test func parseInstantHandlesZonesSecondsAndFractions() {
        let base = CivilTime.parseInstant("2026-03-01T12:30:00Z")!
        #expect(base == 20_513 * Self.dayMs + (12 * 3600 + 30 * 60) * 1000)
        #expect(CivilTime.parseInstant("2026-03-01T12:30Z") == base, "seconds are optional")
        #expect(CivilTime.parseInstant("2026-03-01t12:30:00z") == base, "lowercase t and z")
        #expect(CivilTime.parseInstant("2026-03-01T12:30:00+00:00") == base)
        #expect(CivilTime.parseInstant("2026-03-01T12:30:00-00:00") == base)
        #expect(CivilTime.parseInstant("2026-03-01T14:30:00+02:00") == base)
        #expect(CivilTime.parseInstant("2026-03-01T07:00:00-05:30") == base)
        #expect(CivilTime.parseInstant("2026-03-02T00:15+11:45") == base, "offset crosses midnight")
        #expect(CivilTime.parseInstant("2026-03-01T12:30:00.5Z") == base + 500)
        #expect(CivilTime.parseInstant("2026-03-01T12:30:00.05Z") == base + 50)
        #expect(CivilTime.parseInstant("2026-03-01T12:30:00.123Z") == base + 123)
        #expect(CivilTime.parseInstant("2026-03-01T12:30:00.123999Z") == base + 123, "truncates below milliseconds")
        #expect(CivilTime.parseInstant("2026-03-01T12:30:00.999+01:00") == base - 3_600_000 + 999)
        #expect(CivilTime.parseInstant("2024-02-29T23:59:59Z") == CivilTime.days(year: 2024, month: 3, day: 1) * Self.dayMs - 1000)
        #expect(CivilTime.parseInstant("1969-12-31T23:59:59.999Z") == -1)
    }

    @Test(arguments: [
        "2026-03-01T12:30:00", "2026-03-01T12:30", "2026-03-01 12:30Z", "2026-03-01", "2026-02-30T12:00Z",
        "2026-03-01T24:00Z", "2026-03-01T12:60Z", "2026-03-01T12:30:60Z", "2026-03-01T1:30Z", "2026-03-01T12:3Z",
        "2026-03-01T12:30:5Z", "2026-03-01T12:30:00.Z", "2026-03-01T12:30:00,5Z", "2026-03-01T12:30:00.5x5Z",
        "2026-03-01T12:30+24:00", "2026-03-01T12:30+02:60", "2026-03-01T12:30+0200", "2026-03-01T12:30+2:00",
        "2026-03-01T12:30ZZ", "2026-03-01TZ", "T12:30Z", "2026-03-01T12-30Z", "2026-03-01T12:30:00.1234567890123456789Z",
    ])
    func parseInstantRejectsMalformedInstants(_ text: String) {
        #expect(CivilTime.parseInstant(text) == nil, "\(text.debugDescription)")
        #expect(Due(parsing: text) == nil || text == "2026-03-01", "\(text.debugDescription)")
    }

    @Test func instantsRoundTripThroughText() {
        forEachSeed { seed, rng in
            for _ in 0..<20 {
                let ms = Int64(rng.int(Int(Self.firstDay * Self.dayMs)...Int((Self.lastDay + 1) * Self.dayMs - 1)))
                let text = CivilTime.instantString(milliseconds: ms)
                #expect(text.utf8.count == 24, "\(text), seed \(seed)")
                #expect(CivilTime.parseInstant(text) == ms, "\(text), seed \(seed)")
                #expect(Due(parsing: text) == .instant(milliseconds: ms), "\(text), seed \(seed)")
                #expect(Due.instant(milliseconds: ms).description == text, "seed \(seed)")
                // The same instant written in another zone.
                let offsetMinutes = rng.int(-(23 * 60 + 59)...(23 * 60 + 59))
                let local = ms + Int64(offsetMinutes) * 60_000
                guard local >= Self.firstDay * Self.dayMs, local < (Self.lastDay + 1) * Self.dayMs else { continue }
                let l = CivilTime.instantString(milliseconds: local)
                let sign = offsetMinutes < 0 ? "-" : "+"
                let h = abs(offsetMinutes) / 60
                let m = abs(offsetMinutes) % 60
                let zoned = String(l.dropLast()) + sign + (h < 10 ? "0\(h)" : "\(h)") + ":" + (m < 10 ? "0\(m)" : "\(m)")
                #expect(CivilTime.parseInstant(zoned) == ms, "\(zoned), seed \(seed)")
            }
        }
    }

    @Test func dueParsesDatesAndInstantsAndSortsByFirstMillisecond() {
        #expect(Due(parsing: "2026-03-01") == .date(days: 20_513))
        #expect(Due(parsing: "2026-03-01T00:00Z") == .instant(milliseconds: 20_513 * Self.dayMs))
        #expect(Due(parsing: "tomorrow") == nil)
        #expect(Due(parsing: "2026-02-30") == nil)
        #expect(Due.date(days: 20_513).description == "2026-03-01")
        #expect(Due.date(days: 20_513).sortKey == Due.instant(milliseconds: 20_513 * Self.dayMs).sortKey)
        #expect(Due.date(days: 20_513) < .instant(milliseconds: 20_513 * Self.dayMs + 1))
        #expect(Due.instant(milliseconds: 20_513 * Self.dayMs - 1) < .date(days: 20_513))
        #expect(Due.date(days: -1) < .date(days: 0))
    }
}

@Test("due values at the ends of the Int64 range format as the Spec spells them, without trapping")
func extremeDueValuesFormat() {
    #expect(CivilTime.dateString(days: .min) == "-25252734927764585-06-07")
    #expect(CivilTime.dateString(days: .max) == "25252734927768524-07-27")
    #expect(CivilTime.instantString(milliseconds: .min) == "-292275055-05-16T16:47:04.192Z")
    #expect(CivilTime.instantString(milliseconds: .max) == "292278994-08-17T07:12:55.807Z")
    #expect(CivilTime.instantString(milliseconds: -1) == "1969-12-31T23:59:59.999Z")
}
