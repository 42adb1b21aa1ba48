//! Calendar arithmetic for the few dates the suite writes and reads (a run's start, a waiver's
//! expiry, JUnit's timestamps): the proleptic Gregorian calendar in UTC, without a calendar
//! crate in what a vendor links.

use std::time::{SystemTime, UNIX_EPOCH};

/// Whether `year` is a leap year.
fn leap(year: i64) -> bool {
    (year % 4 == 0 && year % 100 != 0) || year % 400 == 0
}

/// The days of `month` (1 to 12) in `year`; 0 for a month that does not exist.
pub fn days_in_month(year: i64, month: u32) -> u32 {
    match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if leap(year) => 29,
        2 => 28,
        _ => 0,
    }
}

/// The date `days` days after 1970-01-01 (before it, when negative): (year, month, day).
pub fn civil_from_days(days: i64) -> (i64, u32, u32) {
    // Counted in 400-year eras from 0000-03-01, so that the leap day ends each year.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let of_era = z.rem_euclid(146_097);
    let year_of_era = (of_era - of_era / 1_460 + of_era / 36_524 - of_era / 146_096) / 365;
    let day_of_year = of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let shifted_month = (5 * day_of_year + 2) / 153;
    let day = (day_of_year - (153 * shifted_month + 2) / 5 + 1) as u32;
    let month = if shifted_month < 10 {
        shifted_month + 3
    } else {
        shifted_month - 9
    } as u32;
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

/// Seconds since 1970-01-01T00:00:00Z (negative before it), whole seconds towards the past.
fn unix_seconds(t: SystemTime) -> i64 {
    match t.duration_since(UNIX_EPOCH) {
        Ok(d) => i64::try_from(d.as_secs()).unwrap_or(i64::MAX),
        Err(e) => {
            let d = e.duration();
            let whole = i64::try_from(d.as_secs()).unwrap_or(i64::MAX);
            -whole - i64::from(d.subsec_nanos() > 0)
        }
    }
}

/// The UTC date of `t`: (year, month, day).
pub fn date_of(t: SystemTime) -> (i64, u32, u32) {
    civil_from_days(unix_seconds(t).div_euclid(86_400))
}

/// `t` in RFC 3339, UTC, to the second: `2026-12-01T20:45:07Z`.
pub fn rfc3339_utc(t: SystemTime) -> String {
    let secs = unix_seconds(t);
    let (y, m, d) = civil_from_days(secs.div_euclid(86_400));
    let in_day = secs.rem_euclid(86_400);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        in_day / 3_600,
        in_day % 3_600 / 60,
        in_day % 60
    )
}

/// Reads `n` ASCII digits at the start of `s`.
fn digits(s: &[u8], n: usize) -> Option<u32> {
    let d = s.get(..n)?;
    d.iter().try_fold(0u32, |acc, c| {
        c.is_ascii_digit().then(|| acc * 10 + u32::from(c - b'0'))
    })
}

