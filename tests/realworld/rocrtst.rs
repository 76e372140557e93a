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
    /// Fails on exactly these assertions for a reason that is not a kernel's value: a limit of
    /// the virtual runtime or of this machine, said in `why` (the README shows it as a failure).
    Fails {
        why: &'static str,
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
    /// Not run on these targets, and why (the README's cell says "not run").
    pub not_run: (&'static [&'static str], &'static str),
    /// A warning of the shim's that the test provokes on purpose (a text it contains), which is
    /// then no problem; empty: none.
    pub logs: &'static str,
}

const fn pass(name: &'static str) -> Case {
    Case {
        name,
        expect: Expect::Pass,
        deadline_s: 60,
        rejects: &[],
        not_run: (&[], ""),
        logs: "",
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

const fn rejects(name: &'static str, reasons: &'static [&'static str]) -> Case {
    Case {
        rejects: reasons,
        ..pass(name)
    }
}

const fn fails(name: &'static str, why: &'static str, assertions: &'static [Assertion]) -> Case {
    Case {
        expect: Expect::Fails { why, assertions },
        ..pass(name)
    }
}

const fn not_run_on(mut c: Case, targets: &'static [&'static str], why: &'static str) -> Case {
    c.not_run = (targets, why);
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

/// MemoryAllocateContiguousTest's failure: the DMA-buf export, refused.
const CONTIGUOUS: &[Assertion] = &[at(
    "functional/memory_allocation.cc:526",
    "Expected equality of these values: HSA_STATUS_SUCCESS Which is: 0 \
     (hsa_amd_portable_export_dmabuf(memoryPtr, alloc_size, &dmabuf, &offset)) Which is: 4096",
)];
/// The async-copy tests' failure: no GPU found by NUMA node, then no CPU pool.
const ASYNC_COPY: &[Assertion] = &[
    at(
        "performance/memory_async_copy.cc:917",
        "Expected equality of these values: HSA_STATUS_INFO_BREAK Which is: 1 err Which is: 4096",
    ),
    at(
        "performance/memory_async_copy.cc:972",
        "Expected: (cpu_pool_indx) != (-1), actual: -1 vs -1",
    ),
];

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
    Case {
        // The fail-closed export's own log line.
        logs: "hsa_amd_portable_export_dmabuf is not implemented",
        ..fails(
            "rocrtstFunc.MemoryAllocateContiguousTest",
            "it exports the allocation as a DMA-buf (hsa_amd_portable_export_dmabuf), which the \
         virtual runtime refuses: no kernel driver stands behind a virtual GPU to make one",
            CONTIGUOUS,
        )
    },
    pass("rocrtstFunc.Concurrent_Init_Test"),
    pass("rocrtstFunc.Concurrent_Init_Shutdown_Test"),
    pass("rocrtstFunc.Concurrent_Shutdown"),
    pass("rocrtstFunc.Reference_Count"),
    not_run_on(
        deadline(pass("rocrtstFunc.Max_Reference_Count"), 900),
        &["gfx942", "gfx1100"],
        "2^31 hsa_init/hsa_shut_down pairs (minutes) touch nothing of the target: run on gfx90a \
         only",
    ),
    pass("rocrtstFunc.Signal_Destroy_Concurrently"),
    pass("rocrtstFunc.Signal_Max_Consumer"),
    pass("rocrtstFunc.Signal_Create_Concurrently"),
    not_run_on(
        pass("rocrtstFunc.IPC"),
        &TARGETS,
        "its IPC memory part works between processes (our rocrtst_defects test checks it), but \
         it then shares a signal (hsa_amd_ipc_signal_create), which fails closed: the virtual \
         runtime's signals live in one process's memory; its forked child then waits for its \
         parent forever",
    ),
    pass("rocrtstFunc.Memory_Max_Mem"),
    pass("rocrtstFunc.Memory_Available"),
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
    Case {
        // It frees a pointer twice to see HSA_STATUS_ERROR_INVALID_ALLOCATION.
        logs: "which is not a live SoftGPU allocation",
        ..pass("rocrtstFunc.Deallocation_Notifier_Test")
    },
    pass("rocrtstFunc.AgentPropertiesTests"),
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
    not_run_on(
        pass("rocrtstStress.Queue_CAS_Write_Index_ConcurrentTest"),
        &TARGETS,
        "its 4 threads take turns on the write index 2^20 times each, every turn a context \
         switch on a 2-core machine: a plain C version of the same loop, without ROCr or the \
         shim, made 256 turns in 8.6 s here (about 38 hours for the test)",
    ),
    pass("rocrtstStress.Queue_LoadStore_Write_Index_ConcurrentTest"),
    fails(
        "rocrtstPerf.Memory_Async_Copy",
        "rocrtst pairs a CPU with a GPU by NUMA node through hwloc's PCI topology, and a \
         virtual GPU has no PCI device (it never reaches a copy)",
        ASYNC_COPY,
    ),
    fails(
        "rocrtstPerf.Memory_Async_Copy_On_Engine",
        "as Memory_Async_Copy",
        ASYNC_COPY,
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
