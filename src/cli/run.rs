//! `softgpu run`: run a command with the shim preloaded, then summarise the
//! capture it wrote.

use std::ffi::OsString;
use std::io;
use std::os::unix::fs::MetadataExt;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use super::{EXIT_ERROR, RunArgs, rocprof};
use crate::capture;
use crate::config::{DEFAULT_CAPTURE, expand_pid};

/// File name of the shim, looked up next to the `softgpu` executable.
pub const SHIM_NAME: &str = "libsoftgpu_hsa.so";

/// The shim next to the running executable.
fn find_shim() -> Result<PathBuf, String> {
    let exe = std::env::current_exe()
        .map_err(|e| format!("cannot find the softgpu executable's own path: {e}"))?;
    let dir = exe
        .parent()
        .ok_or_else(|| format!("{} has no directory", exe.display()))?;
    let shim = dir.join(SHIM_NAME);
    if !shim.is_file() {
        return Err(format!(
            "the shim {} is missing: {SHIM_NAME} must sit next to {} (cargo build --release builds both into target/release/)",
            shim.display(),
            exe.display()
        ));
    }
    let s = shim.to_string_lossy();
    if s.contains([':', ' ']) || shim.to_str().is_none() {
        return Err(format!(
            "the shim path {s} contains a character LD_PRELOAD cannot carry (space, colon or non-UTF-8): move softgpu and {SHIM_NAME} elsewhere"
        ));
    }
    Ok(shim)
}

/// `LD_PRELOAD` with the shim first and any existing entries after it.
fn preload_value(shim: &Path, existing: Option<OsString>) -> OsString {
    let mut v = OsString::from(shim.as_os_str());
    if let Some(e) = existing.filter(|e| !e.is_empty()) {
        v.push(":");
        v.push(e);
    }
    v
}

/// What identifies one version of a file, to tell a fresh capture from a stale one.
fn file_id(p: &Path) -> Option<(u64, u64, i64, i64, u64)> {
    let m = std::fs::metadata(p).ok()?;
    Some((m.dev(), m.ino(), m.mtime(), m.mtime_nsec(), m.size()))
}

