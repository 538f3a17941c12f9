#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
@_spi(Engine) import TaskModel

/// DATE and DATE-TIME values (RFC 5545, 3.3.4 and 3.3.5) and the instants they denote.
package enum ICalendarTime {
    /// A DATE-TIME as written: the wall-clock seconds since 1970 read as if UTC, and whether
    /// it ended in `Z` (UTC) or is local to a zone or floating.
    package struct Wall: Equatable {
        package var seconds: Int64
        package var isUTC: Bool
    }

    /// Days since 1970 of `YYYYMMDD`.
    package static func date(_ s: some StringProtocol) -> Int64? {
        let u = Array(s.utf8)
        guard u.count == 8, let y = CivilTime.number(u[0..<4]), let m = CivilTime.number(u[4..<6]),
            let d = CivilTime.number(u[6..<8]), (1...12).contains(m), d >= 1, d <= CivilTime.daysIn(month: m, year: y)
        else { return nil }
        return CivilTime.days(year: y, month: m, day: d)
    }

    /// `YYYYMMDDTHHMMSS` with an optional `Z`.
    package static func wall(_ s: some StringProtocol) -> Wall? {
        let u = Array(s.utf8)
        guard u.count == 15 || (u.count == 16 && u[15] == UInt8(ascii: "Z")), u[8] == UInt8(ascii: "T"),
            let days = date(String(decoding: u[0..<8], as: UTF8.self)), let h = CivilTime.number(u[9..<11]),
            let mi = CivilTime.number(u[11..<13]), let sec = CivilTime.number(u[13..<15]), h < 24, mi < 60, sec <= 60
        else { return nil }
        return Wall(seconds: days * 86_400 + Int64(h * 3600 + mi * 60 + min(sec, 59)), isUTC: u.count == 16)
    }

    /// `YYYYMMDD`.
    package static func dateText(days: Int64) -> String {
        let (y, m, d) = CivilTime.civil(days: days)
        return CivilTime.pad(y, 4) + CivilTime.pad(m, 2) + CivilTime.pad(d, 2)
    }

    /// `YYYYMMDDTHHMMSSZ` for an instant (milliseconds dropped).
    package static func utcText(milliseconds ms: Int64) -> String {
        let seconds = CivilTime.floorDivide(ms, 1000)
        let days = CivilTime.floorDivide(seconds, 86_400)
        let s = Int(seconds - days * 86_400)
        return dateText(days: days) + "T" + CivilTime.pad(s / 3600, 2) + CivilTime.pad(s / 60 % 60, 2) + CivilTime.pad(s % 60, 2) + "Z"
    }

    /// `±HHMM` or `±HHMMSS` as seconds east of UTC.
    package static func offset(_ s: String) -> Int64? {
        let u = Array(s.utf8)
        guard u.count == 5 || u.count == 7, u[0] == UInt8(ascii: "+") || u[0] == UInt8(ascii: "-"),
            let h = CivilTime.number(u[1..<3]), let m = CivilTime.number(u[3..<5])
        else { return nil }
        let sec = u.count == 7 ? CivilTime.number(u[5..<7]) : 0
        guard let sec else { return nil }
        let v = Int64(h * 3600 + m * 60 + sec)
        return u[0] == UInt8(ascii: "-") ? -v : v
    }

    /// The instant a floating wall time denotes in this machine's time zone (`TZ` respected).
    package static func localInstant(_ wall: Wall) -> Int64 {
        var t = time_t(wall.seconds)
        var parts = tm()
        gmtime_r(&t, &parts)
        parts.tm_isdst = -1
        return Int64(mktime(&parts)) * 1000
    }

    /// The due date or instant a DUE (or DTSTART) line states; `zones` are the file's
    /// VTIMEZONEs by TZID.
    package static func due(_ line: ContentLine, zones: [String: ICalendarTimeZone]) throws(InterchangeError) -> Due {
        if line.parameter("VALUE") == "DATE" || line.value.utf8.count == 8 {
            guard let d = date(line.value) else { throw .task(0, "\(line.name):\(line.value) is not a date (YYYYMMDD)") }
            return .date(days: d)
        }
        guard let wall = wall(line.value) else {
            throw .task(0, "\(line.name):\(line.value) is not a date-time (YYYYMMDDTHHMMSS, Z for UTC)")
        }
        if wall.isUTC { return (.instant(milliseconds: wall.seconds * 1000)) }
        guard let tzid = line.parameter("TZID") else { return (.instant(milliseconds: localInstant(wall))) }
        guard let zone = zones[tzid] else {
            throw .task(0, "\(line.name) names the time zone '\(tzid)', but the file has no VTIMEZONE for it")
        }
        return .instant(milliseconds: (wall.seconds - zone.offset(atWall: wall.seconds)) * 1000)
    }
}
