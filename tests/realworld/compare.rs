//! The witness comparison: every kernel launch HIP accepted (as the HIP-API witness
//! `integration/witness/witness.c` recorded it) against the dispatches the shim captured (as
//! `softgpu inspect --format jsonl` prints them).
//!
//! What must hold, per process:
//! - every successful launch that did not go into a graph being captured appears in the capture
//!   exactly once, with the same kernel symbol, grid (work-items) and workgroup;
//! - on its stream's queue: each stream's launches land on one queue (a queue may serve several
//!   streams, as HIP shares hardware queues between streams), and the mapping is inferred from
//!   the capture and checked to be consistent. Cooperative launches are the exception HIP makes:
//!   they go to the device's cooperative queue (one per device, for all streams), so they are
//!   checked as the launches of that queue;
//! - in order: a stream's launches are captured in the order of their calls; calls that
//!   overlapped in time (racing threads on one stream) may be captured in either order;
//! - a `hipGraphLaunch` contributes the kernel nodes of its executable graph, each exactly once,
//!   in any order and on any queue (HIP may spread a graph over internal streams);
//! - no user dispatch is left that no launch explains; HIP's own blit kernels
//!   (`__amd_rocclr_*`) are accounted for by name, must carry `runtime_blit_kernel_not_executed`,
//!   and are counted;
//! - nothing is rejected.

use std::collections::{BTreeMap, HashMap};

use serde_json::Value;

/// The prefix of every kernel HIP's runtime dispatches on its own behalf.
pub const BLIT_PREFIX: &str = "__amd_rocclr_";
/// The reason every blit dispatch must carry.
pub const BLIT_REASON: &str = "runtime_blit_kernel_not_executed";
/// Problems listed before the rest are only counted.
const MAX_LISTED: usize = 40;

/// A kernel's identity and geometry: symbol name without `.kd`, grid in work-items, workgroup.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Shape {
    pub name: String,
    pub grid: [u64; 3],
    pub block: [u64; 3],
}

impl std::fmt::Display for Shape {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let [gx, gy, gz] = self.grid;
        let [bx, by, bz] = self.block;
        write!(f, "{} grid {gx}x{gy}x{gz} block {bx}x{by}x{bz}", self.name)
    }
}

/// One launch line of the witness log.
#[derive(Clone, Debug, PartialEq)]
pub struct Launch {
    pub seq: u64,
    pub end: u64,
    pub tid: u64,
    pub api: String,
    pub status: i64,
    pub name: Option<String>,
    pub grid: [u64; 3],
    pub block: [u64; 3],
    pub stream: u64,
    pub spt: bool,
    pub device: i64,
    /// The stream's device (-1: the witness could not tell; then `device` is used).
    pub stream_device: i64,
    /// None: the witness could not tell.
    pub capturing: Option<bool>,
    /// Graph launches: the executable graph's kernel nodes (None: the witness does not know the
    /// graph).
    pub nodes: Option<Vec<Shape>>,
    pub is_graph: bool,
    /// A cooperative launch: a `*Cooperative*` entry point, or HIP 7's `hipLaunchKernelExC` and
    /// `hipDrvLaunchKernelEx` with the cooperative attribute (`"cooperative":true`).
    pub cooperative: bool,
}

/// A line of the witness log.
#[derive(Clone, Debug, PartialEq)]
pub enum Event {
    Launch(Launch),
    StreamDestroy {
        seq: u64,
        stream: u64,
    },
    /// hipGraphInstantiate* and hipGraphExecUpdate: informational.
    Graph {
        seq: u64,
    },
}

fn hex(v: &Value) -> Option<u64> {
    let s = v.as_str()?;
    u64::from_str_radix(s.strip_prefix("0x")?, 16).ok()
}

fn triple(v: &Value) -> Option<[u64; 3]> {
    let a = v.as_array()?;
    match a.as_slice() {
        [x, y, z] => Some([x.as_u64()?, y.as_u64()?, z.as_u64()?]),
        _ => None,
    }
}

