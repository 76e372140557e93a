//! ROCr's own test suite, rocrtst (Debian's `libhsa-runtime64-tests` 7.2.4, one GoogleTest
//! program `rocrtst64` and its kernels per target), as `scripts/sid-chroot --rocm7 --realworld`
//! unpacks it in the ROCm 7 chroot, and what each of its tests must do under the shim.
//!
//! Each enabled test runs in its own process (`--gtest_filter=Suite.Name`). A test must pass,
//! or fail only on the assertions its [`Case`] lists: each checks a value one of rocrtst's
//! kernels would have computed (kernels never run under SoftGPU, so the memory they would write
//! keeps what the host put there). A test that fails anywhere else, or on fewer or more of those
//! assertions (one that starts passing too), is a failure of the suite, and so is a hang.

/// The program and its kernel directory (`ROCRTST_KERNELS_PATH`, one `<gfx>/` per target), as
/// the program sees them in the chroot.
pub const BINARY: &str = "/opt/softgpu-unpacked/libhsa-runtime64-tests/usr/libexec/rocm/libhsa-runtime64-tests/rocrtst64";
pub const KERNELS: &str =
    "/opt/softgpu-unpacked/libhsa-runtime64-tests/usr/libexec/rocm/libhsa-runtime64-tests";
/// `libamd_smi.so.26 -> libamd_smi.so.27` (see `UNPACKED` in `scripts/sid-chroot`).
pub const SONAMES: &str = "/opt/softgpu-unpacked/libhsa-runtime64-tests/sonames";

/// The virtual GPUs the suite runs on, one process per test and target.
pub const TARGETS: [&str; 3] = ["gfx90a", "gfx942", "gfx1100"];

/// A gtest assertion as rocrtst prints it when it fails: where (the path after
/// `./rocrtst/suites/`, and the line) and gtest's message on one line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Assertion {
    pub at: &'static str,
    pub message: &'static str,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Expect {
    Pass,
    /// Fails on exactly these assertions, each a check of what a kernel would have computed;
    /// `kernel` says what that is.
    KernelValues {
        kernel: &'static str,
        assertions: &'static [Assertion],
    },
}

#[derive(Clone, Copy, Debug)]
pub struct Case {
    /// `Suite.Name`.
    pub name: &'static str,
    pub expect: Expect,
    /// Seconds before the test counts as hung.
    pub deadline_s: u64,
    /// The reason codes of the packets the test submits invalid on purpose (rocrtstNeg's queue
    /// validation): the shim rejects them, logs a warning naming them, and nothing else.
    pub rejects: &'static [&'static str],
    /// The shim's defect that makes the test fail today, or some of the time (the suite expects
    /// the end state: a pass).
    pub defect: Option<&'static str>,
    /// The defect shows in some runs only (a race in the program): the README's cell says so
    /// instead of what one run did, so that the table stays the same from run to run; the
    /// target's test still fails the run where it shows.
    pub intermittent: bool,
    /// Run under this address-space limit (`prlimit --as`, bytes): see [`AS_LIMIT`].
    pub as_limit: Option<u64>,
}

/// The address-space limit of the tests that allocate as much as a pool says is available.
/// The shim reports a virtual GPU's memory as at most the host's total memory (MemTotal) and backs
/// every allocation with zeroed host memory, so rocrtstFunc.Memory_Available (half of what is
/// available, then more) drove rocrtst64 to 21 GB resident and the kernel's OOM killer ended it
/// on a 23 GB machine shared with other work; under this limit its allocation fails instead.
pub const AS_LIMIT: u64 = 4 << 30;

const fn pass(name: &'static str) -> Case {
    Case {
        name,
        expect: Expect::Pass,
        deadline_s: 60,
        rejects: &[],
        defect: None,
        intermittent: false,
        as_limit: None,
    }
}

const fn kernel(
    name: &'static str,
    kernel: &'static str,
    assertions: &'static [Assertion],
) -> Case {
    Case {
        expect: Expect::KernelValues { kernel, assertions },
        ..pass(name)
    }
}

const fn pending(name: &'static str, why: &'static str) -> Case {
    Case {
        defect: Some(why),
        ..pass(name)
    }
}

