//! The processor per packet with the real capture enabled: the sink is the
//! capture's own per-queue producer (`QueueProducer::push`), and the capture's
//! writer thread encodes and writes the file in the background, as in the shim.
//! Compared in the same run with capture off (a sink that only counts), so the
//! ratio is what capture costs on the doorbell path.
//!
//! Two capture-on figures:
//! - `capture_on`: the doorbell-path cost. Between timed batches the bench
//!   waits (untimed) for the writer to catch up, as it does between real
//!   launches, so the timed part is the processor plus ring pushes.
//! - `capture_on_sustained`: no pause, so the writer thread (reading the live
//!   ring, delta-encoding PacketBatch frames, one `pwrite` per pass) is the
//!   bottleneck and producers feel back-pressure. This is the capture's
//!   maximum sustained rate on this machine.
//!
//! After the criterion groups it prints, from the same run (issue 14's
//! figures, `docs/PERFORMANCE.md`; nothing is asserted):
//! - the processor's median ns per packet over 256-packet batches with
//!   capture off, on, and on with a 256-byte kernarg block per dispatch (as
//!   the shim's sink hands it with argument capture on), interleaved batch
//!   by batch so a noisy neighbour hits all three alike, and the ratios;
//! - the writer's sustained rate: one producer thread pushing 2,000,000
//!   records of the launch benchmark's pattern (one kernel, one grid, one
//!   queue, the kernarg address advancing, the same kernarg block each time)
//!   as fast as it can; records per second of the writer thread's own CPU
//!   time (one core, from `/proc/self/task/*/schedstat`) and of wall time;
//! - bytes per dispatch in the frame stream for that launch loop (its
//!   KernargBlock frames included) and for the processor batch above;
//! - RSS growth over 1,000,000 such dispatches (the ring's pages included);
//! - the hand-off: what waking a parked thread costs the thread that wakes
//!   it (`handoff_wake_ns`), beside what capture's push adds to a packet. It
//!   is the price of moving a record's work (the kernarg copy, the
//!   completion) to a writer that sleeps between launches, once per launch.
//!
//! `SOFTGPU_BENCH_WRITER_PROFILE=N` and `SOFTGPU_BENCH_PROCESSOR_PROFILE=N`
//! run one part alone, for `valgrind --tool=callgrind` (see `main`);
//! `SOFTGPU_BENCH_HANDOFF=N` prints the hand-off figure alone, over `N` wakes.
//!
//! Records are stamped as the shim stamps them (`Stamp::for_this_machine`:
//! the TSC where the kernel's clock is the TSC), so the capture-on figures
//! include the stamp and the writer's conversion of it.
//!
//! Run: `cargo bench --bench capture_path`.

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{Criterion, Throughput, criterion_group};

use softgpu_hsa::abi::{HsaSignal, KernelDispatchPacket};
use softgpu_hsa::aql::mock::{MockQueue, MockSignals, valid_dispatch};
use softgpu_hsa::aql::parse::encode_kernel_dispatch;
use softgpu_hsa::aql::{PacketRecord, Processor, QueueState, ReasonSet, RecordSink, Status};
use softgpu_hsa::capture::clock::{Pair, Stamp};
use softgpu_hsa::capture::{
    AgentDesc, AgentKind, CaptureHeader, CaptureWriter, KernargClass, KernargSubmit, QueueProducer,
    WriterOptions,
};

const BATCH: u64 = 256;

struct CaptureSink {
    producer: QueueProducer,
    /// The kernarg block each dispatch hands the writer (as the shim's sink
    /// does with argument capture on), or none.
    kernarg: Option<[u8; LAUNCH_KERNARG_BYTES]>,
}