/// An RFC 3339 timestamp (`2026-12-01T20:45:07Z`, `2026-12-01t20:45:07.5+01:00`, a space for
/// the `T`) rewritten as JUnit's timestamps read it: to the millisecond, the offset spelled out
/// (`2026-12-01T20:45:07.000+00:00`). `None` when it is not one: a date that does not exist, an
/// hour past 23, a minute past 59, a second past 60 (a leap second), an offset past 23:59.
pub fn junit_timestamp(text: &str) -> Option<String> {
    let b = text.as_bytes();
    let (year, month, day) = (
        digits(b, 4)?,
        digits(b.get(5..)?, 2)?,
        digits(b.get(8..)?, 2)?,
    );
    let (hour, minute, second) = (
        digits(b.get(11..)?, 2)?,
        digits(b.get(14..)?, 2)?,
        digits(b.get(17..)?, 2)?,
    );
    let punctuated = b.get(4) == Some(&b'-')
        && b.get(7) == Some(&b'-')
        && matches!(b.get(10), Some(b'T' | b't' | b' '))
        && b.get(13) == Some(&b':')
        && b.get(16) == Some(&b':');
    let real = (1..=12).contains(&month)
        && (1..=days_in_month(i64::from(year), month)).contains(&day)
        && hour <= 23
        && minute <= 59
        && second <= 60;
    if !punctuated || !real {
        return None;
    }
    let mut rest = &b[19..];
    let mut millis = 0;
    if let Some(fraction) = rest.strip_prefix(b".") {
        let n = fraction.iter().take_while(|c| c.is_ascii_digit()).count();
        if n == 0 {
            return None;
        }
        for (i, c) in fraction[..n.min(3)].iter().enumerate() {
            millis += u32::from(c - b'0') * [100, 10, 1][i];
        }
        rest = &fraction[n..];
    }
    let offset = match rest {
        [b'Z' | b'z'] => "+00:00".to_owned(),
        [sign @ (b'+' | b'-'), h1, h2, b':', m1, m2] => {
            let (h, m) = (digits(&[*h1, *h2], 2)?, digits(&[*m1, *m2], 2)?);
            if h > 23 || m > 59 {
                return None;
            }
            let sign = if *sign == b'-' && (h, m) != (0, 0) {
                '-'
            } else {
                '+'
            };
            format!("{sign}{h:02}:{m:02}")
        }
        _ => return None,
    };
    Some(format!(
        "{year:04}-{month:02}-{day:02}T{hour:02}:{minute:02}:{second:02}.{millis:03}{offset}"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn days_and_dates_agree_across_four_centuries() {
        assert!(civil_from_days(-800_000).0 < 0, "a date before year 1");
        // Every day from 0001-01-01 through 2400 follows the one before it.
        let start = -719_162;
        let mut prev = civil_from_days(start);
        assert_eq!(prev, (1, 1, 1));
        for n in start + 1..start + 146_097 * 6 {
            let next = if prev.2 < days_in_month(prev.0, prev.1) {
                (prev.0, prev.1, prev.2 + 1)
            } else if prev.1 < 12 {
                (prev.0, prev.1 + 1, 1)
            } else {
                (prev.0 + 1, 1, 1)
            };
            assert_eq!(civil_from_days(n), next, "day {n}");
            prev = next;
        }
        assert_eq!(civil_from_days(0), (1970, 1, 1));
        assert_eq!(civil_from_days(-1), (1969, 12, 31));
        assert_eq!(civil_from_days(11_016), (2000, 2, 29));
        assert_eq!(days_in_month(1900, 2), 28);
        assert_eq!(days_in_month(2000, 2), 29);
        assert_eq!(days_in_month(2026, 13), 0);
    }

    #[test]
    fn timestamps_are_utc_to_the_second() {
        let t = UNIX_EPOCH + Duration::from_secs(1_796_157_907) + Duration::from_millis(999);
        assert_eq!(rfc3339_utc(t), "2026-12-01T20:45:07Z");
        assert_eq!(date_of(t), (2026, 12, 1));
        let before = UNIX_EPOCH - Duration::from_millis(1);
        assert_eq!(rfc3339_utc(before), "1969-12-31T23:59:59Z");
    }

    #[test]
    fn junit_timestamps_spell_out_the_milliseconds_and_the_offset() {
        for (text, want) in [
            (
                "2026-12-01T20:45:07Z",
                Some("2026-12-01T20:45:07.000+00:00"),
            ),
            (
                "2026-12-01t20:45:07.5z",
                Some("2026-12-01T20:45:07.500+00:00"),
            ),
            (
                "2026-12-01 20:45:07.123456-05:30",
                Some("2026-12-01T20:45:07.123-05:30"),
            ),
            (
                "2026-12-01T20:45:07-00:00",
                Some("2026-12-01T20:45:07.000+00:00"),
            ),
            (
                "2024-02-29T23:59:60+14:00",
                Some("2024-02-29T23:59:60.000+14:00"),
            ),
            ("2026-02-29T00:00:00Z", None),
            ("2026-12-01T24:00:00Z", None),
            ("2026-12-01T20:45:07", None),
            ("2026-12-01T20:45:07.Z", None),
            ("2026-12-01T20:45:07+24:00", None),
            ("2026-12-01T20:45:07Zjunk", None),
            ("2026-1-01T20:45:07Z", None),
            ("", None),
        ] {
            assert_eq!(junit_timestamp(text).as_deref(), want, "{text}");
        }
    }
}
