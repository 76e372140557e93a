//! Which HIP versions accept each registry target as a device, measured, and compared with the
//! table recorded in the descriptors (`hip` in `src/isa/targets.rs`, shown by `softgpu
//! targets`). The test fails when reality differs from the table, listing every difference.
//!
//! For each HIP version (5.2.3 on the host; 6.4.3 in the Debian sid chroot of
//! `scripts/sid-chroot` and 7.2.4 in the ROCm 7.2.4 chroot of `scripts/sid-chroot --rocm7`,
//! each with the host-built shim copied in, as in `tests/integration_hip.rs`) and each target of
//! this build, `integration/isa/devices.cpp` runs under the shim with `SOFTGPU_TARGET=<id>`:
//!
//! 1. Device: the program built without any kernel (`-DSG_NO_KERNEL`: HIP 5.2 aborts a program
//!    whose kernels have no code for a device, which would hide the answer) counts devices and
//!    reads their properties. The target is accepted when HIP counts exactly one device whose
//!    `gcnArchName` is the target's GPU target; then its name, warp size and LDS must be the
//!    descriptor's.
//! 2. Kernels (only for an accepted device): the program built by that HIP's hipcc with
//!    `--offload-arch=<id>` launches an empty kernel; the launch and the synchronisation must
//!    succeed and the capture must hold one validated dispatch on the target. When hipcc cannot
//!    build for the target, the result is `DeviceOnly`.
//!
//! A second test per HIP version lists two targets in `SOFTGPU_TARGET` (`gfx90a,gfx942`) and
//! checks that HIP sees the targets that version accepts, in order, each launching its own
//! kernel.
//!
//! The sid chroot's LLVM 21 (HIP 6.4.3's compiler) also checks two LLVM facts of every target it
//! knows: the ELF machine value of an object it assembles, and the LDS limit (a kernel with
//! exactly the descriptor's LDS per workgroup compiles; 1 KiB more is refused).
//!
//! A missing hipcc or chroot fails the test with the command that provides it, never skips.
//! Test names carry the HIP version (`hip_7_2_...`, `..._on_hip_7_2`).

use std::collections::BTreeMap;
use std::fs::File;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::Duration;

use serde_json::Value;
use softgpu_hsa::isa::{self, HipSupport, TargetDescriptor};

mod common;
use common::{Hip, Kill, Place, repo, shim, wait_within};

const RUN_TIMEOUT: Duration = Duration::from_secs(60);
const SETUP_HINT: &str = "run ./scripts/setup (installs hipcc and libamdhip64-dev, HIP 5.2.3)";
const PROBE: &str = "devices.cpp";

/// What the registry records for `hip` and `d`.
fn recorded(hip: Hip, d: &TargetDescriptor) -> HipSupport {
    match hip {
        Hip::V5_2 => d.hip.hip_5_2,
        Hip::V6_4 => d.hip.hip_6_4,
        Hip::V7_2 => d.hip.hip_7_2,
    }
}

/// This test process's work directory for `hip`, with the probe source and the shim in it.
fn work(hip: Hip) -> &'static Place {
    static CELLS: [OnceLock<Place>; Hip::ALL.len()] = [const { OnceLock::new() }; 3];
    let i = Hip::ALL.iter().position(|h| *h == hip).unwrap();
    CELLS[i].get_or_init(|| {
        let place = match hip.chroot() {
            None => {
                assert!(
                    Path::new("/usr/bin/hipcc").exists(),
                    "hipcc is not installed on the host: {SETUP_HINT}"
                );
                Place::host(PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("isa_hip_acceptance"))
            }
            Some(c) => {
                let ready = c.root.join(".softgpu-ready");
                let hint = format!("run {} (scripts/test does it)", c.build);
                let stamp = std::fs::read_to_string(&ready).unwrap_or_else(|_| {
                    panic!(
                        "the chroot with HIP {} is not ready ({} is missing): {hint}",
                        hip.release(),
                        ready.display()
                    )
                });
                assert!(
                    stamp.contains(c.hip_package),
                    "the chroot at {} holds `{}`, not HIP {}: {hint}",
                    c.root.display(),
                    stamp.trim(),
                    hip.version()
                );
                common::process_dir_in_chroot(&c.root, "isa_hip_acceptance")
            }
        };
        let _ = std::fs::remove_dir_all(&place.host);
        std::fs::create_dir_all(&place.host).unwrap();
        std::fs::copy(
            repo().join("integration/isa").join(PROBE),
            place.host.join(PROBE),
        )
        .unwrap();
        std::fs::copy(shim(), place.host.join("libsoftgpu_hsa.so")).unwrap();
        place
    })
}