pub(super) fn run(args: RunArgs) -> i32 {
    let shim = match find_shim() {
        Ok(s) => s,
        Err(e) => {
            eprintln!("softgpu run: {e}");
            return EXIT_ERROR;
        }
    };
    if let Err(e) = args.rocprof.refuse_gpu_only() {
        eprintln!("softgpu run: {e}");
        return EXIT_ERROR;
    }
    let program_path = args.command.first().map(PathBuf::from).unwrap_or_default();
    let plan = match args.rocprof.plan(&program_path) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("softgpu run: {e}");
            return EXIT_ERROR;
        }
    };
    if plan.is_some() && args.capture.is_some() {
        eprintln!(
            "softgpu run: --capture cannot be combined with -d/-o/--output-format/--stats (the capture goes to BASE_results.sgcap; keep it with --output-format capture)"
        );
        return EXIT_ERROR;
    }
    if let Some(Err(e)) = plan.as_ref().map(rocprof::Plan::prepare) {
        eprintln!("softgpu run: {e}");
        return EXIT_ERROR;
    }
    let template = match &plan {
        Some(p) => p.capture_template(),
        None => args.capture.unwrap_or_else(|| DEFAULT_CAPTURE.to_string()),
    };
    let capture_off = template == "off";
    let template = if capture_off || Path::new(&template).is_absolute() {
        template
    } else {
        let absolute = match std::env::current_dir() {
            Ok(d) => d.join(&template),
            Err(e) => {
                eprintln!("softgpu run: cannot resolve the capture path {template}: {e}");
                return EXIT_ERROR;
            }
        };
        // The shim reads SOFTGPU_CAPTURE as UTF-8 text: a lossy conversion
        // would send the capture to another path than the one summarised.
        match absolute.to_str() {
            Some(s) => s.to_string(),
            None => {
                eprintln!(
                    "softgpu run: the capture path {} is not UTF-8 (the current directory is not), and SOFTGPU_CAPTURE must be: pass --capture with an absolute UTF-8 path",
                    crate::input::show_path(&absolute)
                );
                return EXIT_ERROR;
            }
        }
    };
    // A path without %p may already exist from an earlier run.
    let before = (!capture_off && !template.contains("%p"))
        .then(|| file_id(Path::new(&template)))
        .flatten();

    let Some((program, rest)) = args.command.split_first() else {
        eprintln!("softgpu run: no command given (usage: softgpu run [OPTIONS] -- CMD [ARGS...])");
        return EXIT_ERROR;
    };
    let mode = args
        .mode
        .clone()
        .or_else(|| std::env::var("SOFTGPU_MODE").ok())
        .unwrap_or_default();
    if mode != "intercept" && mode != "observe" {
        if let Some(warning) = check_rocr(&shim, std::env::var_os("LD_LIBRARY_PATH")) {
            eprintln!("softgpu run: {warning}");
        }
    }
    let mut cmd = Command::new(program);
    cmd.args(rest)
        .env(
            "LD_PRELOAD",
            preload_value(&shim, std::env::var_os("LD_PRELOAD")),
        )
        .env("SOFTGPU_CAPTURE", &template);
    if let Some(t) = &args.target {
        cmd.env("SOFTGPU_TARGET", t);
    }
    if let Some(m) = &args.mode {
        cmd.env("SOFTGPU_MODE", m);
    }
    let mut child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) => {
            let code = match e.kind() {
                io::ErrorKind::NotFound => 127,
                io::ErrorKind::PermissionDenied => 126,
                _ => 126,
            };
            eprintln!(
                "softgpu run: cannot run {}: {e}",
                crate::input::show_path(Path::new(program))
            );
            return code;
        }
    };
    let pid = child.id();
    let status = match child.wait() {
        Ok(s) => s,
        Err(e) => {
            eprintln!(
                "softgpu run: cannot wait for {}: {e}",
                crate::input::show_path(Path::new(program))
            );
            return EXIT_ERROR;
        }
    };
    let code = match (status.code(), status.signal()) {
        (Some(c), _) => c,
        (None, Some(sig)) => 128 + sig,
        (None, None) => EXIT_ERROR,
    };
    if let Some(sig) = status.signal() {
        eprintln!(
            "softgpu run: {} was killed by signal {sig}",
            crate::input::show_path(Path::new(program))
        );
    }
    if capture_off {
        eprintln!("softgpu run: capture was off (--capture off); nothing to summarise");
        return code;
    }
    let path = PathBuf::from(expand_pid(&template, pid));
    let stale = before.is_some() && file_id(&path) == before;
    summarise(&path, stale, template.contains("%p"));
    if let Some(plan) = plan {
        if stale || !path.exists() {
            return code;
        }
        match capture::read_file(&path) {
            Err(e) => {
                eprintln!("softgpu run: {e}");
                return EXIT_ERROR;
            }
            Ok(cap) => match plan.write(&cap, &path, pid) {
                Ok(files) => {
                    for f in files {
                        eprintln!("softgpu run: wrote {}", f.display());
                    }
                }
                Err(e) => {
                    eprintln!("softgpu run: {e} (the capture stays at {})", path.display());
                    return EXIT_ERROR;
                }
            },
        }
    }
    code
}

