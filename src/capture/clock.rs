//! The capture's clock: how the doorbell path stamps a record's observed and
//! done times, and how the writer turns those stamps into CLOCK_MONOTONIC
//! nanoseconds, the only time domain a capture file holds.
//!
//! Reading CLOCK_MONOTONIC costs about 21 ns here (the vDSO orders its TSC
//! read with a fence, then scales it), a third of a launch's whole capture
//! budget. Where the kernel's own clocksource is the TSC, the doorbell path
//! reads the bare TSC instead (about 9 ns) and the writer thread converts:
//! each stamp is scaled from an *anchor* (a TSC reading and a CLOCK_MONOTONIC
//! reading taken together) at the rate measured between the capture's first
//! pair and that anchor. The writer takes a new anchor once a stamp is more
//! than [`REANCHOR_NS`] past the current one, and converted times never run
//! backwards for stamps in TSC order. The conversion is linear from a reading
//! of the kernel's own clock, so its error is how much the kernel's rate
//! changed (NTP slewing: normally a few ppm, at most 500 ppm) over the span
//! between a stamp and its anchor, normally at most about one anchor interval
//! or one writer poll (10 ms): a few ns; at the largest slew, 0.5 us per ms of
//! that span. A stamp converted long after it was taken (the observed time of
//! a packet that waited seconds at a barrier) carries that drift over the
//! whole wait: with NTP's usual few ppm, a few us per second waited.

use crate::sys;

/// How long a stamp may lie past the current anchor before the writer takes
/// a new one (1 ms).
pub const REANCHOR_NS: u64 = 1_000_000;
/// The shortest span between the first pair and the first anchor (1 ms): the
/// rate measured over it is good to about 1e-4 (two readings' jitter).
pub const MIN_BASELINE_NS: u64 = 1_000_000;

/// How the doorbell path stamps records' observed and done times.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Stamp {
    /// CLOCK_MONOTONIC in ns: the stamps are the capture's times.
    #[default]
    Ns,
    /// The CPU's time-stamp counter, converted by the writer.
    Tsc,
}

impl Stamp {
    /// The cheapest stamp this machine supports: the TSC where the kernel's
    /// own clocksource is the TSC (it has checked it is constant-rate and
    /// agrees across CPUs), CLOCK_MONOTONIC otherwise.
    pub fn for_this_machine() -> Stamp {
        if sys::tsc_is_the_kernel_clock() {
            Stamp::Tsc
        } else {
            Stamp::Ns
        }
    }

    /// A stamp, now.
    #[inline]
    pub fn now(self) -> u64 {
        match self {
            Stamp::Ns => sys::monotonic_ns(),
            Stamp::Tsc => sys::tsc(),
        }
    }

    /// The ring header's code for it (`hdr::CLOCK`).
    pub fn code(self) -> u64 {
        match self {
            Stamp::Ns => 0,
            Stamp::Tsc => 1,
        }
    }
}

/// A TSC reading and a CLOCK_MONOTONIC reading taken together.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Pair {
    pub tsc: u64,
    pub ns: u64,
}

impl Pair {
    /// Reads both clocks: the TSC on each side of the CLOCK_MONOTONIC read,
    /// the tightest of three tries (a try the thread was preempted in is
    /// spread wide), the TSC taken midway.
    pub fn now() -> Pair {
        let mut best = (u64::MAX, Pair::default());
        for _ in 0..3 {
            let before = sys::tsc();
            let ns = sys::monotonic_ns();
            let after = sys::tsc();
            let width = after.wrapping_sub(before);
            if width < best.0 {
                best = (
                    width,
                    Pair {
                        tsc: before + width / 2,
                        ns,
                    },
                );
            }
        }
        best.1
    }
}

/// Stamps to ns: linear from `anchor`, at the rate measured from the first
/// pair to `anchor`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TickScale {
    anchor: Pair,
    /// ns per tick, 32.32 fixed point.
    mult: u64,
}

impl TickScale {
    /// `None` unless `anchor` is later than `first` on both clocks (and the
    /// rate fits: under 2^32 ns per tick).
    pub fn new(first: Pair, anchor: Pair) -> Option<TickScale> {
        if anchor.tsc <= first.tsc || anchor.ns <= first.ns {
            return None;
        }
        let mult = (u128::from(anchor.ns - first.ns) << 32) / u128::from(anchor.tsc - first.tsc);
        Some(TickScale {
            anchor,
            mult: u64::try_from(mult).ok()?,
        })
    }

    /// The anchor the stamps are scaled from.
    pub fn anchor(&self) -> Pair {
        self.anchor
    }

    /// A stamp in ns.
    #[inline]
    pub fn to_ns(&self, t: u64) -> u64 {
        let scaled = |d: u64| ((u128::from(d) * u128::from(self.mult)) >> 32) as u64;
        if t >= self.anchor.tsc {
            self.anchor.ns.saturating_add(scaled(t - self.anchor.tsc))
        } else {
            self.anchor.ns.saturating_sub(scaled(self.anchor.tsc - t))
        }
    }