/// `argv` run as the program sees it, with exactly `env`, in `cwd`.
fn command(hip: Hip, cwd: &Place, env: &[(&str, String)], argv: &[String]) -> Command {
    let env: Vec<(&str, String)> = [
        ("PATH", "/usr/local/bin:/usr/bin:/bin".to_string()),
        ("HOME", "/root".to_string()),
    ]
    .into_iter()
    .chain(env.iter().cloned())
    .collect();
    match hip.chroot() {
        None => {
            let mut cmd = Command::new(&argv[0]);
            cmd.args(&argv[1..])
                .env_clear()
                .envs(env.iter().map(|(k, v)| (k, v)))
                .current_dir(&cwd.host);
            cmd
        }
        Some(c) => {
            let mut cmd = c.run_command();
            cmd.args(["/usr/bin/env", "-i", "-C", &cwd.seen])
                .args(env.iter().map(|(k, v)| format!("{k}={v}")))
                .args(argv);
            cmd
        }
    }
}

/// Builds the probe as `name` with extra hipcc arguments; Err(hipcc's output) when it fails.
fn hipcc(hip: Hip, name: &str, args: &[&str]) -> Result<Place, String> {
    let w = work(hip);
    let exe = w.join(name);
    let mut argv = vec!["hipcc".to_string(), "-O1".to_string()];
    argv.extend(args.iter().map(|s| s.to_string()));
    argv.extend([w.join(PROBE).seen, "-o".to_string(), exe.seen.clone()]);
    let out = command(hip, w, &[], &argv)
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("cannot run hipcc ({}): {e}", hip.label()));
    if out.status.success() {
        Ok(exe)
    } else {
        Err(format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ))
    }
}

/// The kernel-free probe (built once per HIP version).
fn device_probe(hip: Hip) -> &'static Place {
    static CELLS: [OnceLock<Place>; Hip::ALL.len()] = [const { OnceLock::new() }; 3];
    let i = Hip::ALL.iter().position(|h| *h == hip).unwrap();
    CELLS[i].get_or_init(|| {
        hipcc(
            hip,
            "devices-nokernel",
            &["--offload-arch=gfx90a", "-DSG_NO_KERNEL"],
        )
        .unwrap_or_else(|e| panic!("{} hipcc cannot build the probe: {e}", hip.label()))
    })
}

/// One run of a probe under the shim.
struct Run {
    what: String,
    facts: BTreeMap<String, String>,
    stdout: String,
    stderr: String,
    exited_ok: bool,
    capture: PathBuf,
}

impl Run {
    fn fact(&self, k: &str) -> &str {
        self.facts.get(k).map(String::as_str).unwrap_or("")
    }
    fn context(&self) -> String {
        format!(
            "--- {} stdout ---\n{}--- stderr ---\n{}",
            self.what, self.stdout, self.stderr
        )
    }
    /// `softgpu inspect --format jsonl` of the capture.
    fn records(&self) -> Vec<Value> {
        let out = Command::new(env!("CARGO_BIN_EXE_softgpu"))
            .args(["inspect", "--format", "jsonl"])
            .arg(&self.capture)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "inspect {}: {}\n{}",
            self.capture.display(),
            String::from_utf8_lossy(&out.stderr),
            self.context()
        );
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }
}

