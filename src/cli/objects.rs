//! `softgpu objects`: the bundles, code objects and kernels of a file, read
//! from metadata only.
//!
//! Nothing is loaded or run: the file's bytes go through the bounded readers
//! of [`crate::code_object`] (bundles, ELF, notes, MessagePack), and every
//! number printed is one the file states (the metadata note, or the kernel
//! descriptor when the note is missing or corrupt). The report is labelled
//! `metadata_only_no_isa_execution`.
//!
//! How it fails: a file that cannot be read, is not a format we know, or holds
//! a malformed bundle or code object gets `softgpu: file PATH: offset N: ...`
//! on stderr and exit code 2, and nothing on stdout. A corrupt metadata note is
//! not fatal: its code object is still listed from the symbol table and the
//! kernel descriptors, with the note's error in `metadata_error`.

use std::io::{self, BufWriter, Write};
use std::path::Path;

use serde::Serialize;

use super::{EXIT_ERROR, finish_output};
use crate::code_object::bundle::{self, Container, Source, Visit};
use crate::code_object::{self, CodeObject, KernelMetadata, kernel_name};

/// The fidelity label of every `objects` report.
pub const LABEL: &str = "metadata_only_no_isa_execution";

#[derive(Serialize)]
struct Report {
    label: &'static str,
    file: String,
    /// `host_elf`, `offload_bundle`, `compressed_offload_bundle` or `code_object`.
    container: &'static str,
    /// ELF `e_machine` of a host file.
    host_machine: Option<u16>,
    fatbin_sections: Vec<Span>,
    bundles: Vec<BundleOut>,
    code_objects: Vec<CodeObjectOut>,
}

#[derive(Serialize)]
struct Span {
    offset: u64,
    size: u64,
}

#[derive(Serialize)]
struct BundleOut {
    offset: u64,
    size: u64,
    compression: Option<CompressionOut>,
    entries: Vec<EntryOut>,
}

#[derive(Serialize)]
struct CompressionOut {
    method: String,
    version: u16,
    header_size: u64,
    total_size: Option<u64>,
    uncompressed_size: u64,
    hash: String,
}

#[derive(Serialize)]
struct EntryOut {
    id: String,
    kind: String,
    triple: String,
    target_id: Option<String>,
    /// From the start of the (decompressed) bundle.
    offset: u64,
    size: u64,
    /// In the file; null inside a compressed bundle.
    file_offset: Option<u64>,
}

#[derive(Serialize)]
struct CodeObjectOut {
    /// Target id: the bundle entry's, else the metadata's, else from `e_flags`.
    target: String,
    bundle: Option<usize>,
    entry_id: Option<String>,
    file_offset: Option<u64>,
    size: u64,
    code_object_version: u8,
    /// The target id `e_flags` state (null for an unknown processor).
    elf_target: Option<String>,
    /// For a generic processor (`gfx9-generic`, ...), the generic version
    /// `e_flags` state; null for a specific processor.
    generic_version: Option<u8>,
    /// `amdhsa.target` of the metadata note.
    metadata_target: Option<String>,
    /// NT_AMDGPU_METADATA notes in the code object (every one is read).
    metadata_notes: u64,
    /// The first of `metadata_errors` (null when every note was used).
    metadata_error: Option<String>,
    /// Every note that could not be used and every disagreement between
    /// notes, each as `note at offset N: ...` (offsets in the code object).
    metadata_errors: Vec<String>,
    kernels: Vec<KernelOut>,
}

#[derive(Serialize)]
struct KernelOut {
    symbol: String,
    name: String,
    kernarg_size: u64,
    kernarg_align: Option<u64>,
    group_segment_fixed_size: u64,
    private_segment_fixed_size: u64,
    max_flat_workgroup_size: Option<u64>,
    wavefront_size: Option<u64>,
    sgpr_count: Option<u64>,
    vgpr_count: Option<u64>,
    agpr_count: Option<u64>,
    reqd_workgroup_size: Option<[u64; 3]>,
    uses_dynamic_stack: Option<bool>,
    /// `metadata` or `kernel_descriptor` (no usable metadata for this kernel).
    source: &'static str,
}