const fn rejects(name: &'static str, reasons: &'static [&'static str]) -> Case {
    Case {
        rejects: reasons,
        ..pass(name)
    }
}

const fn intermittent(name: &'static str, why: &'static str) -> Case {
    Case {
        intermittent: true,
        ..pending(name, why)
    }
}

const fn limited(mut c: Case) -> Case {
    c.as_limit = Some(AS_LIMIT);
    c
}

const fn deadline(mut c: Case, s: u64) -> Case {
    c.deadline_s = s;
    c
}

const fn at(at: &'static str, message: &'static str) -> Assertion {
    Assertion { at, message }
}

/// vector_copy's output (`dst[i] = src[i]`), which the kernel writes.
const VECTOR_COPY: &str = "what the vector_copy kernel copied";
/// What memory_atomics_kernels' atomic kernels leave in system memory (the values after the
/// atomic operation, and the old values each returns).
const ATOMICS: &str = "what the atomic kernels left in system memory";

/// An atomic test: it fails where it compares the system-memory values with what the kernel's
/// atomic operation would have made of them.
const fn atomic(name: &'static str, assertions: &'static [Assertion]) -> Case {
    kernel(name, ATOMICS, assertions)
}

/// Every enabled test of rocrtst64 7.2.4, in `--gtest_list_tests` order.
pub const CASES: &[Case] = &[
    kernel(
        "rocrtst.Test_Example",
        VECTOR_COPY,
        &[at(
            "test_common/test_case_template.cc:346",
            "Value of: VerifyResult(reinterpret_cast<uint32_t *>(dst_buffer_), \
             kNumBufferElements) Actual: false Expected: true",
        )],
    ),
    kernel(
        "rocrtstFunc.MemoryAccessTests",
        "what the GPU kernel read from system memory and wrote back (gpuResult)",
        &[at(
            "functional/memory_access.cc:335",
            "Expected equality of these values: gpuResult[i] Which is: 0 dup_sys_data[i] \
             Which is: 1",
        )],
    ),
    kernel(
        "rocrtstFunc.MemoryAccessCoherent",
        "what vector_copy copied between the two device buffers (host to device by \
         hsa_amd_memory_async_copy, the kernel, device to host by a copy that waits for it)",
        &[at(
            "functional/memory_access.cc:696",
            "Expected equality of these values: host_buffer_src[i] Which is: 1 \
             host_buffer_dst[i] Which is: 0",
        )],
    ),
    kernel(
        "rocrtstFunc.GroupMemoryAllocationTest",
        "what the kernel copied through its dynamically sized group memory (OutData)",
        &[at(
            "functional/memory_allocation.cc:333",
            "Expected equality of these values: OutData[i] Which is: 0 Indata[i] Which is: 1",
        )],
    ),
    pass("rocrtstFunc.MemoryAllocateAndFreeTest"),
    pending(
        "rocrtstFunc.MemoryAllocateContiguousTest",
        "hsa_amd_portable_export_dmabuf is not implemented (HSA_STATUS_ERROR at \
         memory_allocation.cc:526)",
    ),
    pass("rocrtstFunc.Concurrent_Init_Test"),
    pass("rocrtstFunc.Concurrent_Init_Shutdown_Test"),
    pass("rocrtstFunc.Concurrent_Shutdown"),
    pass("rocrtstFunc.Reference_Count"),
    pending(
        "rocrtstFunc.Max_Reference_Count",
        "hangs: hsa_init until the reference count overflows (2^31 init/shutdown pairs) does \
         not end in time",
    ),
    pass("rocrtstFunc.Signal_Destroy_Concurrently"),
    pass("rocrtstFunc.Signal_Max_Consumer"),
    pass("rocrtstFunc.Signal_Create_Concurrently"),
    pending(
        "rocrtstFunc.IPC",
        "hsa_amd_ipc_signal_create (and hsa_amd_ipc_memory_create) are not implemented \
         (HSA_STATUS_ERROR at ipc.cc:471)",
    ),
    limited(pending(
        "rocrtstFunc.Memory_Max_Mem",
        "it probes the largest block each pool allocates: the pools report the host's \
         MemTotal as their size while the process gets a fraction of it (under the suite's \
         address-space limit; memory_basic.cc:278 wants 60 %), and every probe zero-fills \
         gigabytes of host memory (20 s here under the limit; over 60 s under 8 GiB)",
    )),
    limited(pending(
        "rocrtstFunc.Memory_Available",
        "without a limit, HSA_AMD_AGENT_INFO_MEMORY_AVAIL does not go down by what the process \
         allocated (memory_basic.cc:399) and the allocations fill the host's memory; under the \
         suite's address-space limit the allocation of half the reported available memory \
         fails (HSA_STATUS_ERROR_OUT_OF_RESOURCES, memory_basic.cc:363): the pools report \
         more than the process can allocate",
    )),
    atomic(
        "rocrtstFunc.Memory_Atomic_Add_Test",
        &[at(
            "functional/memory_atomics.cc:486",
            "Expected equality of these values: refSysdata[i] Which is: 6 expecteddata[i] \
             Which is: 11",
        )],
    ),
    atomic(
        "rocrtstFunc.Memory_Atomic_Sub_Test",
        &[at(
            "functional/memory_atomics.cc:486",
            "Expected equality of these values: refSysdata[i] Which is: 6 expecteddata[i] \
             Which is: 1",
        )],
    ),
    atomic(
        "rocrtstFunc.Memory_Atomic_And_Test",
        &[at(
            "functional/memory_atomics.cc:486",
            "Expected equality of these values: refSysdata[i] Which is: 6 expecteddata[i] \
             Which is: 4",
        )],
    ),
    atomic(
        "rocrtstFunc.Memory_Atomic_Or_Test",
        &[at(
            "functional/memory_atomics.cc:486",
            "Expected equality of these values: refSysdata[i] Which is: 6 expecteddata[i] \
             Which is: 7",
        )],
    ),
    atomic(
        "rocrtstFunc.Memory_Atomic_Xor_Test",
        &[at(
            "functional/memory_atomics.cc:486",
            "Expected equality of these values: refSysdata[i] Which is: 6 expecteddata[i] \
             Which is: 3",
        )],
    ),
    atomic(
        "rocrtstFunc.Memory_Atomic_Min_Test",
        &[at(
            "functional/memory_atomics.cc:486",
            "Expected equality of these values: refSysdata[i] Which is: 6 expecteddata[i] \
             Which is: 5",
        )],
    ),
    atomic(
        "rocrtstFunc.Memory_Atomic_Max_Test",
        &[at(
            "functional/memory_atomics.cc:488",
            "Expected equality of these values: oldValues[i] Which is: 0 oldrefdata[i] \
             Which is: 6",
        )],
    ),
    atomic(
        "rocrtstFunc.Memory_Atomic_Inc_Test",
        &[at(
            "functional/memory_atomics.cc:486",
            "Expected equality of these values: refSysdata[i] Which is: 6 expecteddata[i] \
             Which is: 10",
        )],
    ),
    atomic(
        "rocrtstFunc.Memory_Atomic_Dec_Test",
        &[at(
            "functional/memory_atomics.cc:486",
            "Expected equality of these values: refSysdata[i] Which is: 6 expecteddata[i] \
             Which is: 2",
        )],
    ),
    atomic(
        "rocrtstFunc.Memory_Atomic_Xchg_Test",
        &[at(
            "functional/memory_atomics.cc:486",
            "Expected equality of these values: refSysdata[i] Which is: 6 expecteddata[i] \
             Which is: 5",
        )],
    ),
    pass("rocrtstFunc.Memory_Alignment_Test"),
    pending(
        "rocrtstFunc.Deallocation_Notifier_Test",
        "hsa_amd_register_deallocation_callback is not implemented (HSA_STATUS_ERROR where \
         rocrtst expects HSA_STATUS_ERROR_INVALID_ARGUMENT, deallocation_notifier.cc:175)",
    ),
    pending(
        "rocrtstFunc.AgentPropertiesTests",
        "hsa_agent_get_info answers HSA_STATUS_ERROR_INVALID_ARGUMENT for attribute 0xa118 \
         (agent_props.cc:170)",
    ),
    pass("rocrtstFunc.SvmMemory_Basic_Test"),
    pass("rocrtstFunc.VirtMemory_Basic_Test"),
    pass("rocrtstFunc.VirtMemory_Access_Test"),
    pass("rocrtstFunc.VirtMemory_Interprocess_Test"),
    pass("rocrtstNeg.Memory_Negative_Tests"),
    rejects(
        "rocrtstNeg.Queue_Validation_InvalidDimension",
        &["dimensions_out_of_range", "setup_reserved_bits_set"],
    ),
    rejects(
        "rocrtstNeg.Queue_Validation_InvalidGroupMemory",
        &["group_segment_size_exceeds_limit"],
    ),
    rejects(
        "rocrtstNeg.Queue_Validation_InvalidKernelObject",
        &["kernel_object_null"],
    ),
    rejects(
        "rocrtstNeg.Queue_Validation_InvalidPacket",
        &["unknown_packet_type"],
    ),
    pass("rocrtstStress.Memory_Concurrent_Allocate_Test"),
    deadline(pass("rocrtstStress.Memory_Concurrent_Free_Test"), 150),
    pass("rocrtstStress.Memory_Concurrent_Pool_Info_Test"),
    pass("rocrtstStress.Queue_Add_Write_Index_ConcurrentTest"),
    pending(
        "rocrtstStress.Queue_CAS_Write_Index_ConcurrentTest",
        "hangs: concurrent hsa_queue_cas_write_index_* never reach the end",
    ),
    intermittent(
        "rocrtstStress.Queue_LoadStore_Write_Index_ConcurrentTest",
        "some of the time: two threads store 0 and UINT64_MAX into the write index, and when \
         UINT64_MAX is stored last, hsa_queue_destroy warns of 18446744073709551615 packets \
         never processed and the capture records them as pending (the write index minus the \
         packets processed, although no packet was ever written)",
    ),
    pending(
        "rocrtstPerf.Memory_Async_Copy",
        "finds no GPU in a CPU's NUMA node (\"No GPU found in same NUMA node as a CPU\", \
         HSA_STATUS_ERROR where it expects HSA_STATUS_INFO_BREAK, memory_async_copy.cc:917), \
         then no CPU pool (:972)",
    ),
    pending(
        "rocrtstPerf.Memory_Async_Copy_On_Engine",
        "as Memory_Async_Copy (memory_async_copy.cc:917, :972)",
    ),
    pass("rocrtstPerf.ENQUEUE_LATENCY"),
    pass("rocrtstPerf.AQL_Dispatch_Time_Single_SpinWait"),
    pass("rocrtstPerf.AQL_Dispatch_Time_Single_Interrupt"),
    pass("rocrtstPerf.AQL_Dispatch_Time_Multi_SpinWait"),
    pass("rocrtstPerf.AQL_Dispatch_Time_Multi_Interrupt"),
];

/// The case of `name`.
pub fn case(name: &str) -> Option<&'static Case> {
    CASES.iter().find(|c| c.name == name)
}