fn run(hip: Hip, exe: &Place, targets: &str, args: &[&str], tag: &str) -> Run {
    let w = work(hip);
    let dir = w.join(&format!("run-{tag}"));
    let _ = std::fs::remove_dir_all(&dir.host);
    std::fs::create_dir_all(&dir.host).unwrap();
    let env = [
        ("LD_PRELOAD", w.join("libsoftgpu_hsa.so").seen),
        ("SOFTGPU_TARGET", targets.to_string()),
        ("SOFTGPU_MODE", "virtual".to_string()),
        ("SOFTGPU_CAPTURE", dir.join("capture.sgcap").seen),
        ("SOFTGPU_SUMMARY", "0".to_string()),
        ("SOFTGPU_LOG", "warn".to_string()),
    ];
    let mut argv = vec![exe.seen.clone()];
    argv.extend(args.iter().map(|s| s.to_string()));
    let what = format!(
        "{} {} with SOFTGPU_TARGET={targets} ({})",
        exe.host.file_name().unwrap().to_string_lossy(),
        args.join(" "),
        hip.label()
    );
    let stdout_path = dir.host.join("stdout.txt");
    let stderr_path = dir.host.join("stderr.txt");
    let mut child = command(hip, &dir, &env, &argv)
        .process_group(0)
        .stdin(Stdio::null())
        .stdout(File::create(&stdout_path).unwrap())
        .stderr(File::create(&stderr_path).unwrap())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {what}: {e}"));
    let status = wait_within(&mut child, RUN_TIMEOUT, Kill::Group);
    let stdout = std::fs::read_to_string(&stdout_path).unwrap_or_default();
    let stderr = std::fs::read_to_string(&stderr_path).unwrap_or_default();
    let facts = stdout
        .lines()
        .filter_map(|l| l.strip_prefix("sg: "))
        .filter_map(|l| l.split_once('='))
        .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
        .collect();
    let run = Run {
        what,
        facts,
        stdout,
        stderr,
        exited_ok: status.is_some_and(|s| s.success()),
        capture: dir.host.join("capture.sgcap"),
    };
    assert!(
        run.exited_ok && run.fact("done") == "1",
        "the probe did not finish (status {status:?})\n{}",
        run.context()
    );
    assert_eq!(run.fact("hip_version"), hip.version(), "{}", run.context());
    run
}

/// Device `i` of a run is `d`, with the descriptor's properties.
fn check_device(run: &Run, i: usize, d: &TargetDescriptor) -> Result<(), String> {
    let f = |k: &str| run.fact(&format!("dev{i}.{k}")).to_string();
    let mut problems = Vec::new();
    if f("props_status") != "0" {
        problems.push(format!("hipGetDeviceProperties = {}", f("props_status")));
    }
    let expect = [
        ("gcn_arch_name", d.gpu_target.to_string()),
        ("name", d.product_name.to_string()),
        ("warp_size", d.facts.wavefront_size.value.to_string()),
        (
            "shared_mem_per_block",
            d.facts.lds_bytes_per_workgroup.value.to_string(),
        ),
    ];
    for (k, want) in expect {
        if f(k) != want {
            problems.push(format!("{k} = {:?}, expected {want:?}", f(k)));
        }
    }
    // HIP reports work-group processors (two CUs each) on wave32 (RDNA) devices.
    let cus = d.facts.compute_units.value;
    let shown: u64 = f("cus").parse().unwrap_or(0);
    if shown != cus && !(d.facts.wavefront_size.value == 32 && shown * 2 == cus) {
        problems.push(format!("multiProcessorCount = {shown} for {cus} CUs"));
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(format!("device {i} ({}): {}", d.id, problems.join("; ")))
    }
}