pub(super) fn objects(path: &Path, json: bool) -> i32 {
    let report = match build(path) {
        Ok(r) => r,
        Err(msg) => {
            eprintln!("softgpu: file {}: {msg}", crate::input::show_path(path));
            return EXIT_ERROR;
        }
    };
    let stdout = io::stdout();
    let mut out = BufWriter::new(stdout.lock());
    let result = if json {
        serde_json::to_writer_pretty(&mut out, &report)
            .map_err(io::Error::from)
            .and_then(|()| writeln!(out))
    } else {
        write_table(&mut out, &report)
    };
    finish_output(result.and_then(|()| out.flush()), 0)
}

/// Reads the file and builds the report, or says what is wrong (`offset N: ...`).
///
/// The file is read with positioned reads, one bundle at a time
/// ([`bundle::scan_entries`]): a plain bundle is read, its code objects are
/// parsed and summarised, and it is dropped before the next is read; a
/// compressed bundle's payload is read and decompressed as a stream, one code
/// object at a time. Memory holds one plain bundle, or one compressed payload
/// and one code object, whatever the file's size. A bare code object is read
/// whole (it is at most [`code_object::MAX_FILE_SIZE`]).
fn build(path: &Path) -> Result<Report, String> {
    // One open that cannot block (a FIFO), of a regular file only (not a
    // device, a directory or a FIFO); every read after it is bounded.
    let (file, _) = crate::input::open_regular_file(path).map_err(|e| e.to_string())?;
    let src = bundle::FileSource::new(&file).map_err(|e| format!("cannot read: {e}"))?;
    let mut progress = Progress::new(src.size());
    let mut report = Report {
        label: LABEL,
        file: path.display().to_string(),
        container: "",
        host_machine: None,
        fatbin_sections: Vec::new(),
        bundles: Vec::new(),
        code_objects: Vec::new(),
    };
    // The code objects of the bundle at hand, by entry index: a compressed
    // bundle's entries come in the order of their bytes, the report lists
    // them in the order of the table.
    let mut pending: Vec<(usize, CodeObjectOut)> = Vec::new();
    let mut current: Option<bundle::BundleInfo> = None;
    let scanned = bundle::scan_entries(&src, &bundle::Limits::DEFAULT, |v| {
        match v {
            Visit::Bundle(b) => {
                flush_bundle(&mut pending, &mut report.code_objects);
                let index = report.bundles.len();
                report.bundles.push(bundle_out(b));
                progress.tick(b.offset.saturating_add(b.size), index + 1);
                current = Some(b.clone());
            }
            Visit::Entry { index, bytes } => {
                let Some(b) = current.as_ref() else {
                    return Err("an entry before its bundle".to_string());
                };
                let c = code_object_of_entry(report.bundles.len() - 1, b, index, bytes)?;
                pending.push((index, c));
            }
        }
        Ok(())
    });
    flush_bundle(&mut pending, &mut report.code_objects);
    progress.done();
    let container = match scanned {
        Ok(c) => c,
        Err(bundle::ScanError::Bundle(e)) => return Err(format!("offset {}: {e}", e.offset)),
        Err(bundle::ScanError::Visit(msg)) => return Err(msg),
    };
    report.container = match container {
        Container::CodeObject => "code_object",
        Container::Bundle => "offload_bundle",
        Container::CompressedBundle => "compressed_offload_bundle",
        Container::HostElf { .. } => "host_elf",
    };
    if let Container::HostElf { machine, sections } = &container {
        report.host_machine = Some(*machine);
        report.fatbin_sections = sections
            .iter()
            .map(|&(offset, size)| Span { offset, size })
            .collect();
    }
    if container == Container::CodeObject {
        let bytes = read_code_object(&file, src.size())?;
        let co = code_object::parse(&bytes)
            .map_err(|e| format!("offset {}: code object: {e}", e.file_offset().unwrap_or(0)))?;
        report
            .code_objects
            .push(code_object_out(&co, None, Some(0), bytes.len() as u64));
    }
    Ok(report)
}

