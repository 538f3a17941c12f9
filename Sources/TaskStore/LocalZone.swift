#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
@_spi(Engine) import TaskModel

/// The local time zone, as the C library knows it (`TZ` respected).
package struct LocalZone: Sendable {
    package init() { tzset() }

    /// The local calendar date and time of day of an instant.
    package func civil(milliseconds ms: Int64) -> (days: Int64, hour: Int, minute: Int, second: Int, weekday: Int) {
        var t = time_t(CivilTime.floorDivide(ms, 1000))
        var tm = tm()
        localtime_r(&t, &tm)
        let days = CivilTime.days(year: Int(tm.tm_year) + 1900, month: Int(tm.tm_mon) + 1, day: Int(tm.tm_mday))
        return (days, Int(tm.tm_hour), Int(tm.tm_min), Int(tm.tm_sec), Int(tm.tm_wday))
    }

    /// The instant a local date and time denotes (the earlier one when a clock change repeats it).
    package func instant(days: Int64, hour: Int, minute: Int, second: Int = 0) -> Int64 {
        let (y, m, d) = CivilTime.civil(days: days)
        var tm = tm()
        tm.tm_year = Int32(y - 1900)
        tm.tm_mon = Int32(m - 1)
        tm.tm_mday = Int32(d)
        tm.tm_hour = Int32(hour)
        tm.tm_min = Int32(minute)
        tm.tm_sec = Int32(second)
        tm.tm_isdst = -1
        return Int64(mktime(&tm)) * 1000
    }
}