/// The kernel dispatches of a capture, as (target, kernel name, status).
fn dispatches(run: &Run) -> Vec<(String, String, String)> {
    run.records()
        .into_iter()
        .filter(|r| r["type"] == "kernel_dispatch")
        .map(|r| {
            (
                r["target"].as_str().unwrap_or("").to_string(),
                r["kernel_name"].as_str().unwrap_or("").to_string(),
                r["status"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect()
}

/// What `hip` does with `d`, and why.
fn measure(hip: Hip, d: &TargetDescriptor) -> (HipSupport, String) {
    let probe = run(
        hip,
        device_probe(hip),
        d.id,
        &[],
        &format!("{}-device", d.id),
    );
    let count = probe.fact("device_count");
    if count == "0" {
        return (
            HipSupport::NoDevice,
            format!(
                "hipGetDeviceCount status {}, 0 devices",
                probe.fact("device_count_status")
            ),
        );
    }
    assert_eq!(count, "1", "{}", probe.context());
    if let Err(e) = check_device(&probe, 0, d) {
        panic!(
            "{} accepted {} with wrong properties: {e}\n{}",
            hip.label(),
            d.id,
            probe.context()
        );
    }
    let exe = match hipcc(
        hip,
        &format!("devices-{}", d.id),
        &[&format!("--offload-arch={}", d.id)],
    ) {
        Ok(exe) => exe,
        Err(e) => {
            let first = e.lines().find(|l| l.contains("error")).unwrap_or("").trim();
            return (
                HipSupport::DeviceOnly,
                format!("device accepted; hipcc cannot build for it: {first}"),
            );
        }
    };
    let launched = run(hip, &exe, d.id, &["launch"], &format!("{}-launch", d.id));
    let (launch, sync) = (
        launched.fact("dev0.launch_status"),
        launched.fact("dev0.sync_status"),
    );
    if launch != "0" || sync != "0" {
        return (
            HipSupport::DeviceOnly,
            format!("device accepted; a kernel built for it: launch {launch}, sync {sync}"),
        );
    }
    let got = dispatches(&launched);
    let want = vec![(
        d.id.to_string(),
        "sg_empty(int*)".to_string(),
        "validated".to_string(),
    )];
    assert_eq!(got, want, "{}", launched.context());
    (HipSupport::Kernels, "kernel launched and captured".into())
}

fn measure_all(hip: Hip) {
    let mut table = Vec::new();
    let mut differences = Vec::new();
    for d in isa::DESCRIPTORS {
        let (got, why) = measure(hip, d);
        let recorded = recorded(hip, d);
        table.push(format!("  {:<8} {:<12} {why}", d.id, got.as_str()));
        if got != recorded {
            differences.push(format!(
                "{}: measured {}, recorded {} ({why})",
                d.id,
                got.as_str(),
                recorded.as_str()
            ));
        }
    }
    eprintln!("{} measured:\n{}", hip.label(), table.join("\n"));
    assert!(
        differences.is_empty(),
        "{} does not do what src/isa/targets.rs records; update the `hip` entries (and the \
         README's table) to what was measured:\n{}",
        hip.label(),
        differences.join("\n")
    );
}

#[test]
fn hip_5_2_accepts_exactly_the_targets_the_registry_records() {
    measure_all(Hip::V5_2);
}

#[test]
fn hip_6_4_accepts_exactly_the_targets_the_registry_records() {
    measure_all(Hip::V6_4);
}

#[test]
fn hip_7_2_accepts_exactly_the_targets_the_registry_records() {
    measure_all(Hip::V7_2);
}

/// `SOFTGPU_TARGET=gfx90a,gfx942`: one agent each; HIP lists those it accepts, in order, and
/// each launches the kernel built for it.
#[cfg(all(feature = "gfx9", feature = "gfx94"))]
fn two_targets(hip: Hip) {
    let listed = ["gfx90a", "gfx942"];
    let ds: Vec<&TargetDescriptor> = listed.iter().map(|t| isa::find(*t).unwrap()).collect();
    let accepted: Vec<&TargetDescriptor> = ds
        .iter()
        .copied()
        .filter(|d| recorded(hip, d).device())
        .collect();
    let buildable: Vec<&TargetDescriptor> = accepted
        .iter()
        .copied()
        .filter(|d| recorded(hip, d) == HipSupport::Kernels)
        .collect();
    let arch_args: Vec<String> = buildable
        .iter()
        .map(|d| format!("--offload-arch={}", d.id))
        .collect();
    let arch_refs: Vec<&str> = arch_args.iter().map(String::as_str).collect();
    let exe = hipcc(hip, "devices-two", &arch_refs)
        .unwrap_or_else(|e| panic!("{} hipcc: {e}", hip.label()));
    let r = run(hip, &exe, &listed.join(","), &["launch"], "two-targets");
    assert_eq!(
        r.fact("device_count"),
        accepted.len().to_string(),
        "{}",
        r.context()
    );
    let mut want = Vec::new();
    for (i, d) in accepted.iter().enumerate() {
        if let Err(e) = check_device(&r, i, d) {
            panic!("{e}\n{}", r.context());
        }
        assert_eq!(
            r.fact(&format!("dev{i}.launch_status")),
            "0",
            "{}",
            r.context()
        );
        assert_eq!(
            r.fact(&format!("dev{i}.sync_status")),
            "0",
            "{}",
            r.context()
        );
        want.push((
            d.id.to_string(),
            "sg_empty(int*)".to_string(),
            "validated".to_string(),
        ));
    }
    assert_eq!(dispatches(&r), want, "{}", r.context());
}

#[cfg(all(feature = "gfx9", feature = "gfx94"))]
#[test]
fn gfx90a_and_gfx942_are_two_devices_on_hip_6_4() {
    two_targets(Hip::V6_4);
}

#[cfg(all(feature = "gfx9", feature = "gfx94"))]
#[test]
fn gfx90a_and_gfx942_are_two_devices_on_hip_7_2() {
    two_targets(Hip::V7_2);
}

#[cfg(all(feature = "gfx9", feature = "gfx94"))]
#[test]
fn gfx90a_and_gfx942_leave_hip_5_2_with_the_gfx90a_device_only() {
    two_targets(Hip::V5_2);
}

// ---------------------------------------------------------------------------
// LLVM 21's view of the registry's LLVM facts
// ---------------------------------------------------------------------------

/// Runs `argv` in the chroot's work directory; (success, stdout + stderr).
fn in_chroot(argv: &[String]) -> (bool, String) {
    let w = work(Hip::V6_4);
    let out = command(Hip::V6_4, w, &[], argv)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    (
        out.status.success(),
        format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ),
    )
}

const LLVM21: &str = "/usr/lib/llvm-21/bin";

#[test]
fn elf_machine_values_agree_with_llvm_21_where_it_knows_the_processor() {
    let w = work(Hip::V6_4);
    let mut checked = Vec::new();
    for d in isa::DESCRIPTORS {
        let obj = w.join(&format!("mach-{}.o", d.id));
        let _ = std::fs::remove_file(&obj.host);
        let (ok, log) = in_chroot(&[
            format!("{LLVM21}/llvm-mc"),
            "-triple=amdgcn-amd-amdhsa".into(),
            "-filetype=obj".into(),
            format!("-mcpu={}", d.id),
            "-o".into(),
            obj.seen.clone(),
            "/dev/null".into(),
        ]);
        if log.contains("not a recognized processor") {
            continue; // gone from LLVM 21 (gfx940, gfx941): AMDGPUUsage is the source
        }
        assert!(ok, "{}: {log}", d.id);
        let b = std::fs::read(&obj.host).unwrap();
        assert!(b.len() >= 0x34 && b[..4] == *b"\x7fELF", "{}", d.id);
        let e_flags = u32::from_le_bytes(b[0x30..0x34].try_into().unwrap());
        assert_eq!(
            e_flags & isa::ElfMachine::MASK,
            d.elf_machine,
            "{}: e_flags {e_flags:#x}",
            d.id
        );
        checked.push(d.id);
    }
    eprintln!("LLVM 21 agrees on the ELF machine of {checked:?}");
}

#[test]
fn lds_limits_agree_with_clang_21_where_it_knows_the_processor() {
    let w = work(Hip::V6_4);
    std::fs::write(
        w.host.join("lds.hip"),
        "#include <hip/hip_runtime.h>\n\
         __global__ void k(float *o) {\n\
           __shared__ float s[LDS_FLOATS];\n\
           s[threadIdx.x] = 1;\n\
           __syncthreads();\n\
           o[threadIdx.x] = s[LDS_FLOATS - 1 - threadIdx.x];\n\
         }\n",
    )
    .unwrap();
    let compile = |d: &TargetDescriptor, bytes: u64| {
        in_chroot(&[
            format!("{LLVM21}/clang++"),
            "-x".into(),
            "hip".into(),
            format!("--offload-arch={}", d.id),
            "--cuda-device-only".into(),
            "-O1".into(),
            format!("-DLDS_FLOATS={}", bytes / 4),
            "-c".into(),
            w.join("lds.hip").seen,
            "-o".into(),
            w.join(&format!("lds-{}.o", d.id)).seen,
        ])
    };
    let mut checked = Vec::new();
    for d in isa::DESCRIPTORS {
        let lds = d.facts.lds_bytes_per_workgroup.value;
        let (ok, log) = compile(d, lds);
        if log.contains("invalid target ID") || log.contains("unknown target") {
            continue; // gone from LLVM 21 (gfx940, gfx941)
        }
        assert!(
            ok && !log.contains("exceeds limit"),
            "{}: {lds} bytes of LDS refused: {log}",
            d.id
        );
        let (_, log) = compile(d, lds + 1024);
        assert!(
            log.contains(&format!("exceeds limit ({lds})")),
            "{}: {} bytes of LDS not refused at {lds}: {log}",
            d.id,
            lds + 1024
        );
        checked.push(d.id);
    }
    eprintln!("clang 21 agrees on the LDS limit of {checked:?}");
}
