//! ROCm's own tools under the shim: `rocminfo` and `rocm_agent_enumerator`, on both HIP
//! versions' ROCm (5.2.3 on the host, rocminfo 7.2.4 with ROCr 6.4.3 in the Debian sid
//! chroot of `scripts/sid-chroot`).
//!
//! rocminfo asks the runtime for every attribute of the system, of every agent, of every pool
//! and of every ISA, and stops at the first one that is not answered. So a complete listing
//! (every agent, every field, every pool, the ISA, `*** Done ***`, no error line) shows that
//! the shim answers everything rocminfo asks.
//!
//! **Outside the runtime.** Both tools look at the machine before they ask the runtime
//! anything, and this machine has no amdgpu driver. Each run therefore happens in a private
//! mount namespace (`unshare -m`, nothing outside it changes) that supplies what the driver
//! would, and nothing the runtime itself answers:
//! - rocminfo 5.2.3 runs `lsmod | grep amdgpu`: a `lsmod` first in `PATH` prints an amdgpu
//!   line (this machine has no `/proc/modules` at all);
//! - rocminfo 7.2.4 reads `/sys/module/amdgpu/initstate`: a tmpfs over the chroot's
//!   `/sys/module` holds one saying `live` (the rest of `/sys` is the host's);
//! - both open `/dev/kfd` read-write before `hsa_init`: `/dev` is replaced by a copy (every
//!   node bind-mounted from the real one) with an empty regular file `kfd`;
//! - `rocm_agent_enumerator` reads KFD's topology in sysfs before it falls back to rocminfo;
//!   5.2.3's lists `/sys/class/kfd/kfd/topology/nodes/` without checking it exists, so on the
//!   host a tmpfs over `/sys/class` holds that directory, empty; 7.2.4's checks.
//!
//! The shim's part is then judged on rocminfo's output alone.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Duration;

mod common;
use common::{output_within, repo, shim};

const TIMEOUT: Duration = Duration::from_secs(120);
const CHROOT_HINT: &str = "run ./scripts/sid-chroot (scripts/test does it)";
const SETUP_HINT: &str = "run ./scripts/setup (hipcc depends on rocminfo 5.2.3)";