fn shape(v: &Value) -> Option<Shape> {
    Some(Shape {
        name: v["name"].as_str()?.to_string(),
        grid: triple(&v["grid"])?,
        block: triple(&v["block"])?,
    })
}

/// The witness log, line by line. A line that is not what the witness writes is an error
/// naming its number (a torn last line included: the witness writes whole lines).
pub fn parse_witness(text: &str) -> Result<Vec<Event>, String> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let bad = |why: &str| format!("witness log line {}: {why}: {line}", i + 1);
        let v: Value = serde_json::from_str(line).map_err(|e| bad(&e.to_string()))?;
        let seq = v["seq"].as_u64().ok_or_else(|| bad("no seq"))?;
        if let Some(event) = v["event"].as_str() {
            out.push(if event == "stream_destroy" {
                Event::StreamDestroy {
                    seq,
                    stream: hex(&v["stream"]).ok_or_else(|| bad("no stream"))?,
                }
            } else {
                Event::Graph { seq }
            });
            continue;
        }
        let is_graph = v.get("exec").is_some();
        let nodes = if is_graph {
            match &v["nodes"] {
                Value::Null => None,
                Value::Array(a) => Some(
                    a.iter()
                        .map(|n| {
                            shape(n).ok_or_else(|| bad("a graph node without name/grid/block"))
                        })
                        .collect::<Result<Vec<_>, _>>()?,
                ),
                _ => return Err(bad("nodes is neither null nor a list")),
            }
        } else {
            None
        };
        out.push(Event::Launch(Launch {
            seq,
            end: v["end"].as_u64().ok_or_else(|| bad("no end"))?,
            tid: v["tid"].as_u64().ok_or_else(|| bad("no tid"))?,
            api: v["api"].as_str().ok_or_else(|| bad("no api"))?.to_string(),
            status: v["status"].as_i64().ok_or_else(|| bad("no status"))?,
            name: v["name"].as_str().map(str::to_string),
            grid: triple(&v["grid"]).ok_or_else(|| bad("no grid"))?,
            block: triple(&v["block"]).ok_or_else(|| bad("no block"))?,
            stream: hex(&v["stream"]).ok_or_else(|| bad("no stream"))?,
            spt: v["spt"].as_bool().ok_or_else(|| bad("no spt"))?,
            device: v["device"].as_i64().ok_or_else(|| bad("no device"))?,
            stream_device: v["stream_device"].as_i64().unwrap_or(-1),
            capturing: v["capturing"].as_bool(),
            nodes,
            is_graph,
            cooperative: v["api"].as_str().is_some_and(|a| a.contains("Cooperative"))
                || v["cooperative"] == true,
        }));
    }
    Ok(out)
}

/// One captured record of type `kernel_dispatch`, as the comparison needs it.
#[derive(Clone, Debug, PartialEq)]
pub struct Dispatch {
    pub seq: u64,
    pub queue: u64,
    pub index: u64,
    /// Symbol without `.kd`; None when the capture names no loaded kernel.
    pub name: Option<String>,
    pub grid: [u64; 3],
    pub block: [u64; 3],
    pub rejected: bool,
    pub reasons: Vec<String>,
}