/// The enabled tests of `--gtest_list_tests` output (`Suite.` lines, then indented names;
/// `DISABLED_` ones are not run by gtest unless asked).
pub fn listed(out: &str) -> Vec<String> {
    let mut suite = String::new();
    let mut tests = Vec::new();
    for line in out.lines() {
        if let Some(name) = line.strip_prefix("  ") {
            let name = name.split_whitespace().next().unwrap_or("");
            if !suite.is_empty() && !name.is_empty() && !name.starts_with("DISABLED_") {
                tests.push(format!("{suite}{name}"));
            }
        } else if line.ends_with('.') && !line.contains(' ') {
            suite = line.to_string();
        } else {
            suite.clear();
        }
    }
    tests
}

/// A failure block of gtest's (`./rocrtst/suites/<at>: Failure` and the message up to the first
/// blank line) as (at, message on one line).
pub fn assertion(block: &str) -> (String, String) {
    let mut lines = block.lines();
    let head = lines.next().unwrap_or("").trim_end();
    let at = head
        .strip_suffix(": Failure")
        .unwrap_or(head)
        .trim_start_matches("./")
        .trim_start_matches("rocrtst/suites/")
        .to_string();
    let message = lines
        .take_while(|l| !l.trim().is_empty())
        .map(str::trim)
        .collect::<Vec<_>>()
        .join(" ");
    (at, message)
}