/// Where the dynamic loader finds `soname` for a program started with
/// `LD_LIBRARY_PATH=ld_library_path`: that path's directories, then the
/// loader's cache (`ldconfig -p`), then the default directories. A program's
/// own RUNPATH can still pick another copy; the shim checks the one actually
/// loaded again at start-up.
fn locate_library(soname: &str, ld_library_path: Option<OsString>) -> Option<PathBuf> {
    let from_env = ld_library_path
        .map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
        .unwrap_or_default();
    if let Some(p) = from_env
        .iter()
        .map(|d| d.join(soname))
        .find(|p| p.is_file())
    {
        return Some(p);
    }
    for ldconfig in ["/sbin/ldconfig", "/usr/sbin/ldconfig"] {
        let Ok(out) = Command::new(ldconfig).arg("-p").output() else {
            continue;
        };
        // "\tlibhsa-runtime64.so.1 (libc6,x86-64) => /usr/lib/x86_64-linux-gnu/libhsa-runtime64.so.1"
        let text = String::from_utf8_lossy(&out.stdout);
        let found = text.lines().find_map(|l| {
            let (name, rest) = l.trim().split_once(' ')?;
            (name == soname && rest.contains("x86-64"))
                .then(|| {
                    rest.rsplit_once("=> ")
                        .map(|(_, p)| PathBuf::from(p.trim()))
                })
                .flatten()
        });
        if let Some(p) = found.filter(|p| p.is_file()) {
            return Some(p);
        }
        break;
    }
    [
        "/lib/x86_64-linux-gnu",
        "/usr/lib/x86_64-linux-gnu",
        "/lib64",
        "/usr/lib64",
        "/lib",
        "/usr/lib",
    ]
    .iter()
    .map(|d| Path::new(d).join(soname))
    .find(|p| p.is_file())
}

/// The warning the shim would give at start-up in virtual mode, said before
/// the command starts: the ROCr the loader finds exports functions the shim
/// does not. None when it exports none, or no ROCr is found.
fn check_rocr(shim: &Path, ld_library_path: Option<OsString>) -> Option<String> {
    use crate::code_object::dynsym;
    let rocr = locate_library("libhsa-runtime64.so.1", ld_library_path)?;
    let shown = crate::input::show_path(&rocr);
    let ours = match dynsym::exported_functions(shim, "hsa_") {
        Ok(f) => f,
        Err(e) => {
            return Some(format!(
                "cannot list the functions the shim {} exports: {e}",
                crate::input::show_path(shim)
            ));
        }
    };
    match dynsym::exported_functions(&rocr, "hsa_") {
        Ok(theirs) => {
            let missing: Vec<&str> = theirs
                .iter()
                .filter(|f| ours.binary_search(f).is_err())
                .map(String::as_str)
                .collect();
            (!missing.is_empty()).then(|| dynsym::unshadowed_message(&shown, &missing))
        }
        Err(e) => Some(format!(
            "cannot list the functions the HSA runtime {shown} exports ({e}); any that SoftGPU does not provide would reach it uninitialised"
        )),
    }
}

fn summarise(path: &Path, stale: bool, per_pid: bool) {
    if stale || !path.exists() {
        eprintln!(
            "softgpu run: no capture at {}: the program did not initialise HSA through the shim{}",
            path.display(),
            if per_pid {
                ", or a child process wrote it under its own pid (see softgpu run --help)"
            } else {
                ""
            }
        );
        return;
    }
    match capture::read_file(path) {
        Err(e) => eprintln!("softgpu run: {e}"),
        Ok(cap) => {
            let state = if cap.complete {
                "complete".to_string()
            } else {
                format!("INCOMPLETE: {}", super::incomplete_reasons(&cap).join("; "))
            };
            eprintln!(
                "softgpu run: {}; capture: {} ({state})",
                crate::report::counts_summary(&cap),
                path.display()
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shim_goes_first_in_ld_preload() {
        let shim = Path::new("/opt/sg/libsoftgpu_hsa.so");
        assert_eq!(
            preload_value(shim, None),
            OsString::from("/opt/sg/libsoftgpu_hsa.so")
        );
        assert_eq!(
            preload_value(shim, Some("libother.so".into())),
            OsString::from("/opt/sg/libsoftgpu_hsa.so:libother.so")
        );
        assert_eq!(
            preload_value(shim, Some("".into())),
            OsString::from("/opt/sg/libsoftgpu_hsa.so")
        );
    }
}