/// The kernel dispatches among `inspect --format jsonl` records (other packet types are not
/// launches), and problems with records that are not what the interface says.
pub fn dispatches(records: &[Value]) -> (Vec<Dispatch>, Vec<String>) {
    let mut out = Vec::new();
    let mut problems = Vec::new();
    for r in records {
        if r["type"] != "kernel_dispatch" {
            if r["status"] == "rejected" {
                problems.push(format!(
                    "record seq {} ({}) was rejected: {}",
                    r["seq"], r["type"], r["reasons"]
                ));
            }
            continue;
        }
        let (Some(seq), Some(queue), Some(index), Some(grid), Some(block)) = (
            r["seq"].as_u64(),
            r["queue_id"].as_u64(),
            r["packet_index"].as_u64(),
            triple(&r["grid"]),
            triple(&r["workgroup"]),
        ) else {
            problems.push(format!(
                "a kernel_dispatch record without seq/queue_id/packet_index/grid/workgroup: {r}"
            ));
            continue;
        };
        out.push(Dispatch {
            seq,
            queue,
            index,
            name: r["kernel_symbol"]
                .as_str()
                .map(|s| s.strip_suffix(".kd").unwrap_or(s).to_string()),
            grid,
            block,
            rejected: r["status"] == "rejected",
            reasons: r["reasons"]
                .as_array()
                .map(|a| {
                    a.iter()
                        .filter_map(|v| v.as_str().map(str::to_string))
                        .collect()
                })
                .unwrap_or_default(),
        });
    }
    out.sort_by_key(|d| d.seq);
    (out, problems)
}

/// What the comparison found for one process.
#[derive(Clone, Debug, Default)]
pub struct Verdict {
    /// Empty when the comparison holds.
    pub problems: Vec<String>,
    /// Successful launches that had to be dispatched (graph nodes included).
    pub launches: u64,
    /// Launches recorded into a graph under stream capture (not dispatched by the call).
    pub captured_into_graphs: u64,
    /// Launches HIP refused (they must not be dispatched).
    pub refused: u64,
    pub graph_launches: u64,
    /// User kernel dispatches in the capture (each explained by a launch when problems is empty).
    pub user_dispatches: u64,
    /// Blit dispatches per kernel name.
    pub blits: BTreeMap<String, u64>,
    /// Streams (as the comparison names them) and the queue each one's launches landed on.
    pub stream_queues: BTreeMap<String, u64>,
}

impl Verdict {
    pub fn blit_total(&self) -> u64 {
        self.blits.values().sum()
    }
    pub fn dispatches(&self) -> u64 {
        self.user_dispatches + self.blit_total()
    }
    fn problem(&mut self, p: String) {
        self.problems.push(p);
    }
    /// The problems, at most MAX_LISTED of them, then a count of the rest.
    pub fn report(&self) -> String {
        let mut s = String::new();
        for p in self.problems.iter().take(MAX_LISTED) {
            s.push_str("  - ");
            s.push_str(p);
            s.push('\n');
        }
        if self.problems.len() > MAX_LISTED {
            s.push_str(&format!(
                "  ... and {} more\n",
                self.problems.len() - MAX_LISTED
            ));
        }
        s
    }
}

struct Pending {
    shape: Shape,
    seq: u64,
    end: u64,
    what: String,
}

struct StreamState {
    items: Vec<Option<Pending>>,
    cursor: usize,
    queue: Option<u64>,
}

impl StreamState {
    fn advance(&mut self) {
        while self.cursor < self.items.len() && self.items[self.cursor].is_none() {
            self.cursor += 1;
        }
    }
    /// Indices of the pending launches that may come next: the first pending one and every
    /// later one whose call began before some earlier pending call returned (they raced).
    fn window(&self) -> Vec<usize> {
        let mut out = Vec::new();
        let mut min_end = u64::MAX;
        for (i, item) in self.items.iter().enumerate().skip(self.cursor) {
            let Some(p) = item else { continue };
            if !out.is_empty() && p.seq > min_end {
                break;
            }
            min_end = min_end.min(p.end);
            out.push(i);
        }
        out
    }
}

/// The name the comparison gives a launch's stream. The null stream is per device, a per-thread
/// default stream per thread; any other handle counts as a new stream after each
/// `hipStreamDestroy` of it (HIP may hand the address out again).
fn stream_name(l: &Launch, destroyed: &HashMap<u64, Vec<u64>>) -> String {
    if l.cooperative {
        let device = if l.stream_device >= 0 {
            l.stream_device
        } else {
            l.device
        };
        return format!("cooperative queue of device {device}");
    }
    if l.stream == 2 || (l.spt && l.stream == 0) {
        return format!("per-thread stream of thread {}", l.tid);
    }
    if l.stream <= 1 {
        return format!("null stream of device {}", l.device);
    }
    let epoch = destroyed
        .get(&l.stream)
        .map_or(0, |seqs| seqs.iter().filter(|&&s| s < l.seq).count());
    if epoch == 0 {
        format!("stream {:#x}", l.stream)
    } else {
        format!("stream {:#x} (after {epoch} destroy)", l.stream)
    }
}