    /// About `ns` in ticks, at this rate.
    fn ticks_for(&self, ns: u64) -> u64 {
        let t = (u128::from(ns) << 32) / u128::from(self.mult.max(1));
        u64::try_from(t).unwrap_or(u64::MAX)
    }
}

/// The writer's converter: stamps of records, in the order it encodes them,
/// to ns.
#[derive(Debug)]
pub struct TickConverter {
    first: Pair,
    scale: Option<TickScale>,
    /// A stamp further than this past the anchor takes a new anchor.
    reanchor_ticks: u64,
    /// The latest stamp converted so far, and its value.
    last: (u64, u64),
    /// The stamp that last took a new anchor: the next one must be a
    /// further [`REANCHOR_NS`] on (so stamps ahead of the writer's own clock
    /// reading, which a new anchor does not catch up with, do not take a
    /// pair each).
    trigger: u64,
}

impl TickConverter {
    /// A converter from the capture's first pair.
    pub fn new(first: Pair) -> TickConverter {
        TickConverter {
            first,
            scale: None,
            reanchor_ticks: 0,
            last: (0, 0),
            trigger: 0,
        }
    }

    /// The current scale (`None` until the first anchor).
    pub fn scale(&self) -> Option<&TickScale> {
        self.scale.as_ref()
    }

    /// Makes sure there is a scale: takes the first anchor, once at least
    /// [`MIN_BASELINE_NS`] after the first pair (`sleep` waits out the
    /// rest). `pair` reads the clocks. Returns whether a new anchor was
    /// taken.
    pub fn ensure_scale(&mut self, pair: &mut impl FnMut() -> Pair, sleep: impl Fn(u64)) -> bool {
        if self.scale.is_some() {
            return false;
        }
        for _ in 0..8 {
            let p = pair();
            let span = p.ns.saturating_sub(self.first.ns);
            if span >= MIN_BASELINE_NS {
                if let Some(s) = TickScale::new(self.first, p) {
                    self.reanchor_ticks = s.ticks_for(REANCHOR_NS);
                    self.scale = Some(s);
                    return true;
                }
            }
            sleep(MIN_BASELINE_NS.saturating_sub(span).max(1_000));
        }
        false
    }

