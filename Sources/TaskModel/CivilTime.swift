/// Conversions between epoch days/milliseconds and proleptic Gregorian dates, in UTC.
@_spi(Engine) public enum CivilTime {
    /// Days since 1970-01-01 for a civil date (H. Hinnant's algorithm).
    public static func days(year: Int, month: Int, day: Int) -> Int64 {
        let y = Int64(month <= 2 ? year - 1 : year)
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let m = Int64(month)
        let doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + Int64(day) - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146097 + doe - 719468
    }

    /// The civil date of a day count since 1970-01-01.
    public static func civil(days: Int64) -> (year: Int, month: Int, day: Int) {
        // Split into 400-year eras first, so no value of the whole Int64 range overflows.
        var era = floorDivide(days, 146097)
        var doe = floorRemainder(days, 146097) + 719468
        era += doe / 146097
        doe %= 146097
        let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let d = doy - (153 * mp + 2) / 5 + 1
        let m = mp < 10 ? mp + 3 : mp - 9
        return (Int(yoe + era * 400 + (m <= 2 ? 1 : 0)), Int(m), Int(d))
    }

    package static func pad(_ v: Int, _ width: Int) -> String {
        if v < 0 { return "-" + pad(-v, width) }
        let s = String(v)
        return s.count >= width ? s : String(repeating: "0", count: width - s.count) + s
    }

    /// Division rounding towards negative infinity, without overflow.
    package static func floorDivide(_ a: Int64, _ b: Int64) -> Int64 {
        let q = a / b
        return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q
    }

    /// The remainder that goes with ``floorDivide(_:_:)`` (0 ..< b for positive b).
    package static func floorRemainder(_ a: Int64, _ b: Int64) -> Int64 {
        let r = a % b
        return r < 0 ? r + b : r
    }

    /// `YYYY-MM-DD`.
    public static func dateString(days: Int64) -> String {
        let c = civil(days: days)
        guard (0...9999).contains(c.year) else { return "\(pad(c.year, 4))-\(pad(c.month, 2))-\(pad(c.day, 2))" }
        // The common case, written digit by digit: tables format a date for every row.
        return String(unsafeUninitializedCapacity: 10) { b in
            func digits(_ v: Int, _ end: Int, _ width: Int) {
                var v = v
                for k in stride(from: end - 1, through: end - width, by: -1) {
                    b[k] = UInt8(ascii: "0") + UInt8(v % 10)
                    v /= 10
                }
            }
            digits(c.year, 4, 4)
            b[4] = UInt8(ascii: "-")
            digits(c.month, 7, 2)
            b[7] = UInt8(ascii: "-")
            digits(c.day, 10, 2)
            return 10
        }
    }

    /// ISO-8601 UTC with milliseconds: `YYYY-MM-DDTHH:MM:SS.sssZ`.
    public static func instantString(milliseconds ms: Int64) -> String {
        let days = floorDivide(ms, 86_400_000)
        let rem = floorRemainder(ms, 86_400_000)
        let h = Int(rem / 3_600_000)
        let mi = Int(rem / 60_000 % 60)
        let s = Int(rem / 1000 % 60)
        let f = Int(rem % 1000)
        return "\(dateString(days: days))T\(pad(h, 2)):\(pad(mi, 2)):\(pad(s, 2)).\(pad(f, 3))Z"
    }

    /// Parses `YYYY-MM-DD`; nil if malformed or not a real date.
    public static func parseDate(_ s: Substring) -> Int64? {
        let u = Array(s.utf8)
        guard u.count == 10, u[4] == 45, u[7] == 45,
            let y = number(u[0..<4]), let m = number(u[5..<7]), let d = number(u[8..<10]),
            (1...12).contains(m), d >= 1, d <= daysIn(month: m, year: y)
        else { return nil }
        return days(year: y, month: m, day: d)
    }

    /// Parses an ISO-8601 instant: `YYYY-MM-DDTHH:MM[:SS[.fff]](Z|±HH:MM)`; nil if malformed.
    public static func parseInstant(_ s: String) -> Int64? {
        guard let t = s.firstIndex(where: { $0 == "T" || $0 == "t" }),
            let days = parseDate(s[s.startIndex..<t])
        else { return nil }
        var rest = Array(s[s.index(after: t)...].utf8)
        var offsetMs: Int64 = 0
        if rest.last == 90 || rest.last == 122 {
            rest.removeLast()
        } else if rest.count >= 6, rest[rest.count - 6] == 43 || rest[rest.count - 6] == 45,
            rest[rest.count - 3] == 58,
            let oh = number(rest[(rest.count - 5)..<(rest.count - 3)]),
            let om = number(rest[(rest.count - 2)...]), oh < 24, om < 60
        {
            let sign: Int64 = rest[rest.count - 6] == 43 ? 1 : -1
            offsetMs = sign * Int64(oh * 3_600_000 + om * 60_000)
            rest.removeLast(6)
        } else {
            return nil
        }
        guard rest.count >= 5, rest[2] == 58, let h = number(rest[0..<2]), let mi = number(rest[3..<5]),
            h < 24, mi < 60
        else { return nil }
        var sec = 0
        var millis = 0
        if rest.count > 5 {
            guard rest.count >= 8, rest[5] == 58, let sv = number(rest[6..<8]), sv < 60 else { return nil }
            sec = sv
            if rest.count > 8 {
                guard rest[8] == 46, rest.count > 9, let frac = number(rest[9...]) else { return nil }
                let digits = rest.count - 9
                var f = frac
                if digits > 3 {
                    for _ in 0..<(digits - 3) { f /= 10 }
                } else {
                    for _ in 0..<(3 - digits) { f *= 10 }
                }
                millis = f
            }
        }
        return days * 86_400_000 + Int64(h * 3_600_000 + mi * 60_000 + sec * 1000 + millis) - offsetMs
    }

    package static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    package static func number(_ digits: some Collection<UInt8>) -> Int? {
        guard !digits.isEmpty, digits.count <= 18 else { return nil }
        var v = 0
        for c in digits {
            guard c >= 48 && c <= 57 else { return nil }
            v = v * 10 + Int(c - 48)
        }
        return v
    }

    /// `days` moved by `count` days (`d`), weeks (`w`), months (`m`) or years (`y`); a month
    /// step keeps the day of the month, or the month's last day when it is shorter.
    package static func shifted(_ days: Int64, by offset: (count: Int, unit: Character)) -> Int64 {
        switch offset.unit {
        case "d": return days + Int64(offset.count)
        case "w": return days + 7 * Int64(offset.count)
        default:
            let (y, m, d) = CivilTime.civil(days: days)
            let months = (y * 12 + m - 1) + offset.count * (offset.unit == "y" ? 12 : 1)
            let (year, month) = (months / 12, months % 12 + 1)
            return CivilTime.days(year: year, month: month, day: min(d, CivilTime.daysIn(month: month, year: year)))
        }
    }
}
