//! Memory planned before it is allocated: a dense N×N matrix of a large N is refused
//! with the size it would need, instead of the process aborting mid-fit.

use crate::error::{Error, Result};

/// Bytes of memory available: `OOSE_MEMORY_LIMIT` (bytes) when set, else the system's
/// available memory and free swap (Linux `/proc/meminfo`); `None` when unknown.
pub fn available() -> Option<u64> {
    if let Some(v) = std::env::var("OOSE_MEMORY_LIMIT")
        .ok()
        .and_then(|v| v.trim().parse::<u64>().ok())
    {
        return Some(v);
    }
    let info = std::fs::read_to_string("/proc/meminfo").ok()?;
    let kib = |key: &str| -> Option<u64> {
        let line = info.lines().find(|l| l.starts_with(key))?;
        line.split_whitespace().nth(1)?.parse().ok()
    };
    Some((kib("MemAvailable:")? + kib("SwapFree:").unwrap_or(0)).saturating_mul(1024))
}

/// `bytes` in words (`1.5 GiB`).
pub fn human(bytes: u128) -> String {
    let units = ["bytes", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];
    let mut v = bytes as f64;
    let mut u = 0;
    while v >= 1024.0 && u + 1 < units.len() {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 {
        format!("{bytes} bytes")
    } else {
        format!("{v:.1} {}", units[u])
    }
}

/// Refuses work that needs `matrices` dense matrices of `rows`×`cols` doubles when they
/// do not fit in the memory available; the error names `what` and the size.
pub(crate) fn plan(what: &'static str, matrices: u128, rows: usize, cols: usize) -> Result<()> {
    plan_bytes(what, matrices * rows as u128 * cols as u128 * 8)
}

/// Refuses work that needs `needed` bytes when they do not fit in the memory available;
/// the error names `what` and the size.
pub(crate) fn plan_bytes(what: &'static str, needed: u128) -> Result<()> {
    match available() {
        Some(avail) if needed > avail as u128 => Err(Error::OutOfMemory {
            what,
            needed: human(needed),
            available: human(avail as u128),
        }),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn sizes_read_as_people_write_them() {
        assert_eq!(super::human(512), "512 bytes");
        assert_eq!(super::human(3 << 30), "3.0 GiB");
        assert_eq!(super::human(320_000_000_000), "298.0 GiB");
    }
}