    /// One record's (observed, done) stamps in ns. Takes a new anchor first
    /// when a stamp is over [`REANCHOR_NS`] past the current one (returns
    /// whether it did, so the caller can publish it). A stamp of 0 (no time
    /// taken) stays 0. Without a scale (the clocks never moved apart) every
    /// stamp is 0: no time is better than a wrong one.
    #[inline]
    pub fn convert(
        &mut self,
        observed: u64,
        done: u64,
        pair: &mut impl FnMut() -> Pair,
        sleep: impl Fn(u64),
    ) -> ((u64, u64), bool) {
        let mut moved = self.scale.is_none() && self.ensure_scale(pair, sleep);
        let Some(mut scale) = self.scale else {
            return ((0, 0), moved);
        };
        let latest = observed.max(done);
        if latest > scale.anchor.tsc.saturating_add(self.reanchor_ticks)
            && latest > self.trigger.saturating_add(self.reanchor_ticks)
        {
            self.trigger = latest;
            if let Some(s) = TickScale::new(self.first, pair()) {
                if s.anchor.tsc > scale.anchor.tsc && s.anchor.ns >= scale.anchor.ns {
                    scale = s;
                    self.reanchor_ticks = s.ticks_for(REANCHOR_NS);
                    self.scale = Some(s);
                    moved = true;
                }
            }
        }
        let mut one = |t: u64| {
            if t == 0 {
                return 0;
            }
            let mut v = scale.to_ns(t);
            // A new anchor may put a stamp a few ns before what an earlier
            // one gave a smaller stamp: never let time run backwards.
            if t >= self.last.0 {
                v = v.max(self.last.1);
                self.last = (t, v);
            }
            v
        };
        let o = one(observed);
        // A one-packet drain stamps both times with one reading.
        let d = if done == observed { o } else { one(done) };
        ((o, d), moved)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fake machine: a 2.5 GHz TSC (0.4 ns per tick), CLOCK_MONOTONIC 1 s
    /// ahead of it, read `step` ticks apart.
    fn fake(start: u64, step: u64) -> impl FnMut() -> Pair {
        let mut t = start;
        move || {
            t += step;
            Pair {
                tsc: t,
                ns: 1_000_000_000 + t * 2 / 5,
            }
        }
    }

    #[test]
    fn stamps_convert_to_the_monotonic_time_they_were_taken_at() {
        let mut pair = fake(0, 5_000_000); // 2 ms apart
        let mut c = TickConverter::new(pair());
        let mut t = 6_000_000;
        let mut moved = 0;
        for _ in 0..10_000 {
            t += 12_345;
            let ((o, d), m) = c.convert(t, t + 100, &mut pair, |_| {});
            moved += usize::from(m);
            assert!(o.abs_diff(1_000_000_000 + t * 2 / 5) <= 1, "{t}: {o}");
            assert!(d.abs_diff(1_000_000_000 + (t + 100) * 2 / 5) <= 1);
            assert!(d >= o);
        }
        // 10,000 stamps 4.9 us apart over 49 ms: a new anchor each ms or so.
        assert!((20..=60).contains(&moved), "{moved} anchors");
        assert_eq!(c.convert(0, 0, &mut pair, |_| {}).0, (0, 0));
    }

    #[test]
    fn the_first_anchor_waits_for_a_baseline_and_time_never_runs_backwards() {
        // Pairs 0.4 us apart: the converter sleeps until 1 ms has passed
        // before it trusts a rate (here a sleep moves the fake clock on).
        let clock = std::cell::Cell::new(0u64);
        let mut pair = || {
            clock.set(clock.get() + 1_000);
            Pair {
                tsc: clock.get(),
                ns: 1_000_000_000 + clock.get() * 2 / 5,
            }
        };
        let mut c = TickConverter::new(pair());
        let slept = std::cell::Cell::new(0);
        let sleep = |ns: u64| {
            slept.set(slept.get() + 1);
            clock.set(clock.get() + ns * 5 / 2);
        };
        assert!(c.ensure_scale(&mut pair, sleep));
        assert_eq!(slept.get(), 1);
        let s = *c.scale().unwrap();
        assert!(s.anchor().ns - 1_000_000_000 >= MIN_BASELINE_NS / 2);
        // A clock whose rate changes: the conversion jumps at each anchor,
        // and later stamps never convert to less than earlier ones.
        let mut t = s.anchor().tsc;
        let mut ns = s.anchor().ns;
        let mut rate = 0.4;
        let mut last = 0;
        for i in 0..5_000u64 {
            t += 7_919;
            ns += (7_919.0 * rate) as u64;
            rate = if i % 500 < 250 { 0.4002 } else { 0.3998 };
            let mut now = || Pair { tsc: t, ns };
            let ((o, d), _) = c.convert(t - 50, t, &mut now, |_| {});
            assert!(o >= last && d >= o, "{i}: {last} {o} {d}");
            last = d;
            assert!(d.abs_diff(ns) < 2_000, "{i}: {d} against {ns}");
        }
    }

    #[test]
    fn stamps_ahead_of_the_clock_take_a_new_anchor_once_a_millisecond_of_stamps() {
        // The writer's clock stands still while stamps run on (as when a
        // producer's stamps are ahead of it): 100,000 stamps 0.68 us apart
        // (68 ms) take about 68 anchors, not one each.
        let mut pair = fake(0, 5_000_000);
        let mut c = TickConverter::new(pair());
        assert!(c.ensure_scale(&mut pair, |_| {}));
        let anchor = c.scale().unwrap().anchor();
        let mut reads = 0;
        let mut still = || {
            reads += 1;
            anchor
        };
        let mut last = 0;
        for i in 1..=100_000u64 {
            let t = anchor.tsc + i * 1_700;
            let ((o, _), _) = c.convert(t, t, &mut still, |_| {});
            assert!(o.abs_diff(anchor.ns + i * 1_700 * 2 / 5) <= 1, "{i}: {o}");
            assert!(o > last);
            last = o;
        }
        assert!((60..=80).contains(&reads), "{reads} pair reads");
    }

    #[test]
    fn no_scale_gives_no_time_rather_than_a_wrong_one() {
        // A clock that never moves: no rate can be measured.
        let mut pair = || Pair { tsc: 5, ns: 9 };
        let mut c = TickConverter::new(pair());
        assert_eq!(c.convert(100, 200, &mut pair, |_| {}).0, (0, 0));
        assert!(TickScale::new(Pair { tsc: 1, ns: 1 }, Pair { tsc: 1, ns: 2 }).is_none());
    }

    #[test]
    fn a_real_pair_agrees_with_the_kernel_clock() {
        if Stamp::for_this_machine() != Stamp::Tsc {
            return; // nothing to convert: stamps are already ns
        }
        let first = Pair::now();
        let mut c = TickConverter::new(first);
        assert!(c.ensure_scale(&mut Pair::now, sys::sleep_ns));
        for _ in 0..1000 {
            let before = sys::monotonic_ns();
            let t = sys::tsc();
            let after = sys::monotonic_ns();
            let ((v, _), _) = c.convert(t, t, &mut Pair::now, sys::sleep_ns);
            // Within the two readings, give or take the pairs' jitter.
            assert!(
                v + 2_000 >= before && v <= after + 2_000,
                "{before} {v} {after}"
            );
        }
    }
}