fn read_code_object(file: &std::fs::File, len: u64) -> Result<Vec<u8>, String> {
    use std::os::unix::fs::FileExt;
    if len > code_object::MAX_FILE_SIZE {
        return Err(format!(
            "offset 0: code object of {len} bytes exceeds the {}-byte limit",
            code_object::MAX_FILE_SIZE
        ));
    }
    let mut bytes = vec![0u8; len as usize];
    file.read_exact_at(&mut bytes, 0)
        .map_err(|e| format!("cannot read: {e}"))?;
    Ok(bytes)
}

/// Progress on stderr while a large file is read, when stderr is a terminal:
/// at most one line a second, and only after the first second.
struct Progress {
    total: u64,
    start: std::time::Instant,
    last: Option<std::time::Instant>,
    on: bool,
}

impl Progress {
    fn new(total: u64) -> Self {
        use std::io::IsTerminal;
        Progress {
            total,
            start: std::time::Instant::now(),
            last: None,
            on: io::stderr().is_terminal(),
        }
    }

    fn tick(&mut self, at: u64, bundles: usize) {
        if !self.on {
            return;
        }
        let now = std::time::Instant::now();
        let due = match self.last {
            None => now.duration_since(self.start).as_secs() >= 1,
            Some(t) => now.duration_since(t).as_secs() >= 1,
        };
        if due {
            self.last = Some(now);
            eprint!(
                "\rsoftgpu: objects: {} of {} MiB, {bundles} bundle(s) read",
                at >> 20,
                self.total >> 20
            );
        }
    }

    fn done(&self) {
        if self.last.is_some() {
            eprintln!();
        }
    }
}

/// Appends the code objects of the bundle just read, in the order of its
/// entry table.
fn flush_bundle(pending: &mut Vec<(usize, CodeObjectOut)>, out: &mut Vec<CodeObjectOut>) {
    pending.sort_by_key(|(index, _)| *index);
    out.extend(pending.drain(..).map(|(_, c)| c));
}

/// Parses and summarises the code object of entry `index` of bundle `bi`.
fn code_object_of_entry(
    bi: usize,
    b: &bundle::BundleInfo,
    index: usize,
    bytes: &[u8],
) -> Result<CodeObjectOut, String> {
    let e = b
        .entries
        .get(index)
        .ok_or_else(|| format!("bundle {bi} has no entry {index}"))?;
    let file_offset = b.entry_file_offset(e);
    let co = code_object::parse(bytes).map_err(|err| {
        let inner = err.file_offset().unwrap_or(0);
        match file_offset {
            Some(at) => format!(
                "offset {}: code object of bundle entry {} (starting at offset {at}): {err}",
                at.saturating_add(inner),
                e.id
            ),
            None => format!(
                "offset {}: compressed bundle, code object of bundle entry {} (at offset \
                 {} of the decompressed bundle; offsets below count from it): {err}",
                b.offset, e.id, e.offset
            ),
        }
    })?;
    let mut c = code_object_out(&co, Some(e.id.clone()), file_offset, e.size);
    c.bundle = Some(bi);
    if let Some(t) = e.parsed_id().target_id {
        c.target = t.to_string();
    }
    Ok(c)
}

fn bundle_out(b: &bundle::BundleInfo) -> BundleOut {
    BundleOut {
        offset: b.offset,
        size: b.size,
        compression: b.compression.map(|c| CompressionOut {
            method: c.method.to_string(),
            version: c.version,
            header_size: c.header_size,
            total_size: c.total_size,
            uncompressed_size: c.uncompressed_size,
            hash: format!("{:#018x}", c.hash),
        }),
        entries: b
            .entries
            .iter()
            .map(|e| {
                let id = e.parsed_id();
                EntryOut {
                    id: e.id.clone(),
                    kind: id.kind.to_string(),
                    triple: id.triple.to_string(),
                    target_id: id.target_id.map(str::to_string),
                    offset: e.offset,
                    size: e.size,
                    file_offset: b.entry_file_offset(e),
                }
            })
            .collect(),
    }
}