impl RecordSink for CaptureSink {
    #[inline]
    fn record(&mut self, rec: &PacketRecord) {
        match &self.kernarg {
            Some(b) => self.producer.push_with_kernarg(
                rec,
                KernargSubmit::Bytes {
                    bytes: b,
                    segment_size: LAUNCH_KERNARG_BYTES as u64,
                },
            ),
            None => self.producer.push(rec),
        }
    }
    /// The stamp the shim's sink takes: the capture's own (the TSC where
    /// the kernel's clock is the TSC, converted by the writer).
    #[inline]
    fn now_ns(&self) -> u64 {
        self.producer.now()
    }
    #[inline]
    fn thread_id(&self) -> u32 {
        1
    }
}

struct CountSink {
    n: u64,
    epoch: Instant,
}

impl RecordSink for CountSink {
    #[inline]
    fn record(&mut self, _rec: &PacketRecord) {
        self.n += 1;
    }
    #[inline]
    fn now_ns(&self) -> u64 {
        self.epoch.elapsed().as_nanos() as u64
    }
    #[inline]
    fn thread_id(&self) -> u32 {
        1
    }
}

fn run<K: RecordSink>(c: &mut Criterion, name: &str, mut sink: K, between: impl Fn()) {
    let p = Processor::default();
    let signals = MockSignals::new(&[0]);
    // No completion signal: the common HIP launch.
    let packets: Vec<[u8; 64]> = (0..BATCH)
        .map(|i| encode_kernel_dispatch(&valid_dispatch((i + 1) * 64, 0)))
        .collect();
    let mut g = c.benchmark_group("processor_with_capture");
    g.throughput(Throughput::Elements(BATCH));
    let q = MockQueue::new(1024);
    let mut state = QueueState::default();
    g.bench_function(name, |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                for bytes in &packets {
                    q.submit(bytes);
                }
                let t = Instant::now();
                black_box(p.drain(&mut state, 1, &q, &signals, &mut sink));
                total += t.elapsed();
                between();
            }
            total
        })
    });
    g.finish();
}