/// rocrtst's own notes that it skipped (part of) a test and why: the lines it prints with
/// "Skipping"/"skipping" (it reports such a test as passed).
pub fn skip_notes(stdout: &str) -> Vec<String> {
    let mut notes: Vec<String> = Vec::new();
    for line in stdout.lines() {
        let l = line.trim().trim_matches('*').trim();
        if (l.contains("Skipping") || l.contains("skipping")) && !notes.iter().any(|n| n == l) {
            notes.push(l.to_string());
        }
    }
    notes
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failure_block_reads_as_its_place_and_message() {
        let block = "./rocrtst/suites/functional/memory_atomics.cc:488: Failure\n\
                     Expected equality of these values:\n  oldValues[i]\n    Which is: 0\n\
                     \x20 oldrefdata[i]\n    Which is: 6\n\n\n\t#### TEST CLEAN UP ####\n";
        assert_eq!(
            assertion(block),
            (
                "functional/memory_atomics.cc:488".to_string(),
                "Expected equality of these values: oldValues[i] Which is: 0 oldrefdata[i] \
                 Which is: 6"
                    .to_string()
            )
        );
    }

    #[test]
    fn the_listing_leaves_out_disabled_tests() {
        let out =
            "Failed to open file.\nrocrtst.\n  Test_Example\nrocrtstNeg.\n  A\n  DISABLED_B\n";
        assert_eq!(listed(out), vec!["rocrtst.Test_Example", "rocrtstNeg.A"]);
    }
}