fn code_object_out(
    co: &CodeObject,
    entry_id: Option<String>,
    file_offset: Option<u64>,
    size: u64,
) -> CodeObjectOut {
    let md = co.metadata();
    let metadata_target = md.and_then(|m| m.target.clone());
    let elf_target = co.target_id();
    let target = metadata_target
        .as_deref()
        .and_then(|t| bundle::split_triple_target(t).1)
        .map(str::to_string)
        .or_else(|| elf_target.clone())
        .unwrap_or_else(|| format!("unknown (EF_AMDGPU_MACH {:#x})", co.mach));
    let mut kernels: Vec<KernelOut> = Vec::new();
    if let Some(m) = md {
        kernels.extend(m.kernels.iter().map(|k| from_metadata(co, k)));
    }
    for sym in co.kernels() {
        if kernels.iter().any(|k| k.symbol == sym.name) {
            continue;
        }
        let kd = co.kernel_descriptor(sym).unwrap_or_default();
        kernels.push(KernelOut {
            symbol: sym.name.clone(),
            name: kernel_name(&sym.name),
            kernarg_size: u64::from(kd.kernarg_size),
            kernarg_align: None,
            group_segment_fixed_size: u64::from(kd.group_segment_fixed_size),
            private_segment_fixed_size: u64::from(kd.private_segment_fixed_size),
            max_flat_workgroup_size: None,
            wavefront_size: Some(u64::from(kd.wavefront_size())),
            sgpr_count: None,
            vgpr_count: None,
            agpr_count: None,
            reqd_workgroup_size: None,
            uses_dynamic_stack: Some(kd.uses_dynamic_stack()),
            source: "kernel_descriptor",
        });
    }
    CodeObjectOut {
        target,
        bundle: None,
        entry_id,
        file_offset,
        size,
        code_object_version: co.code_object_version(),
        elf_target,
        generic_version: co.generic_version(),
        metadata_target,
        metadata_notes: co.metadata_note_count(),
        metadata_error: co.metadata_error().map(|e| e.to_string()),
        metadata_errors: co
            .metadata_problems()
            .iter()
            .map(|p| format!("note at offset {}: {}", p.note_offset, p.error))
            .collect(),
        kernels,
    }
}

fn from_metadata(co: &CodeObject, k: &KernelMetadata) -> KernelOut {
    let kd = co.symbol(&k.symbol).and_then(|s| co.kernel_descriptor(s));
    KernelOut {
        symbol: k.symbol.clone(),
        name: kernel_name(&k.symbol),
        kernarg_size: k.kernarg_segment_size,
        kernarg_align: Some(k.kernarg_segment_align),
        group_segment_fixed_size: k.group_segment_fixed_size,
        private_segment_fixed_size: k.private_segment_fixed_size,
        max_flat_workgroup_size: k.max_flat_workgroup_size,
        wavefront_size: k
            .wavefront_size
            .or(kd.map(|d| u64::from(d.wavefront_size()))),
        sgpr_count: k.sgpr_count,
        vgpr_count: k.vgpr_count,
        agpr_count: k.agpr_count,
        reqd_workgroup_size: k.reqd_workgroup_size,
        uses_dynamic_stack: k.uses_dynamic_stack.or(kd.map(|d| d.uses_dynamic_stack())),
        source: "metadata",
    }
}

fn opt<T: ToString>(v: Option<T>) -> String {
    v.map_or_else(|| "-".to_string(), |v| v.to_string())
}

