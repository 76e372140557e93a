//! Rate-limited log lines for errors a program can repeat in a loop (a wait
//! on a dead signal, an index operation on a forged queue): the first few
//! occurrences are logged, then only the 2^k-th, each saying how many there
//! have been. 10,000 calls give 18 lines, not 10,000.

use std::sync::atomic::{AtomicU64, Ordering};

/// Occurrences logged before thinning starts.
const FIRST: u64 = 8;

/// One call site's counter.
#[derive(Debug)]
pub struct RateLimit(AtomicU64);

impl RateLimit {
    pub const fn new() -> RateLimit {
        RateLimit(AtomicU64::new(0))
    }

    /// Count one occurrence; `Some(n)` (the occurrence number, from 1) when
    /// this one should be logged.
    #[inline]
    pub fn tick(&self) -> Option<u64> {
        let n = self.0.fetch_add(1, Ordering::Relaxed) + 1;
        (n <= FIRST || n.is_power_of_two()).then_some(n)
    }
}

impl Default for RateLimit {
    fn default() -> Self {
        RateLimit::new()
    }
}

/// `tracing::error!` through a per-call-site [`RateLimit`]; the line ends with
/// the occurrence count once thinning has started.
#[macro_export]
macro_rules! error_limited {
    ($($arg:tt)+) => {{
        static LIMIT: $crate::runtime::ratelimit::RateLimit = $crate::runtime::ratelimit::RateLimit::new();
        if let Some(n) = LIMIT.tick() {
            if n > 8 {
                tracing::error!("{} (occurrence {n}; repeats are logged at powers of two)", format_args!($($arg)+));
            } else {
                tracing::error!($($arg)+);
            }
        }
    }};
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ten_thousand_occurrences_log_eighteen_lines() {
        let r = RateLimit::new();
        let n = (0..10_000).filter(|_| r.tick().is_some()).count();
        // 1..=8, then 16, 32, ..., 8192.
        assert_eq!(n, 8 + 10);
    }
}