/// The namespace set-up on the host: `SCRIPT WORKDIR CMD...`.
const HOST_ENV: &str = r#"set -e
W=$1; shift
mkdir -p "$W/bin"
printf '#!/bin/sh\necho "amdgpu               9543680  0"\n' > "$W/bin/lsmod"
chmod +x "$W/bin/lsmod"
export PATH="$W/bin:$PATH"
mount -t tmpfs softgpu-no-kfd-topology /sys/class
mkdir -p /sys/class/kfd/kfd/topology/nodes
d=$W/dev; mkdir -p "$d"
for f in /dev/*; do
  n=$(basename "$f")
  if [ -L "$f" ]; then cp -P "$f" "$d/$n"
  elif [ -d "$f" ]; then mkdir -p "$d/$n"; mount --rbind "$f" "$d/$n"
  else touch "$d/$n"; mount --bind "$f" "$d/$n"; fi
done
: > "$d/kfd"
mount --rbind "$d" /dev
exec "$@"
"#;

/// The namespace set-up for the sid chroot: `SCRIPT ROOT WORKDIR CMD...`.
const SID_ENV: &str = r#"set -e
R=$1; W=$2; shift 2
mount --rbind /sys "$R/sys"
mount -t tmpfs softgpu-amdgpu-module "$R/sys/module"
mkdir -p "$R/sys/module/amdgpu"
echo live > "$R/sys/module/amdgpu/initstate"
d=$W/dev; mkdir -p "$d"
for f in "$R"/dev/*; do
  n=$(basename "$f")
  if [ -L "$f" ]; then cp -P "$f" "$d/$n"
  elif [ -d "$f" ]; then mkdir -p "$d/$n"; mount --rbind "$f" "$d/$n"
  else touch "$d/$n"; mount --bind "$f" "$d/$n"; fi
done
: > "$d/kfd"
mount --rbind "$d" "$R/dev"
exec "$@"
"#;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Rocm {
    /// The host: rocminfo 5.2.3, ROCr 5.2.3's headers.
    Host52,
    /// The sid chroot: rocminfo 7.2.4, ROCr 6.4.3.
    Sid64,
}

fn work(tag: &str) -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("rocm_tools")
        .join(tag);
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn chroot_root() -> PathBuf {
    std::env::var_os("SOFTGPU_SID_CHROOT")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/var/cache/softgpu/sid"))
}

/// Run `cmd` (a shell command line) with the shim preloaded, for `targets`.
fn run(rocm: Rocm, tag: &str, targets: &str, cmd: &str) -> Output {
    let dir = work(&format!("{rocm:?}-{tag}"));
    let mut c = Command::new("unshare");
    c.args(["-m", "--propagation", "private", "sh"]);
    let vars = [
        ("SOFTGPU_MODE", "virtual"),
        ("SOFTGPU_TARGET", targets),
        ("SOFTGPU_CAPTURE", "off"),
        ("SOFTGPU_SUMMARY", "0"),
        ("SOFTGPU_LOG", "warn"),
    ];
    match rocm {
        Rocm::Host52 => {
            assert!(
                Path::new("/usr/bin/rocminfo").is_file()
                    && Path::new("/usr/bin/rocm_agent_enumerator").is_file(),
                "rocminfo 5.2.3 is not installed on the host; {SETUP_HINT}"
            );
            let script = dir.join("env.sh");
            std::fs::write(&script, HOST_ENV).unwrap();
            c.arg(&script)
                .arg(dir.join("ns"))
                .args(["sh", "-c", cmd])
                .env("LD_PRELOAD", shim())
                .envs(vars);
        }
        Rocm::Sid64 => {
            let root = chroot_root();
            assert!(
                root.join(".softgpu-ready").is_file(),
                "the sid chroot is not ready at {}: {CHROOT_HINT}",
                root.display()
            );
            assert!(
                root.join("usr/bin/rocminfo").is_file(),
                "rocminfo is not installed in the sid chroot at {} (hipcc depends on it): \
                 remove the chroot and {CHROOT_HINT}",
                root.display()
            );
            let inside = shim_in_chroot(&root);
            let script = dir.join("env.sh");
            std::fs::write(&script, SID_ENV).unwrap();
            c.arg(&script)
                .arg(&root)
                .arg(dir.join("ns"))
                .arg(repo().join("scripts/sid-chroot"))
                .args(["--run", "--", "env"])
                .arg(format!("LD_PRELOAD={inside}"))
                .args(vars.iter().map(|(k, v)| format!("{k}={v}")))
                .args(["sh", "-c", cmd]);
        }
    }
    // Both pipes are drained while it runs, so a long output never blocks it.
    output_within(
        c.current_dir(&dir),
        TIMEOUT,
        &format!("`{cmd}` ({rocm:?}) under unshare (util-linux)"),
    )
}

/// The shim's path inside the chroot: copied once per test process into a directory of its
/// own (those of earlier test processes that are gone are removed). Once: the tests of this
/// process run in parallel, and a copy made over the file while another test's rocminfo had it
/// mapped killed that rocminfo with SIGBUS (a flaky failure). The copy is written under a
/// temporary name and renamed into place.
fn shim_in_chroot(root: &Path) -> String {
    static INSIDE: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    INSIDE
        .get_or_init(|| {
            let dir = common::process_dir_in_chroot(root, "rocm_tools");
            let tmp = dir.host.join("libsoftgpu_hsa.so.tmp");
            std::fs::copy(shim(), &tmp).unwrap();
            std::fs::rename(&tmp, dir.host.join("libsoftgpu_hsa.so")).unwrap();
            dir.join("libsoftgpu_hsa.so").seen
        })
        .clone()
}

/// One agent's section of rocminfo's output: its lines, up to the next agent.
struct Agent {
    lines: Vec<String>,
}

impl Agent {
    /// The value of the first `Label:` line (labels are left-aligned in a 25-column field,
    /// and a long one runs into its value).
    fn field(&self, label: &str) -> Option<String> {
        self.lines.iter().find_map(|l| {
            l.trim_start()
                .strip_prefix(label)
                .map(|rest| rest.trim().to_string())
        })
    }
    fn count(&self, label: &str) -> usize {
        self.lines
            .iter()
            .filter(|l| l.trim_start().starts_with(label))
            .count()
    }
}

/// Split rocminfo's output into the system part and the agents.
fn agents(out: &str) -> Vec<Agent> {
    let lines: Vec<&str> = out.lines().collect();
    let mut v: Vec<Agent> = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        if lines[i].trim().starts_with("Agent ")
            && lines[i].trim()[6..].trim().parse::<u32>().is_ok()
        {
            v.push(Agent { lines: Vec::new() });
        } else if let Some(a) = v.last_mut() {
            if !lines[i].starts_with("*******") {
                a.lines.push(lines[i].to_string());
            }
        }
        i += 1;
    }
    v
}

/// Fields every agent section has, in every rocminfo version.
const AGENT_FIELDS: &[&str] = &[
    "Name:",
    "Uuid:",
    "Marketing Name:",
    "Vendor Name:",
    "Feature:",
    "Profile:",
    "Float Round Mode:",
    "Max Queue Number:",
    "Queue Min Size:",
    "Queue Max Size:",
    "Queue Type:",
    "Node:",
    "Device Type:",
    "Cache Info:",
    "L1:",
    "Chip ID:",
    "Cacheline Size:",
    "Max Clock Freq. (MHz):",
    "BDFID:",
    "Internal Node ID:",
    "Compute Unit:",
    "SIMDs per CU:",
    "Shader Engines:",
    "Shader Arrs. per Eng.:",
    "WatchPts on Addr. Ranges:",
    "Features:",
    "Pool Info:",
    "ISA Info:",
];

/// Fields of a GPU agent only.
const GPU_FIELDS: &[&str] = &[
    "Fast F16 Operation:",
    "Wavefront Size:",
    "Workgroup Max Size:",
    "Workgroup Max Size per Dimension:",
    "Max Waves Per CU:",
    "Max Work-item Per CU:",
    "Grid Max Size:",
    "Grid Max Size per Dimension:",
    "Max fbarriers/Workgrp:",
];

/// Fields rocminfo 7.2.4 adds.
const AGENT_FIELDS_7: &[&str] = &["ASIC Revision:", "Memory Properties:"];
const GPU_FIELDS_7: &[&str] = &[
    "Coherent Host Access:",
    "Packet Processor uCode::",
    "SDMA engine uCode::",
    "IOMMU Support::",
];
const SYSTEM_FIELDS: &[&str] = &[
    "Runtime Version:",
    "System Timestamp Freq.:",
    "Sig. Max Wait Duration:",
    "Machine Model:",
    "System Endianness:",
];
const SYSTEM_FIELDS_7: &[&str] = &[
    "Runtime Ext Version:",
    "Mwaitx:",
    "XNACK enabled:",
    "DMAbuf Support:",
    "VMM Support:",
];
/// Every pool's fields.
const POOL_FIELDS: &[&str] = &[
    "Segment:",
    "Size:",
    "Allocatable:",
    "Alloc Granule:",
    "Alloc Alignment:",
    "Accessible by all:",
];
/// Every ISA's fields.
const ISA_FIELDS: &[&str] = &[
    "Machine Models:",
    "Profiles:",
    "Default Rounding Mode:",
    "Fast f16:",
    "FBarrier Max Size:",
];

/// Everything wrong with one rocminfo listing of a CPU and the GPUs `gpus`.
fn listing_problems(rocm: Rocm, out: &Output, gpus: &[&str]) -> Vec<String> {
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let mut p = Vec::new();
    if !out.status.success() {
        p.push(format!("rocminfo exited with {}", out.status));
    }
    for l in stdout.lines().chain(stderr.lines()) {
        let low = l.to_lowercase();
        if low.contains("error") || low.contains("failure") || low.contains("warn") {
            p.push(format!("error line: {l}"));
        }
    }
    if stdout.lines().last().map(str::trim) != Some("*** Done ***") {
        p.push("the listing does not end with `*** Done ***` (rocminfo stopped early)".into());
    }
    let system: Vec<&str> = stdout
        .lines()
        .take_while(|l| !l.contains("HSA Agents"))
        .collect();
    let mut sys_fields = SYSTEM_FIELDS.to_vec();
    if rocm == Rocm::Sid64 {
        sys_fields.extend(SYSTEM_FIELDS_7);
    }
    for f in sys_fields {
        if !system.iter().any(|l| l.trim_start().starts_with(f)) {
            p.push(format!("system: no `{f}` line"));
        }
    }
    let agents = agents(&stdout);
    if agents.len() != 1 + gpus.len() {
        p.push(format!(
            "{} agents listed, expected the CPU and {} GPU(s)",
            agents.len(),
            gpus.len()
        ));
        return p;
    }
    for (i, a) in agents.iter().enumerate() {
        let gpu = i > 0;
        let at = if gpu { gpus[i - 1] } else { "cpu" };
        let mut want: Vec<&str> = AGENT_FIELDS.to_vec();
        if gpu {
            want.extend(GPU_FIELDS);
        }
        if rocm == Rocm::Sid64 {
            want.extend(AGENT_FIELDS_7);
            if gpu {
                want.extend(GPU_FIELDS_7);
            }
        }
        for f in want {
            if a.field(f).is_none() {
                p.push(format!("agent {i} ({at}): no `{f}` line"));
            }
        }
        let device = a.field("Device Type:").unwrap_or_default();
        if device != if gpu { "GPU" } else { "CPU" } {
            p.push(format!("agent {i} ({at}): Device Type {device:?}"));
        }
        // Every pool complete: three each (CPU: fine, kernarg, coarse; GPU: coarse, fine, LDS).
        let pools = a.count("Pool ") - a.count("Pool Info:");
        if pools != 3 {
            p.push(format!("agent {i} ({at}): {pools} pools, expected 3"));
        }
        let mut pool_fields = POOL_FIELDS.to_vec();
        if rocm == Rocm::Sid64 {
            pool_fields.push("Alloc Recommended Granule:");
        }
        for f in pool_fields {
            if a.count(f) != pools {
                p.push(format!(
                    "agent {i} ({at}): `{f}` appears {} times for {pools} pools",
                    a.count(f)
                ));
            }
        }
        if gpu {
            let name = a.field("Name:").unwrap_or_default();
            if name != gpus[i - 1] {
                p.push(format!(
                    "agent {i}: Name {name:?}, expected {:?}",
                    gpus[i - 1]
                ));
            }
            if a.count("ISA 1") != 1 {
                p.push(format!("agent {i} ({at}): no ISA listed"));
            }
            let isa = format!("amdgcn-amd-amdhsa--{}", gpus[i - 1]);
            if !a.lines.iter().any(|l| l.contains(&isa)) {
                p.push(format!("agent {i} ({at}): no ISA named {isa}..."));
            }
            for f in ISA_FIELDS {
                if a.field(f).is_none() {
                    p.push(format!("agent {i} ({at}) ISA: no `{f}` line"));
                }
            }
            if a.field("WatchPts on Addr. Ranges:").as_deref() != Some("4") {
                p.push(format!(
                    "agent {i} ({at}): watch points {:?}, a real GPU has 4",
                    a.field("WatchPts on Addr. Ranges:")
                ));
            }
        } else if a.field("Profile:").as_deref() != Some("FULL_PROFILE") {
            p.push(format!(
                "the CPU agent's profile is {:?}; ROCr's CPU agent is FULL_PROFILE",
                a.field("Profile:")
            ));
        }
    }
    // The MI210 model, as public rocminfo dumps of one show it.
    if let Some(a) = gpus
        .iter()
        .position(|g| *g == "gfx90a")
        .map(|i| &agents[i + 1])
    {
        for (f, v) in [
            ("Chip ID:", "29711(0x740f)"),
            ("Compute Unit:", "104"),
            ("Max Clock Freq. (MHz):", "1700"),
        ] {
            if a.field(f).as_deref() != Some(v) {
                p.push(format!("gfx90a: {f} {:?}, expected {v}", a.field(f)));
            }
        }
        if rocm == Rocm::Sid64 && a.field("ASIC Revision:").as_deref() != Some("1(0x1)") {
            p.push(format!(
                "gfx90a: ASIC Revision {:?}, an MI210 reports 1(0x1)",
                a.field("ASIC Revision:")
            ));
        }
    }
    p
}

fn rocminfo_lists_everything(rocm: Rocm, targets: &str) {
    let gpus: Vec<&str> = targets.split(',').collect();
    let tag = format!("rocminfo-{}", targets.replace(',', "+"));
    let out = run(rocm, &tag, targets, "rocminfo");
    let p = listing_problems(rocm, &out, &gpus);
    assert!(
        p.is_empty(),
        "rocminfo ({rocm:?}, SOFTGPU_TARGET={targets}) is incomplete:\n  {}\n--- stdout ---\n{}\n--- stderr ---\n{}",
        p.join("\n  "),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

fn agent_enumerator_lists_the_gpus(rocm: Rocm, targets: &str) {
    let gpus: Vec<&str> = targets.split(',').collect();
    let tag = format!("enumerator-{}", targets.replace(',', "+"));
    let out = run(
        rocm,
        &tag,
        targets,
        "rocm_agent_enumerator; echo ---; rocm_agent_enumerator -name",
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let (plain, named) = stdout.split_once("---\n").unwrap_or((&stdout, ""));
    let plain: Vec<&str> = plain.lines().filter(|l| *l != "gfx000").collect();
    let named: Vec<&str> = named
        .lines()
        .map(|l| l.split(':').next().unwrap_or(""))
        .collect();
    // `-name` prints names with target features only (5.2.3's pattern wants a `:`; a
    // gfx1030's ISA name has none, on real hardware too): every GPU it prints is ours, in
    // order, and the gfx90a (`gfx90a:sramecc+:xnack-`) is among them.
    let mut rest = gpus.iter();
    let named_ok = named.contains(&"gfx90a") && named.iter().all(|n| rest.any(|g| g == n));
    assert!(
        out.status.success() && plain == gpus && named_ok,
        "rocm_agent_enumerator ({rocm:?}) listed {plain:?} and -name {named:?}, expected {gpus:?}\n\
         --- stdout ---\n{stdout}\n--- stderr ---\n{stderr}"
    );
}

#[test]
fn rocminfo_5_2_3_lists_the_cpu_and_the_gfx90a_agent_completely() {
    rocminfo_lists_everything(Rocm::Host52, "gfx90a");
}

#[test]
fn rocminfo_5_2_3_lists_the_cpu_and_two_gpu_agents_completely() {
    rocminfo_lists_everything(Rocm::Host52, "gfx90a,gfx942");
}

#[test]
fn rocminfo_7_2_4_over_rocr_6_4_lists_the_cpu_and_the_gfx90a_agent_completely() {
    rocminfo_lists_everything(Rocm::Sid64, "gfx90a");
}

#[test]
fn rocminfo_7_2_4_over_rocr_6_4_lists_the_cpu_and_two_gpu_agents_completely() {
    rocminfo_lists_everything(Rocm::Sid64, "gfx90a,gfx942");
}

#[test]
fn rocm_agent_enumerator_5_2_3_lists_the_gpus() {
    agent_enumerator_lists_the_gpus(Rocm::Host52, "gfx90a");
    agent_enumerator_lists_the_gpus(Rocm::Host52, "gfx90a,gfx1030");
}

#[test]
fn rocm_agent_enumerator_7_2_4_lists_the_gpus() {
    agent_enumerator_lists_the_gpus(Rocm::Sid64, "gfx90a");
    agent_enumerator_lists_the_gpus(Rocm::Sid64, "gfx90a,gfx1100");
}

#[test]
fn the_listing_checker_finds_a_listing_that_stops_early() {
    // rocminfo 5.2.3 over a runtime that stops answering at the CPU's watch points.
    let text = "HSA System Attributes\nRuntime Version:         1.1\nHSA Agents\n*******\nAgent 1\n\
                *******\n  Name:                    CPU\n";
    let out = Output {
        status: Command::new("false").status().unwrap(),
        stdout: text.as_bytes().to_vec(),
        stderr: b"hsa api call failure at: rocminfo.cc:1\n".to_vec(),
    };
    let p = listing_problems(Rocm::Host52, &out, &["gfx90a"]);
    assert!(p.iter().any(|x| x.contains("Done")), "{p:?}");
    assert!(p.iter().any(|x| x.contains("error line")), "{p:?}");
    assert!(p.iter().any(|x| x.contains("agents listed")), "{p:?}");
}