fn write_table(out: &mut impl Write, r: &Report) -> io::Result<()> {
    writeln!(out, "label: {}", r.label)?;
    let what = match r.container {
        "host_elf" => {
            let sections: Vec<String> = r
                .fatbin_sections
                .iter()
                .map(|s| format!("offset {}, {} bytes", s.offset, s.size))
                .collect();
            format!(
                "host ELF (machine {}), {} at {}",
                opt(r.host_machine),
                bundle::HIP_FATBIN_SECTION,
                sections.join("; ")
            )
        }
        "offload_bundle" => "clang offload bundle".to_string(),
        "compressed_offload_bundle" => "compressed clang offload bundle".to_string(),
        _ => "AMDGPU code object".to_string(),
    };
    writeln!(out, "file: {}: {what}", r.file)?;
    for (i, b) in r.bundles.iter().enumerate() {
        let comp = match &b.compression {
            Some(c) => format!(
                ", {} (compressed bundle v{}) of {} bytes uncompressed, hash {}",
                c.method, c.version, c.uncompressed_size, c.hash
            ),
            None => String::new(),
        };
        writeln!(
            out,
            "bundle {i} at offset {}: {} bytes{comp}, {} entries",
            b.offset,
            b.size,
            b.entries.len()
        )?;
        for (j, e) in b.entries.iter().enumerate() {
            writeln!(
                out,
                "  entry {j}: {}  offset {}  size {}",
                e.id, e.offset, e.size
            )?;
        }
    }
    for (i, c) in r.code_objects.iter().enumerate() {
        let place = match (c.bundle, &c.entry_id, c.file_offset) {
            (Some(b), Some(id), Some(o)) => format!("bundle {b} entry {id}, offset {o}"),
            (Some(b), Some(id), None) => format!("bundle {b} entry {id}, compressed"),
            (_, _, o) => format!("offset {}", opt(o)),
        };
        let generic = c
            .generic_version
            .map_or(String::new(), |v| format!(", generic version {v}"));
        writeln!(
            out,
            "code object {i}: {} ({place}, {} bytes), code object v{}{generic}, {} kernel(s)",
            c.target,
            c.size,
            c.code_object_version,
            c.kernels.len()
        )?;
        let from_kd = c
            .kernels
            .iter()
            .filter(|k| k.source == "kernel_descriptor")
            .count();
        if c.metadata_notes != 1 || !c.metadata_errors.is_empty() {
            writeln!(
                out,
                "  {} metadata note(s), {} unusable or in conflict; {} of {} kernel(s) from \
                 metadata",
                c.metadata_notes,
                c.metadata_errors.len(),
                c.kernels.len() - from_kd,
                c.kernels.len()
            )?;
        }
        for e in &c.metadata_errors {
            writeln!(out, "  metadata note unusable or in conflict: {e}")?;
        }
        if !c.metadata_errors.is_empty() && from_kd > 0 {
            writeln!(
                out,
                "  kernels without usable metadata are listed from their kernel descriptors"
            )?;
        } else if from_kd > 0 {
            writeln!(
                out,
                "  no metadata for some kernels (no note, or not listed in it): those are listed \
                 from kernel descriptors"
            )?;
        }
        if c.kernels.is_empty() {
            continue;
        }
        let head = [
            "KERNARG", "ALIGN", "LDS", "SCRATCH", "SGPR", "VGPR", "AGPR", "WAVE", "MAX_WG",
            "REQD_WG", "SOURCE", "SYMBOL", "NAME",
        ];
        let rows: Vec<[String; 13]> = c
            .kernels
            .iter()
            .map(|k| {
                [
                    k.kernarg_size.to_string(),
                    opt(k.kernarg_align),
                    k.group_segment_fixed_size.to_string(),
                    k.private_segment_fixed_size.to_string(),
                    opt(k.sgpr_count),
                    opt(k.vgpr_count),
                    opt(k.agpr_count),
                    opt(k.wavefront_size),
                    opt(k.max_flat_workgroup_size),
                    k.reqd_workgroup_size
                        .map_or_else(|| "-".to_string(), |[x, y, z]| format!("{x}x{y}x{z}")),
                    k.source.to_string(),
                    k.symbol.clone(),
                    k.name.clone(),
                ]
            })
            .collect();
        let mut widths = head.map(str::len);
        for row in &rows {
            for (w, cell) in widths.iter_mut().zip(row) {
                *w = (*w).max(cell.len());
            }
        }
        let line = |cells: &[&str]| {
            let mut s = String::from(" ");
            for (i, (cell, w)) in cells.iter().zip(widths).enumerate() {
                s.push(' ');
                if i + 1 == cells.len() {
                    s.push_str(cell);
                } else {
                    s.push_str(&format!("{cell:<w$}"));
                }
            }
            s
        };
        writeln!(out, "{}", line(&head))?;
        for row in &rows {
            let cells: Vec<&str> = row.iter().map(String::as_str).collect();
            writeln!(out, "{}", line(&cells))?;
        }
    }
    Ok(())
}
