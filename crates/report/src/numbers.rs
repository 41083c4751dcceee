//! Numbers as every report writes them, in one place: three significant digits (learning
//! rates, steps), two for a standard error, batch sizes as integers, seconds with a unit,
//! accuracies as percentages, fixed decimals for table cells. Undefined values print as "–".

/// `v` to three significant digits, in scientific notation below 0.001 and from 100,000
/// (learning rates span 1e-5 to 10).
pub(crate) fn sig(v: f64) -> String {
    if !v.is_finite() {
        return "–".into();
    }
    let a = v.abs();
    if a != 0.0 && !(1e-3..1e5).contains(&a) {
        return format!("{v:.2e}");
    }
    let decimals = if a == 0.0 {
        0
    } else {
        // Digits after the point for three significant ones: 2 at 1.23, 4 at 0.0123.
        (2 - a.log10().floor() as i32).max(0) as usize
    };
    let s = format!("{v:.decimals$}");
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

/// A slope for the reader: `finite` of its value, or ±∞ where the data cannot bound it.
pub(crate) fn slope(x: f64, finite: impl Fn(f64) -> String) -> String {
    match x {
        x if x == f64::INFINITY => "+∞".into(),
        x if x == f64::NEG_INFINITY => "−∞".into(),
        x => finite(x),
    }
}

/// A signed value (a slope, a ratio) to three significant digits, "+∞" and "−∞" where
/// unbounded: the one format of slopes and ratios in reports.
pub(crate) fn signed(x: f64) -> String {
    slope(x, sig)
}

/// A batch size held as f64 (as the regimes and fits hold them), printed as an integer.
pub(crate) fn batch(b: f64) -> String {
    if b.is_finite() {
        format!("{}", b.round())
    } else {
        "–".into()
    }
}

/// Seconds with a unit that keeps them readable: "850 ms", "12.3 s", "4.2 min", "1.5 h",
/// "3.2 days"; the one duration format of reports and the CLI.
pub fn seconds(s: f64) -> String {
    if !s.is_finite() {
        "–".into()
    } else if s < 1.0 {
        format!("{} ms", sig(1000.0 * s))
    } else if s < 120.0 {
        format!("{} s", sig(s))
    } else if s < 7200.0 {
        format!("{} min", sig(s / 60.0))
    } else if s < 48.0 * 3600.0 {
        format!("{} h", sig(s / 3600.0))
    } else {
        format!("{} days", sig(s / 86_400.0))
    }
}

/// A value with its interval: "127 (95% interval 110–150)".
pub(crate) fn with_interval(v: f64, (lo, hi): (f64, f64), level: f64) -> String {
    if lo.is_finite() && hi.is_finite() {
        format!(
            "{} ({:.0}% interval {}–{})",
            sig(v),
            100.0 * level,
            sig(lo),
            sig(hi)
        )
    } else {
        sig(v)
    }
}

/// `s` with its first character upper-cased (by characters: a label may start with any
/// letter).
pub(crate) fn capitalised(s: &str) -> String {
    let mut chars = s.chars();
    let first: String = chars
        .next()
        .map(|c| c.to_uppercase().collect())
        .unwrap_or_default();
    format!("{first}{}", chars.as_str())
}

/// A standard error with two significant digits; "–" when undefined.
pub(crate) fn two_digits(v: f64) -> String {
    if !v.is_finite() {
        return "–".into();
    }
    if v == 0.0 {
        return "0".into();
    }
    let decimals = (1 - v.abs().log10().floor() as i32).max(0) as usize;
    format!("{v:.decimals$}")
}

/// An accuracy in [0, 1] as a percentage with one decimal.
pub(crate) fn pct(v: f64) -> String {
    if v.is_finite() {
        format!("{:.1}%", 100.0 * v)
    } else {
        "–".into()
    }
}

/// `v` with `decimals` decimals, "–" where nothing was measured.
pub(crate) fn fixed(v: f64, decimals: usize) -> String {
    if v.is_finite() {
        format!("{v:.decimals$}")
    } else {
        "–".into()
    }
}

pub(crate) use crate::markdown::and_list;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_print_plainly() {
        assert_eq!(sig(0.0123456), "0.0123");
        assert_eq!(sig(1.5), "1.5");
        assert_eq!(sig(127.4), "127");
        assert_eq!(sig(12345.0), "12345");
        assert_eq!(sig(3.3e-5), "3.30e-5");
        assert_eq!(sig(0.0), "0");
        assert_eq!(sig(f64::NAN), "–");
        assert_eq!(batch(512.0), "512");
        assert_eq!(seconds(0.25), "250 ms");
        assert_eq!(seconds(12.34), "12.3 s");
        assert_eq!(seconds(300.0), "5 min");
        assert_eq!(seconds(3.0 * 3600.0), "3 h");
        assert_eq!(seconds(3.5 * 86_400.0), "3.5 days");
        assert_eq!(
            with_interval(127.0, (110.0, 150.0), 0.95),
            "127 (95% interval 110–150)"
        );
        assert_eq!(capitalised("éa"), "Éa");
        assert_eq!(two_digits(0.01234), "0.012");
        assert_eq!(two_digits(12.34), "12");
        assert_eq!(pct(0.8125), "81.2%");
        assert_eq!(fixed(1.25, 1), "1.2");
        assert_eq!(fixed(f64::NAN, 1), "–");
        assert_eq!(
            and_list(&["a".into(), "b".into(), "c".into()]),
            "a, b and c"
        );
        assert_eq!(and_list(&[]), "none");
    }
}