/// Compare one process's witness events with its captured kernel dispatches.
pub fn compare(events: &[Event], captured: &[Dispatch]) -> Verdict {
    let mut v = Verdict::default();
    let mut destroyed: HashMap<u64, Vec<u64>> = HashMap::new();
    for e in events {
        if let Event::StreamDestroy { seq, stream } = e {
            destroyed.entry(*stream).or_default().push(*seq);
        }
    }
    let mut launches: Vec<&Launch> = events
        .iter()
        .filter_map(|e| match e {
            Event::Launch(l) => Some(l),
            _ => None,
        })
        .collect();
    launches.sort_by_key(|l| l.seq);

    // What must be dispatched: per stream in call order, and graph nodes in a pool.
    let mut order: Vec<String> = Vec::new();
    let mut streams: HashMap<String, StreamState> = HashMap::new();
    let mut pool: HashMap<Shape, Vec<String>> = HashMap::new();
    for l in launches {
        let stream = stream_name(l, &destroyed);
        let what = format!(
            "witness launch seq {} ({}, {stream}, thread {})",
            l.seq, l.api, l.tid
        );
        if l.status != 0 {
            v.refused += 1;
            continue;
        }
        match l.capturing {
            Some(true) => {
                v.captured_into_graphs += 1;
                continue;
            }
            Some(false) => {}
            None => {
                v.problem(format!(
                    "{what}: the witness could not tell whether the stream was capturing"
                ));
                continue;
            }
        }
        if l.is_graph {
            v.graph_launches += 1;
            match &l.nodes {
                None => v.problem(format!(
                    "{what}: the witness does not know the kernel nodes of graph exec it launched"
                )),
                Some(nodes) => {
                    for n in nodes {
                        v.launches += 1;
                        pool.entry(n.clone())
                            .or_default()
                            .push(format!("{what}, node {n}"));
                    }
                }
            }
            continue;
        }
        let Some(name) = &l.name else {
            v.problem(format!(
                "{what}: HIP accepted the launch but does not name its kernel (grid {:?}, block {:?})",
                l.grid, l.block
            ));
            continue;
        };
        v.launches += 1;
        let state = streams.entry(stream.clone()).or_insert_with(|| {
            order.push(stream.clone());
            StreamState {
                items: Vec::new(),
                cursor: 0,
                queue: None,
            }
        });
        state.items.push(Some(Pending {
            shape: Shape {
                name: name.clone(),
                grid: l.grid,
                block: l.block,
            },
            seq: l.seq,
            end: l.end,
            what,
        }));
    }

    for d in captured {
        let at = format!(
            "captured dispatch seq {} (queue {}, index {})",
            d.seq, d.queue, d.index
        );
        if d.rejected {
            v.problem(format!("{at} was rejected: {:?}", d.reasons));
        }
        let Some(name) = &d.name else {
            v.user_dispatches += 1;
            v.problem(format!(
                "{at} names no kernel the runtime loaded (grid {:?}, workgroup {:?}): no launch explains it",
                d.grid, d.block
            ));
            continue;
        };
        if name.starts_with(BLIT_PREFIX) {
            *v.blits.entry(name.clone()).or_default() += 1;
            if !d.reasons.iter().any(|r| r == BLIT_REASON) {
                v.problem(format!(
                    "{at}: blit kernel {name} without the reason {BLIT_REASON}"
                ));
            }
            continue;
        }
        v.user_dispatches += 1;
        let got = Shape {
            name: name.clone(),
            grid: d.grid,
            block: d.block,
        };
        // The stream whose next launch (or a racing one) is this dispatch, among the streams
        // on this queue or not yet placed; the earliest call wins.
        let mut best: Option<(u64, &str, usize)> = None;
        for s in &order {
            let st = &streams[s];
            if st.queue.is_some_and(|q| q != d.queue) {
                continue;
            }
            for i in st.window() {
                let p = st.items[i].as_ref().unwrap();
                if p.shape == got && best.is_none_or(|(seq, _, _)| p.seq < seq) {
                    best = Some((p.seq, s.as_str(), i));
                }
            }
        }
        if let Some((_, s, i)) = best {
            let s = s.to_string();
            let st = streams.get_mut(&s).unwrap();
            st.items[i] = None;
            st.advance();
            if st.queue.is_none() {
                st.queue = Some(d.queue);
                v.stream_queues.insert(s, d.queue);
            }
            continue;
        }
        if let Some(list) = pool.get_mut(&got) {
            if list.pop().is_some() {
                if list.is_empty() {
                    pool.remove(&got);
                }
                continue;
            }
        }
        v.problem(format!(
            "{at}: {got}: {}",
            explain(&got, d.queue, &order, &streams)
        ));
    }

    for s in &order {
        let st = &streams[s];
        for p in st.items.iter().flatten() {
            v.problem(format!(
                "{}: {} was never captured{}",
                p.what,
                p.shape,
                st.queue
                    .map(|q| format!(" (the stream's other launches are on queue {q})"))
                    .unwrap_or_default()
            ));
        }
    }
    let mut left: Vec<(&Shape, &Vec<String>)> = pool.iter().collect();
    left.sort();
    for (_, whats) in left {
        for w in whats {
            v.problem(format!("{w} was never captured"));
        }
    }
    v
}