fn bench(c: &mut Criterion) {
    let dir = std::env::temp_dir().join(format!("softgpu-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("bench.sgcap");
    let header = CaptureHeader {
        pid: std::process::id(),
        start_unix_ns: 0,
        mode: "bench".into(),
        agents: vec![AgentDesc {
            index: 1,
            kind: AgentKind::Gpu,
            name: "gfx90a".into(),
            target: Some("gfx90a".into()),
        }],
    };
    let writer = bench_writer(&path, header, Box::new(|_| KernargClass::ForeignOpaque)).unwrap();
    let producer = writer.register_queue(1, 1, 1024, 0);
    let sustained = writer.register_queue(2, 1, 1024, 0);
    run(
        c,
        "capture_off",
        CountSink {
            n: 0,
            epoch: Instant::now(),
        },
        || {},
    );
    run(
        c,
        "capture_on",
        CaptureSink {
            producer,
            kernarg: None,
        },
        || writer.drain(),
    );
    run(
        c,
        "capture_on_sustained",
        CaptureSink {
            producer: sustained,
            kernarg: None,
        },
        || {},
    );
    // The writer's own count: the sustained group alone can write more than
    // the 1 GiB a capture reader accepts on a fast machine.
    let records = writer.finish(0, 0).map_or(0, |s| s.counts.records);
    let batch_bytes = stream_bytes(&path) as f64 / records.max(1) as f64;
    figures(&dir, batch_bytes);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Bytes of a capture file after its Ring frame (the frame stream): the
/// file's length less the preamble and its first two frames (Header, Ring),
/// whose lengths are read from their frame heads, not the whole file.
fn stream_bytes(path: &std::path::Path) -> u64 {
    use std::os::unix::fs::FileExt;
    let f = std::fs::File::open(path).unwrap();
    let mut pos = 16u64;
    for _ in 0..2 {
        let mut head = [0u8; 6];
        f.read_exact_at(&mut head, pos).unwrap();
        let len = u32::from_le_bytes(head[2..6].try_into().unwrap()) as u64;
        pos += 6 + len + 4;
    }
    f.metadata().unwrap().len() - pos
}

fn rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

/// CPU time (ns) the capture's writer thread has run so far, from
/// `/proc/self/task/*/schedstat` (0 when the kernel does not say).
fn writer_cpu_ns() -> u64 {
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else {
        return 0;
    };
    let mut total = 0;
    for t in tasks.flatten() {
        let comm = std::fs::read_to_string(t.path().join("comm")).unwrap_or_default();
        if comm.trim() == "softgpu-capture" {
            let stat = std::fs::read_to_string(t.path().join("schedstat")).unwrap_or_default();
            total += stat
                .split_whitespace()
                .next()
                .and_then(|v| v.parse::<u64>().ok())
                .unwrap_or(0);
        }
    }
    total
}

/// The launch benchmark's kernel (`scripts/bench-launch`: `empty_kernel<<<1,
/// 64>>>`) as the shim sees it: one kernel object, one grid, no completion
/// signal, the kernarg address moving through HIP's pool, and a 256-byte
/// kernarg segment (code object v5's hidden arguments) with the same contents
/// every launch.
const LAUNCH_KERNARG_BYTES: usize = 256;

fn launch_kernarg_block() -> [u8; LAUNCH_KERNARG_BYTES] {
    let mut b = [0u8; LAUNCH_KERNARG_BYTES];
    // hidden_block_count_{x,y,z}, hidden_group_size_{x,y,z}, hidden_remainder..
    b[0..4].copy_from_slice(&1u32.to_le_bytes());
    b[4..8].copy_from_slice(&1u32.to_le_bytes());
    b[8..12].copy_from_slice(&1u32.to_le_bytes());
    b[12..14].copy_from_slice(&64u16.to_le_bytes());
    b[14..16].copy_from_slice(&1u16.to_le_bytes());
    b[16..18].copy_from_slice(&1u16.to_le_bytes());
    b[64..72].copy_from_slice(&0x7f00_dead_0000u64.to_le_bytes());
    b
}

/// A capture writer stamped as the shim's is (`Stamp::for_this_machine`), so
/// the figures include the TSC stamp and its conversion where the shim uses
/// them.
fn bench_writer(
    path: &std::path::Path,
    header: CaptureHeader,
    classify: Box<dyn FnMut(u64) -> KernargClass + Send>,
) -> std::io::Result<std::sync::Arc<CaptureWriter>> {
    let options = WriterOptions {
        stamp: Stamp::for_this_machine(),
        ..Default::default()
    };
    CaptureWriter::create_with(path, header, classify, options)
}

/// Stamps for synthetic records: the first, and stamps per ns (measured over
/// 20 ms against CLOCK_MONOTONIC for TSC stamps).
fn stamps() -> (u64, f64) {
    static S: std::sync::OnceLock<(u64, f64)> = std::sync::OnceLock::new();
    *S.get_or_init(|| match Stamp::for_this_machine() {
        Stamp::Ns => (Stamp::Ns.now(), 1.0),
        Stamp::Tsc => {
            let a = Pair::now();
            std::thread::sleep(Duration::from_millis(20));
            let b = Pair::now();
            (b.tsc, (b.tsc - a.tsc) as f64 / (b.ns - a.ns) as f64)
        }
    })
}

/// One record of that launch loop (launches about 1.7 us apart).
fn launch_loop_record(i: u64) -> PacketRecord {
    let mut d: KernelDispatchPacket = valid_dispatch(0x7f00_1234_5000, 0);
    d.grid_size_x = 64;
    d.workgroup_size_x = 64;
    d.kernarg_address = 0x7f00_8000_0000 + (i % 4096) * LAUNCH_KERNARG_BYTES as u64;
    d.completion_signal = HsaSignal { handle: 0 };
    let (t0, per_ns) = stamps();
    let t = t0 + (i as f64 * 1700.0 * per_ns) as u64;
    PacketRecord {
        queue_id: 1,
        packet_index: i,
        raw: encode_kernel_dispatch(&d),
        status: Status::Validated,
        reasons: ReasonSet::EMPTY,
        observed_ns: t,
        done_ns: t + (40.0 * per_ns) as u64,
        thread: 4242,
    }
}

fn bench_header() -> CaptureHeader {
    CaptureHeader {
        pid: std::process::id(),
        start_unix_ns: 0,
        mode: "bench".into(),
        agents: vec![],
    }
}

/// What one writer run measured.
struct WriterRun {
    n: u64,
    wall: Duration,
    producer: Duration,
    writer_cpu_ns: u64,
    waits: u64,
    stream_bytes: u64,
}

/// One producer pushes `n` launch-loop records, with their kernarg blocks,
/// as fast as it can, until the writer has encoded them all.
fn writer_run(path: &std::path::Path, n: u64) -> WriterRun {
    let w = bench_writer(path, bench_header(), Box::new(|_| KernargClass::Softgpu)).unwrap();
    let block = launch_kernarg_block();
    let recs: Vec<PacketRecord> = (0..n).map(launch_loop_record).collect();
    let mut p = w.register_queue(1, 0, 1024, 0);
    w.drain();
    let cpu0 = writer_cpu_ns();
    let t = Instant::now();
    for r in &recs {
        p.push_with_kernarg(
            r,
            KernargSubmit::Bytes {
                bytes: &block,
                segment_size: LAUNCH_KERNARG_BYTES as u64,
            },
        );
    }
    let producer = t.elapsed();
    w.drain();
    let wall = t.elapsed();
    let writer_cpu_ns = writer_cpu_ns().saturating_sub(cpu0);
    let waits = w.waits();
    drop(p);
    let _ = w.finish(0, 0);
    drop(w);
    WriterRun {
        n,
        wall,
        producer,
        writer_cpu_ns,
        waits,
        stream_bytes: stream_bytes(path),
    }
}

/// Processor ns per packet over 256-packet batches, capture off and on,
/// interleaved batch by batch (so a noisy neighbour hits both alike): the
/// medians, as `(off, on, on_with_kernargs)`.
fn processor_medians(writer: &CaptureWriter, rounds: usize) -> (f64, f64, f64) {
    let p = Processor::default();
    let signals = MockSignals::new(&[0]);
    let packets: Vec<[u8; 64]> = (0..BATCH)
        .map(|i| encode_kernel_dispatch(&valid_dispatch((i + 1) * 64, 0)))
        .collect();
    let mut off = CountSink {
        n: 0,
        epoch: Instant::now(),
    };
    let mut on = CaptureSink {
        producer: writer.register_queue(10, 1, 1024, 0),
        kernarg: None,
    };
    let block = launch_kernarg_block();
    let mut on_k = CaptureSink {
        producer: writer.register_queue(11, 1, 1024, 0),
        kernarg: Some(block),
    };
    let queues = [
        MockQueue::new(1024),
        MockQueue::new(1024),
        MockQueue::new(1024),
    ];
    let mut states = [
        QueueState::default(),
        QueueState::default(),
        QueueState::default(),
    ];
    let mut samples = [Vec::new(), Vec::new(), Vec::new()];
    for round in 0..rounds {
        for k in 0..3 {
            for bytes in &packets {
                queues[k].submit(bytes);
            }
            let t = Instant::now();
            match k {
                0 => black_box(p.drain(&mut states[0], 10, &queues[0], &signals, &mut off)),
                1 => black_box(p.drain(&mut states[1], 10, &queues[1], &signals, &mut on)),
                _ => black_box(p.drain(&mut states[2], 11, &queues[2], &signals, &mut on_k)),
            };
            let e = t.elapsed();
            // Untimed: the writer catches up, as between real launches.
            writer.drain();
            if round >= rounds / 10 {
                samples[k].push(e.as_nanos() as f64 / BATCH as f64);
            }
        }
    }
    let [a, b, c] = &mut samples;
    (median(a), median(b), median(c))
}

/// The median of `v` (sorted in place; `v` is not empty).
fn median(v: &mut [f64]) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

/// The launching thread's cost of waking a parked thread: what handing each
/// record (its kernarg copy, its completion) to the writer thread would add to
/// every launch, were the writer asleep when the record came, as it is
/// between launches of a program that launches less often than the writer
/// polls. Thread B parks in a loop; before each sample thread A waits until B
/// has said it is about to park, spins 50 us so that B is in the kernel's wait
/// (not between its flag and its wait), then times `unpark` alone. The median
/// of `rounds` samples, minus the median of as many empty timings.
fn handoff_wake_ns(rounds: usize) -> f64 {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    let parked = Arc::new(AtomicBool::new(false));
    let woke = Arc::new(AtomicUsize::new(0));
    let stop = Arc::new(AtomicBool::new(false));
    let b = {
        let (parked, woke, stop) = (parked.clone(), woke.clone(), stop.clone());
        std::thread::spawn(move || {
            while !stop.load(Ordering::Acquire) {
                parked.store(true, Ordering::Release);
                std::thread::park();
                parked.store(false, Ordering::Release);
                woke.fetch_add(1, Ordering::Release);
            }
        })
    };
    let spin = |d: Duration| {
        let t = Instant::now();
        while t.elapsed() < d {
            std::hint::spin_loop();
        }
    };
    let mut wake = Vec::with_capacity(rounds);
    let mut empty = Vec::with_capacity(rounds);
    for _ in 0..rounds {
        let seen = woke.load(Ordering::Acquire);
        while !parked.load(Ordering::Acquire) {
            std::hint::spin_loop();
        }
        spin(Duration::from_micros(50));
        let t = Instant::now();
        b.thread().unpark();
        wake.push(t.elapsed().as_nanos() as f64);
        let t = Instant::now();
        empty.push(black_box(t.elapsed()).as_nanos() as f64);
        // B has run (and is about to park again) before the next sample.
        while woke.load(Ordering::Acquire) == seen {
            std::hint::spin_loop();
        }
    }
    stop.store(true, Ordering::Release);
    b.thread().unpark();
    b.join().unwrap();
    (median(&mut wake) - median(&mut empty)).max(0.0)
}

fn figures(dir: &std::path::Path, batch_bytes: f64) {
    println!();
    println!("issue 14 figures (one run; nothing asserted):");
    // The processor, interleaved medians.
    let path = dir.join("processor.sgcap");
    let w = bench_writer(&path, bench_header(), Box::new(|_| KernargClass::Softgpu)).unwrap();
    let rounds = 4000;
    let (off, on, on_k) = processor_medians(&w, rounds);
    let _ = w.finish(0, 0);
    drop(w);
    println!(
        "processor, 256-packet batches, median of {} interleaved batches each: capture off \
         {off:.1} ns/packet, capture on {on:.1} ns/packet ({:.2}x off), capture on with a \
         256-byte kernarg block per dispatch {on_k:.1} ns/packet ({:.2}x off)",
        rounds - rounds / 10,
        on / off,
        on_k / off
    );
    // What a hand-off per record would cost the launching thread.
    let wakes = 2000;
    let wake = handoff_wake_ns(wakes);
    println!(
        "hand-off: waking a parked thread once per record would cost the waking thread \
         {wake:.0} ns (median of {wakes} wakes, the clock's own cost taken off), against the \
         {:.1} ns capture's push adds to a packet in the processor line above (on minus off)",
        on - off
    );
    // Writer sustained rate.
    let path = dir.join("sustained.sgcap");
    let n = 2_000_000u64;
    let r = writer_run(&path, n);
    println!(
        "capture writer, sustained: {n} launch-loop records with kernarg blocks, writer thread \
         CPU {:.3} s = {:.2} M records/s on one core; wall {:.3} s = {:.2} M records/s (the \
         producer alone was done after {:.3} s; it waited {} times)",
        r.writer_cpu_ns as f64 / 1e9,
        r.n as f64 / (r.writer_cpu_ns.max(1) as f64 / 1e9) / 1e6,
        r.wall.as_secs_f64(),
        r.n as f64 / r.wall.as_secs_f64() / 1e6,
        r.producer.as_secs_f64(),
        r.waits
    );
    println!(
        "capture size: {:.2} bytes per dispatch for the launch loop (kernarg blocks \
         included), {batch_bytes:.1} for the processor batch (64 kernels, varying grids); \
         1.x wrote 138",
        r.stream_bytes as f64 / r.n as f64
    );
    // RSS growth over 1,000,000 dispatches.
    let path = dir.join("rss.sgcap");
    let block = launch_kernarg_block();
    let before = rss_kib();
    let w = bench_writer(&path, bench_header(), Box::new(|_| KernargClass::Softgpu)).unwrap();
    let mut p = w.register_queue(1, 0, 1024, 0);
    for i in 0..1_000_000u64 {
        p.push_with_kernarg(
            &launch_loop_record(i),
            KernargSubmit::Bytes {
                bytes: &block,
                segment_size: LAUNCH_KERNARG_BYTES as u64,
            },
        );
    }
    w.drain();
    let after = rss_kib();
    drop(p);
    let _ = w.finish(0, 0);
    println!(
        "RSS growth over 1,000,000 dispatches with kernarg blocks: {:.1} MiB (the ring's {} \
         KiB and one {} KiB kernarg arena included)",
        after.saturating_sub(before) as f64 / 1024.0,
        softgpu_hsa::capture::DEFAULT_RING_CAPACITY * 128 / 1024,
        softgpu_hsa::capture::kernarg::ARENA_BYTES / 1024
    );
}

criterion_group!(benches, bench);

/// `SOFTGPU_BENCH_WRITER_PROFILE=N` runs only the writer for `N` launch-loop
/// records, `SOFTGPU_BENCH_PROCESSOR_PROFILE=N` only `N` rounds of the
/// interleaved processor batches (for `valgrind --tool=callgrind`, see
/// `docs/PERFORMANCE.md`).
fn main() {
    if let Some(n) = std::env::var("SOFTGPU_BENCH_PROCESSOR_PROFILE")
        .ok()
        .and_then(|v| v.parse::<usize>().ok())
    {
        let dir = std::env::temp_dir().join(format!("softgpu-profile-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let w = bench_writer(
            &dir.join("profile.sgcap"),
            bench_header(),
            Box::new(|_| KernargClass::Softgpu),
        )
        .unwrap();
        let (off, on, on_k) = processor_medians(&w, n.max(10));
        println!("{off:.1} {on:.1} {on_k:.1} ns/packet");
        let _ = w.finish(0, 0);
        drop(w);
        let _ = std::fs::remove_dir_all(&dir);
        return;
    }
    if let Some(n) = std::env::var("SOFTGPU_BENCH_WRITER_PROFILE")
        .ok()
        .and_then(|v| v.parse::<u64>().ok())
    {
        let dir = std::env::temp_dir().join(format!("softgpu-profile-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let r = writer_run(&dir.join("profile.sgcap"), n);
        println!(
            "{} records, {:.2} stream bytes per record",
            r.n,
            r.stream_bytes as f64 / r.n as f64
        );
        let _ = std::fs::remove_dir_all(&dir);
        return;
    }
    if let Some(n) = std::env::var("SOFTGPU_BENCH_HANDOFF")
        .ok()
        .and_then(|v| v.parse::<usize>().ok())
    {
        println!(
            "{:.0} ns to wake a parked thread (median of {})",
            handoff_wake_ns(n.max(10)),
            n.max(10)
        );
        return;
    }
    benches();
    Criterion::default().configure_from_args().final_summary();
}
