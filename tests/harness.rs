//! The test harness itself (`tests/common`): it never guesses which build of
//! the shim to test, and its deadline ends a hung child and its group.

use std::path::PathBuf;
use std::time::Duration;

mod common;
use common::{Kill, SHIM_VAR, choose_shim_in, wait_within};

fn profile_dir(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join("harness")
        .join(name)
        .join("release");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("deps")).unwrap();
    dir
}

#[test]
fn the_shim_of_this_test_runs_own_build_is_taken_never_the_newer_of_two_files() {
    let dir = profile_dir("differ");
    std::fs::write(dir.join("deps/libsoftgpu_hsa.so"), b"this run's build").unwrap();
    // A different, newer copy in the profile directory (an earlier `cargo build`
    // with other features, touched since) does not win by its time stamp.
    std::thread::sleep(Duration::from_millis(20));
    std::fs::write(dir.join("libsoftgpu_hsa.so"), b"another build").unwrap();
    assert_eq!(
        choose_shim_in(&dir, None),
        Ok(dir.join("deps/libsoftgpu_hsa.so"))
    );
    // The variable chooses, and must name a file.
    let pick = dir.join("libsoftgpu_hsa.so");
    assert_eq!(choose_shim_in(&dir, Some(pick.clone())), Ok(pick));
    let missing = choose_shim_in(&dir, Some(dir.join("nothing.so"))).unwrap_err();
    assert!(missing.contains("is not a file"), "{missing}");
}

#[test]
fn without_this_runs_build_the_harness_refuses_to_guess_and_says_what_to_run_or_set() {
    let dir = profile_dir("stale");
    std::fs::remove_dir_all(dir.join("deps")).unwrap();
    std::fs::write(dir.join("libsoftgpu_hsa.so"), b"some build").unwrap();
    let why = choose_shim_in(&dir, None).unwrap_err();
    assert!(why.contains("does not guess"), "{why}");
    assert!(why.contains("cargo test --release"), "{why}");
    assert!(why.contains(SHIM_VAR), "{why}");
    let empty = profile_dir("none");
    let why = choose_shim_in(&empty, None).unwrap_err();
    assert!(why.contains("is not in") && why.contains(SHIM_VAR), "{why}");
}

#[test]
fn a_child_past_its_deadline_is_killed_with_its_process_group_and_reported() {
    use std::os::unix::process::CommandExt;
    // The shell starts a grandchild in the same group; both must go.
    let mut child = std::process::Command::new("sh")
        .args(["-c", "sleep 600 & echo $! ; wait"])
        .process_group(0)
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    use std::io::BufRead;
    std::io::BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let grandchild: u32 = line.trim().parse().unwrap();
    assert_eq!(
        wait_within(&mut child, Duration::from_millis(200), Kill::Group),
        None
    );
    // The grandchild is gone (reaped by init, or a zombie at most). A SIGKILL
    // is delivered at once but acted on when the process next runs, so on a
    // loaded machine it can still be seen running ("R") for a moment: wait
    // for it to die, for up to 10 s, rather than read its state once.
    let read_state =
        || std::fs::read_to_string(format!("/proc/{grandchild}/stat")).unwrap_or_default();
    let is_gone = |state: &str| state.is_empty() || state.split(' ').nth(2) == Some("Z");
    let until = std::time::Instant::now() + Duration::from_secs(10);
    let mut state = read_state();
    while !is_gone(&state) && std::time::Instant::now() < until {
        std::thread::sleep(Duration::from_millis(10));
        state = read_state();
    }
    let gone = is_gone(&state);
    assert!(
        gone,
        "the grandchild {grandchild} outlived its group's kill: {state}"
    );
    // A child that exits in time is waited for.
    let mut quick = std::process::Command::new("true").spawn().unwrap();
    let st = wait_within(&mut quick, Duration::from_secs(60), Kill::Child);
    assert!(st.is_some_and(|s| s.success()));
}