/// Why a captured dispatch matches no launch, as precisely as the pending launches allow.
fn explain(
    got: &Shape,
    queue: u64,
    order: &[String],
    streams: &HashMap<String, StreamState>,
) -> String {
    for s in order {
        let st = &streams[s];
        let Some(next) = st.window().first().and_then(|&i| st.items[i].as_ref()) else {
            continue;
        };
        let here = st.queue.is_none_or(|q| q == queue);
        if here && next.shape.name == got.name {
            return format!(
                "geometry differs from the next launch of {s}, {} ({})",
                next.what, next.shape
            );
        }
        if !here && next.shape == *got {
            return format!(
                "it is the next launch of {s} ({}), but that stream's launches are on queue {}",
                next.what,
                st.queue.unwrap()
            );
        }
        if here {
            if let Some(p) = st.items[st.cursor..]
                .iter()
                .flatten()
                .find(|p| p.shape == *got)
            {
                return format!(
                    "out of order: {} on {s} comes later; its next launch is {} ({})",
                    p.what, next.what, next.shape
                );
            }
        }
    }
    "no launch explains it (captured once more than launched, or never launched)".to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn launch(seq: u64, stream: u64, name: &str, grid: u64, block: u64) -> Event {
        Event::Launch(Launch {
            seq,
            end: seq + 1,
            tid: 7,
            api: "hipLaunchKernel".into(),
            status: 0,
            name: Some(name.into()),
            grid: [grid, 1, 1],
            block: [block, 1, 1],
            stream,
            spt: false,
            device: 0,
            stream_device: 0,
            capturing: Some(false),
            nodes: None,
            is_graph: false,
            cooperative: false,
        })
    }

    fn dispatch(seq: u64, queue: u64, name: &str, grid: u64, block: u64) -> Dispatch {
        Dispatch {
            seq,
            queue,
            index: seq,
            name: Some(name.into()),
            grid: [grid, 1, 1],
            block: [block, 1, 1],
            rejected: false,
            reasons: vec![],
        }
    }

    fn blit(seq: u64, queue: u64) -> Dispatch {
        Dispatch {
            reasons: vec![BLIT_REASON.into()],
            ..dispatch(seq, queue, "__amd_rocclr_fillBufferAligned", 64, 64)
        }
    }

    fn with(e: Event, f: impl FnOnce(&mut Launch)) -> Event {
        let Event::Launch(mut l) = e else {
            unreachable!()
        };
        f(&mut l);
        Event::Launch(l)
    }

    fn ok(events: &[Event], captured: &[Dispatch]) -> Verdict {
        let v = compare(events, captured);
        assert!(
            v.problems.is_empty(),
            "unexpected problems:\n{}",
            v.report()
        );
        v
    }

    fn fails(events: &[Event], captured: &[Dispatch], needle: &str) {
        let v = compare(events, captured);
        assert!(
            v.problems.iter().any(|p| p.contains(needle)),
            "expected a problem containing {needle:?}, got:\n{}",
            v.report()
        );
    }

    #[test]
    fn matching_launches_and_dispatches_on_two_streams_sharing_one_queue_hold() {
        let events = [
            launch(0, 0, "a", 256, 64),
            launch(2, 0x1000, "b", 128, 128),
            launch(4, 0, "a", 512, 64),
            launch(6, 0x2000, "c", 64, 64),
        ];
        let captured = [
            dispatch(0, 0, "a", 256, 64),
            blit(1, 0),
            dispatch(2, 1, "b", 128, 128),
            dispatch(3, 0, "a", 512, 64),
            dispatch(4, 1, "c", 64, 64),
        ];
        let v = ok(&events, &captured);
        assert_eq!(v.launches, 4);
        assert_eq!(v.user_dispatches, 4);
        assert_eq!(v.blit_total(), 1);
        assert_eq!(v.stream_queues["null stream of device 0"], 0);
        assert_eq!(v.stream_queues["stream 0x1000"], 1);
        assert_eq!(v.stream_queues["stream 0x2000"], 1);
    }

    #[test]
    fn a_launch_that_was_never_captured_fails() {
        let events = [launch(0, 0, "a", 256, 64), launch(2, 0, "b", 256, 64)];
        fails(
            &events,
            &[dispatch(0, 0, "a", 256, 64)],
            "b grid 256x1x1 block 64x1x1 was never captured",
        );
    }

    #[test]
    fn a_dispatch_captured_twice_fails() {
        let events = [launch(0, 0, "a", 256, 64)];
        fails(
            &events,
            &[dispatch(0, 0, "a", 256, 64), dispatch(1, 0, "a", 256, 64)],
            "no launch explains it",
        );
    }

    #[test]
    fn a_user_dispatch_no_launch_explains_fails() {
        fails(&[], &[dispatch(0, 0, "z", 64, 64)], "no launch explains it");
        let mut unknown = dispatch(0, 0, "z", 64, 64);
        unknown.name = None;
        fails(&[], &[unknown], "names no kernel the runtime loaded");
    }

    #[test]
    fn a_different_grid_or_workgroup_fails_and_says_geometry() {
        let events = [launch(0, 0, "a", 256, 64)];
        fails(&events, &[dispatch(0, 0, "a", 512, 64)], "geometry differs");
        fails(
            &events,
            &[dispatch(0, 0, "a", 256, 128)],
            "geometry differs",
        );
    }

    #[test]
    fn launches_of_one_stream_captured_out_of_order_fail() {
        let events = [
            launch(0, 0x1000, "a", 64, 64),
            launch(2, 0x1000, "b", 64, 64),
        ];
        fails(
            &events,
            &[dispatch(0, 3, "b", 64, 64), dispatch(1, 3, "a", 64, 64)],
            "out of order",
        );
    }

    #[test]
    fn racing_launches_on_one_stream_may_be_captured_in_either_order() {
        // Two threads in the same stream at once: the calls' intervals overlap.
        let a = with(launch(0, 0x1000, "a", 64, 64), |l| l.end = 3);
        let b = with(launch(1, 0x1000, "b", 64, 64), |l| l.end = 2);
        ok(
            &[a, b],
            &[dispatch(0, 3, "b", 64, 64), dispatch(1, 3, "a", 64, 64)],
        );
    }

    #[test]
    fn one_stream_split_over_two_queues_fails() {
        let events = [
            launch(0, 0x1000, "a", 64, 64),
            launch(2, 0x1000, "a", 64, 64),
        ];
        fails(
            &events,
            &[dispatch(0, 1, "a", 64, 64), dispatch(1, 2, "a", 64, 64)],
            "that stream's launches are on queue 1",
        );
    }

    #[test]
    fn a_destroyed_stream_handle_reused_by_a_new_stream_may_land_on_another_queue() {
        let events = [
            launch(0, 0x1000, "a", 64, 64),
            Event::StreamDestroy {
                seq: 2,
                stream: 0x1000,
            },
            launch(3, 0x1000, "a", 64, 64),
        ];
        let v = ok(
            &events,
            &[dispatch(0, 1, "a", 64, 64), dispatch(1, 2, "a", 64, 64)],
        );
        assert_eq!(v.stream_queues.len(), 2);
    }

    #[test]
    fn cooperative_launches_are_checked_on_the_cooperative_queue_not_their_streams() {
        // A cooperative entry point, or HIP 7's configured launch with the cooperative attribute.
        let coop = |seq, name| {
            with(launch(seq, 0x1000, name, 128, 64), |l| {
                if seq % 4 == 2 {
                    l.api = "hipLaunchCooperativeKernel".into();
                } else {
                    l.api = "hipLaunchKernelExC".into();
                }
                l.cooperative = true;
            })
        };
        let events = [
            launch(0, 0x1000, "a", 64, 64),
            coop(2, "c"),
            launch(4, 0x1000, "b", 64, 64),
            coop(6, "d"),
        ];
        let captured = [
            dispatch(0, 1, "a", 64, 64),
            dispatch(1, 4, "c", 128, 64),
            dispatch(2, 1, "b", 64, 64),
            dispatch(3, 4, "d", 128, 64),
        ];
        let v = ok(&events, &captured);
        assert_eq!(v.stream_queues["cooperative queue of device 0"], 4);
        assert_eq!(v.stream_queues["stream 0x1000"], 1);
        // Two cooperative launches out of order on the cooperative queue fail.
        let swapped = [
            captured[0].clone(),
            dispatch(1, 4, "d", 128, 64),
            captured[2].clone(),
            dispatch(3, 4, "c", 128, 64),
        ];
        fails(&events, &swapped, "out of order");
    }

    #[test]
    fn a_refused_launch_must_not_be_dispatched_and_a_capturing_one_is_not() {
        let refused = with(launch(0, 0, "a", 64, 64), |l| l.status = 1);
        let v = ok(std::slice::from_ref(&refused), &[]);
        assert_eq!(v.refused, 1);
        fails(
            &[refused],
            &[dispatch(0, 0, "a", 64, 64)],
            "no launch explains it",
        );
        let capturing = with(launch(0, 0x1000, "a", 64, 64), |l| l.capturing = Some(true));
        assert_eq!(ok(&[capturing], &[]).captured_into_graphs, 1);
        let unsure = with(launch(0, 0x1000, "a", 64, 64), |l| l.capturing = None);
        fails(
            &[unsure],
            &[],
            "could not tell whether the stream was capturing",
        );
    }

    #[test]
    fn graph_launches_contribute_their_kernel_nodes_once_each_on_any_queue() {
        let node = |name: &str| Shape {
            name: name.into(),
            grid: [64, 1, 1],
            block: [64, 1, 1],
        };
        let graph = with(launch(0, 0x1000, "unused", 0, 0), |l| {
            l.api = "hipGraphLaunch".into();
            l.name = None;
            l.is_graph = true;
            l.nodes = Some(vec![node("a"), node("b"), node("a")]);
        });
        let captured = [
            dispatch(0, 5, "b", 64, 64),
            dispatch(1, 6, "a", 64, 64),
            dispatch(2, 5, "a", 64, 64),
        ];
        let v = ok(std::slice::from_ref(&graph), &captured);
        assert_eq!((v.graph_launches, v.launches), (1, 3));
        fails(
            std::slice::from_ref(&graph),
            &captured[..2],
            "node a grid 64x1x1 block 64x1x1 was never captured",
        );
        let unknown = with(graph, |l| l.nodes = None);
        fails(&[unknown], &[], "does not know the kernel nodes");
    }

    #[test]
    fn blits_are_counted_by_name_and_must_carry_their_reason() {
        let v = ok(&[], &[blit(0, 0), blit(1, 0)]);
        assert_eq!(v.blits["__amd_rocclr_fillBufferAligned"], 2);
        let mut unflagged = blit(0, 0);
        unflagged.reasons.clear();
        fails(&[], &[unflagged], "without the reason");
    }

    #[test]
    fn a_rejected_dispatch_fails_even_when_a_launch_explains_it() {
        let mut d = dispatch(0, 0, "a", 64, 64);
        d.rejected = true;
        fails(&[launch(0, 0, "a", 64, 64)], &[d], "was rejected");
    }

    #[test]
    fn the_per_thread_default_stream_is_one_stream_per_thread() {
        let t1 = with(launch(0, 0, "a", 64, 64), |l| l.spt = true);
        let t2 = with(launch(2, 2, "a", 64, 64), |l| l.tid = 8);
        let v = ok(
            &[t1, t2],
            &[dispatch(0, 1, "a", 64, 64), dispatch(1, 2, "a", 64, 64)],
        );
        assert_eq!(v.stream_queues["per-thread stream of thread 7"], 1);
        assert_eq!(v.stream_queues["per-thread stream of thread 8"], 2);
    }

    #[test]
    fn the_witness_log_parser_reads_what_the_witness_writes_and_rejects_torn_lines() {
        let text = concat!(
            r#"{"seq":0,"end":1,"tid":5,"api":"hipLaunchKernel","status":0,"name":"_Z1kv","grid":[256,1,1],"block":[64,1,1],"shared":0,"stream":"0x0","spt":false,"device":0,"capturing":false}"#,
            "\n",
            r#"{"seq":2,"event":"hipGraphInstantiate","exec":"0x55","kernels":1,"incomplete":false}"#,
            "\n",
            r#"{"seq":3,"end":4,"tid":5,"api":"hipGraphLaunch","status":0,"name":null,"grid":[0,0,0],"block":[0,0,0],"shared":0,"stream":"0x10","spt":false,"device":0,"capturing":false,"exec":"0x55","nodes":[{"name":"_Z1kv","grid":[64,1,1],"block":[64,1,1]}]}"#,
            "\n",
            r#"{"seq":5,"event":"stream_destroy","stream":"0x10"}"#,
            "\n",
            r#"{"seq":6,"end":7,"tid":5,"api":"hipLaunchKernelExC","status":0,"name":"_Z1kv","grid":[128,1,1],"block":[64,1,1],"shared":0,"stream":"0x10","spt":false,"device":0,"capturing":false,"cooperative":true}"#,
            "\n"
        );
        let events = parse_witness(text).unwrap();
        assert_eq!(events.len(), 5);
        let Event::Launch(first) = &events[0] else {
            panic!()
        };
        let Event::Launch(configured) = &events[4] else {
            panic!()
        };
        assert!(!first.cooperative && configured.cooperative);
        let Event::Launch(l) = &events[2] else {
            panic!()
        };
        assert!(l.is_graph);
        assert_eq!(l.nodes.as_ref().unwrap()[0].name, "_Z1kv");
        assert_eq!(
            events[3],
            Event::StreamDestroy {
                seq: 5,
                stream: 0x10
            }
        );
        let torn = &text[..text.len() - 20];
        assert!(
            parse_witness(torn)
                .unwrap_err()
                .contains("witness log line 5")
        );
    }
}
