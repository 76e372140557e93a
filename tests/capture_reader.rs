//! The capture reader: cut files, corrupt files, foreign files, and forward
//! compatibility with frame kinds it does not know.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use softgpu_hsa::aql::{PacketRecord, ReasonSet, Status};
use softgpu_hsa::capture::format::{self, push_frame};
use softgpu_hsa::capture::{
    AgentDesc, AgentKind, CaptureErrorKind, CaptureHeader, CaptureWriter, KernargClass, read_bytes,
    read_file,
};

fn header() -> CaptureHeader {
    CaptureHeader {
        pid: 31337,
        start_unix_ns: 5,
        mode: "virtual".into(),
        agents: vec![AgentDesc {
            index: 1,
            kind: AgentKind::Gpu,
            name: "gfx90a".into(),
            target: Some("gfx90a".into()),
        }],
    }
}

fn rec(queue_id: u64, i: u64) -> PacketRecord {
    let mut raw = [0u8; 64];
    raw[0] = if i % 2 == 0 { 2 } else { 3 };
    raw[40] = i as u8; // kernarg (dispatches)
    PacketRecord {
        queue_id,
        packet_index: i,
        raw,
        status: Status::Validated,
        reasons: ReasonSet(0),
        observed_ns: i,
        done_ns: i + 1,
        thread: 1,
    }
}

/// A 1.1 capture made by the 1.1 writer (`tests/fixtures/README.md`): the
/// byte-level tests of the frame layer run on it, and it keeps the 1.x
/// reading path tested now that the writer writes 2.0.
fn fixture(name: &str) -> Vec<u8> {
    std::fs::read(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures")
            .join(name),
    )
    .unwrap()
}

/// `small_capture` as the 1.1 writer wrote it.
fn small_capture(_name: &str) -> Vec<u8> {
    fixture("capture-1.1-small.sgcap")
}

/// A small complete 2.0 capture made by today's writer (a 4-slot ring): 2
/// queues, one code object, 6 records.
fn small_capture_v2(name: &str) -> Vec<u8> {
    small_capture_ring(name, 4)
}

/// `small_capture_v2` with a ring of `capacity` slots.
fn small_capture_ring(name: &str, capacity: usize) -> Vec<u8> {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("capture_reader");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("{name}.sgcap"));
    let opts = softgpu_hsa::capture::WriterOptions {
        ring_capacity: capacity,
        ..Default::default()
    };
    let w = CaptureWriter::create_with(&path, header(), Box::new(|_| KernargClass::Softgpu), opts)
        .unwrap();
    let mut a = w.register_queue(10, 1, 64, 0);
    let mut b = w.register_queue(11, 1, 64, 0);
    w.add_code_object(vec![(0x100, "k.kd".into())]);
    for i in 0..6 {
        if i % 2 == 0 {
            a.push(&rec(10, i));
        } else {
            b.push(&rec(11, i));
        }
    }
    w.finish(0, 9).unwrap();
    let bytes = std::fs::read(&path).unwrap();
    let _ = std::fs::remove_file(&path);
    bytes
}

/// `(offset, kind, total length)` of every frame.
fn frames(data: &[u8]) -> Vec<(usize, u16, usize)> {
    let mut out = Vec::new();
    let mut pos = format::PREAMBLE_LEN;
    while pos < data.len() {
        let kind = u16::from_le_bytes([data[pos], data[pos + 1]]);
        let len = u32::from_le_bytes(data[pos + 2..pos + 6].try_into().unwrap()) as usize;
        let total = format::FRAME_HEAD_LEN + len + format::FRAME_CRC_LEN;
        out.push((pos, kind, total));
        pos += total;
    }
    out
}

#[test]
fn a_capture_cut_at_every_byte_recovers_exactly_its_complete_records() {
    let data = small_capture("cut_everywhere");
    let fr = frames(&data);
    let header_end = fr[0].0 + fr[0].2;
    let full = read_bytes(&data).unwrap();
    assert!(full.complete);
    assert_eq!(full.records.len(), 6);
    for cut in 0..data.len() {
        let part = &data[..cut];
        match read_bytes(part) {
            Err(e) => {
                assert!(cut < header_end, "cut {cut}: unexpected error {e}");
                assert!(
                    matches!(e.kind, CaptureErrorKind::EndsBeforeHeader { .. }),
                    "cut {cut}: {e}"
                );
                assert!(e.to_string().contains("offset"), "{e}");
            }
            Ok(cap) => {
                assert!(cut >= header_end, "cut {cut} before the header end read Ok");
                assert!(!cap.complete, "cut {cut}");
                assert!(cap.trailer.is_none());
                let expect: Vec<_> = full
                    .records
                    .iter()
                    .filter(|r| r.offset as usize + format::PACKET_FRAME_LEN <= cut)
                    .copied()
                    .collect();
                assert_eq!(cap.records, expect, "cut {cut}");
                // The cut is reported at the start of the frame it falls in.
                let at_boundary = fr.iter().any(|&(o, _, t)| o + t == cut);
                if at_boundary {
                    assert_eq!(cap.truncated_at, None, "cut {cut}");
                } else {
                    let start = fr
                        .iter()
                        .find(|&&(o, _, t)| o < cut && cut < o + t)
                        .unwrap()
                        .0;
                    assert_eq!(cap.truncated_at, Some(start as u64), "cut {cut}");
                }
            }
        }
    }
}

#[test]
fn a_flipped_byte_in_a_middle_frame_is_a_checksum_error_at_that_frame() {
    let data = small_capture("flip");
    let fr = frames(&data);
    let &(off, kind, _) = fr
        .iter()
        .filter(|f| f.1 == format::kind::PACKET)
        .nth(2)
        .unwrap();
    let mut bad = data.clone();
    bad[off + 40] ^= 0x10;
    let e = read_bytes(&bad).unwrap_err();
    assert_eq!(e.offset(), Some(off as u64));
    assert!(
        matches!(e.kind, CaptureErrorKind::ChecksumMismatch { kind: k, .. } if k == kind),
        "{e}"
    );
    assert!(e.to_string().contains(&format!("offset {off}")), "{e}");
}

#[test]
fn a_torn_last_frame_reads_as_a_cut_capture() {
    let data = small_capture("torn");
    let fr = frames(&data);
    let &(off, kind, _) = fr.last().unwrap();
    assert_eq!(kind, format::kind::TRAILER);
    let mut torn = data.clone();
    for b in &mut torn[off + 6..] {
        *b = 0; // what a crash can leave: the length reached disk, the data did not
    }
    let cap = read_bytes(&torn).unwrap();
    assert!(!cap.complete);
    assert_eq!(cap.truncated_at, Some(off as u64));
    assert_eq!(cap.records.len(), 6);
}

#[test]
fn a_file_that_is_not_a_capture_is_rejected_at_offset_0() {
    for junk in [
        &b"hello, world\n"[..],
        &b"\x7fELF\x02\x01\x01\0\0\0\0\0\0\0\0\0"[..],
        &b"SGCAQ"[..],
    ] {
        let e = read_bytes(junk).unwrap_err();
        assert_eq!(e.kind, CaptureErrorKind::NotACapture { offset: 0 });
        assert!(
            e.to_string().contains("offset 0: not a SoftGPU capture"),
            "{e}"
        );
    }
    let e = read_bytes(b"").unwrap_err();
    assert!(matches!(e.kind, CaptureErrorKind::EndsBeforeHeader { .. }));
}

#[test]
fn read_file_names_the_file_and_the_offset() {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("capture_reader");
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join("not-a-capture.txt");
    std::fs::write(&p, "just text").unwrap();
    let e = read_file(&p).unwrap_err();
    let msg = e.to_string();
    assert!(
        msg.starts_with(&format!("file {}: offset 0: ", p.display())),
        "{msg}"
    );
    let missing = dir.join("does-not-exist.sgcap");
    let e = read_file(&missing).unwrap_err();
    assert!(matches!(e.kind, CaptureErrorKind::Io { .. }));
    assert!(e.to_string().contains("does-not-exist.sgcap"), "{e}");
}

#[test]
fn an_unsupported_major_version_is_an_error_and_a_newer_minor_is_read() {
    let data = small_capture("versions");
    let mut v3 = data.clone();
    v3[8] = 3;
    let e = read_bytes(&v3).unwrap_err();
    assert!(
        matches!(
            e.kind,
            CaptureErrorKind::UnsupportedVersion { major: 3, .. }
        ),
        "{e}"
    );
    assert!(e.to_string().contains("major versions 1 to 2"), "{e}");
    let mut minor = data.clone();
    minor[10] = 9;
    let cap = read_bytes(&minor).unwrap();
    assert_eq!(cap.version, (1, 9));
    assert!(cap.complete);
}

#[test]
fn an_impossible_frame_length_is_an_error_at_that_frame() {
    let data = small_capture("length");
    let fr = frames(&data);
    let off = fr[3].0;
    let mut bad = data.clone();
    bad[off + 2..off + 6].copy_from_slice(&u32::MAX.to_le_bytes());
    let e = read_bytes(&bad).unwrap_err();
    assert!(
        matches!(e.kind, CaptureErrorKind::FrameTooLong { offset, .. } if offset == off as u64),
        "{e}"
    );
}

/// `data` with `frame` spliced in after the header frame.
fn with_frame_after_header(data: &[u8], kind: u16, payload: &[u8]) -> Vec<u8> {
    let fr = frames(data);
    let at = fr[0].0 + fr[0].2;
    let mut out = data[..at].to_vec();
    push_frame(&mut out, kind, payload);
    out.extend_from_slice(&data[at..]);
    out
}

#[test]
fn unknown_frame_kinds_are_skipped_unless_critical() {
    let data = small_capture("unknown_kinds");
    let base = read_bytes(&data).unwrap();
    let extra = with_frame_after_header(&data, 0x0077, b"from a newer writer");
    let cap = read_bytes(&extra).unwrap();
    assert_eq!(cap.skipped_frames, 1);
    assert!(cap.complete);
    assert_eq!(cap.records.len(), base.records.len());
    assert_eq!(
        cap.records[0].packet_record(),
        base.records[0].packet_record()
    );

    let critical = with_frame_after_header(&data, 0x8077, b"must understand");
    let e = read_bytes(&critical).unwrap_err();
    assert!(
        matches!(
            e.kind,
            CaptureErrorKind::UnknownCriticalFrame { kind: 0x8077, .. }
        ),
        "{e}"
    );
}

#[test]
fn a_trailer_that_disagrees_with_the_records_is_an_error() {
    let data = small_capture("mismatch");
    let fr = frames(&data);
    let &(off, _, total) = fr.iter().find(|f| f.1 == format::kind::PACKET).unwrap();
    let mut missing = data[..off].to_vec();
    missing.extend_from_slice(&data[off + total..]);
    let e = read_bytes(&missing).unwrap_err();
    assert!(
        matches!(
            e.kind,
            CaptureErrorKind::TrailerMismatch {
                field: "records",
                trailer: 6,
                counted: 5,
                ..
            }
        ),
        "{e}"
    );
}

#[test]
fn bytes_after_the_trailer_are_an_error() {
    let mut data = small_capture("after_trailer");
    let len = data.len() as u64;
    push_frame(&mut data, 0x0077, b"late");
    let e = read_bytes(&data).unwrap_err();
    assert_eq!(e.kind, CaptureErrorKind::DataAfterTrailer { offset: len });
}

#[test]
fn a_packet_frame_before_any_header_is_an_error() {
    let mut data = format::preamble().to_vec();
    push_frame(
        &mut data,
        format::kind::PACKET,
        &[0u8; format::PACKET_PAYLOAD_LEN],
    );
    let e = read_bytes(&data).unwrap_err();
    assert!(
        matches!(e.kind, CaptureErrorKind::MissingHeader { offset: 16, .. }),
        "{e}"
    );
}

#[test]
fn out_of_range_fields_and_short_payloads_are_errors_not_panics() {
    let data = small_capture("fields");
    let fr = frames(&data);
    let &(off, _, total) = fr.iter().find(|f| f.1 == format::kind::PACKET).unwrap();
    // Re-frame the first packet with a bad status byte and a valid CRC.
    let mut payload = data[off + 6..off + total - 4].to_vec();
    payload[88] = 7;
    let mut bad = data[..off].to_vec();
    push_frame(&mut bad, format::kind::PACKET, &payload);
    bad.extend_from_slice(&data[off + total..]);
    let e = read_bytes(&bad).unwrap_err();
    assert!(
        matches!(
            e.kind,
            CaptureErrorKind::InvalidValue {
                field: "packet.status",
                value: 7,
                ..
            }
        ),
        "{e}"
    );

    let short = with_frame_after_header(&data, format::kind::QUEUE, &[1, 2, 3]);
    let e = read_bytes(&short).unwrap_err();
    assert!(
        matches!(e.kind, CaptureErrorKind::MalformedFrame { .. }),
        "{e}"
    );

    // A symbol table claiming 4 billion entries in 12 bytes.
    let mut co = Vec::new();
    co.extend_from_slice(&7u64.to_le_bytes());
    co.extend_from_slice(&u32::MAX.to_le_bytes());
    let huge = with_frame_after_header(&data, format::kind::CODE_OBJECT, &co);
    let e = read_bytes(&huge).unwrap_err();
    assert!(
        matches!(e.kind, CaptureErrorKind::MalformedFrame { .. }),
        "{e}"
    );
}

#[test]
fn arbitrary_mutations_never_panic() {
    let data = small_capture("mutations");
    // A deterministic xorshift walk over single-byte and length mutations.
    let mut s: u64 = 0x9E37_79B9_7F4A_7C15;
    for _ in 0..20_000 {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        let mut m = data.clone();
        let at = (s as usize) % m.len();
        m[at] = (s >> 32) as u8;
        let cut = ((s >> 16) as usize) % (m.len() + 1);
        let _ = read_bytes(&m[..cut]);
        let _ = read_bytes(&m);
    }
}

/// `real_capture_v2` as the 1.1 writer wrote it (one Packet frame per record).
fn real_capture(_name: &str) -> Vec<u8> {
    fixture("capture-1.1-real.sgcap")
}

/// A capture as a program leaves it: 2 queues, a code object with its
/// KernelInfo frame, 130 records of both queues, a trailer.
fn real_capture_v2(name: &str) -> Vec<u8> {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("capture_reader");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("{name}.sgcap"));
    let w = CaptureWriter::create(&path, header(), Box::new(|_| KernargClass::Softgpu)).unwrap();
    let mut a = w.register_queue(10, 1, 256, 0);
    let mut b = w.register_queue(11, 1, 256, 0);
    w.add_code_object(vec![
        (0x1000, "_Z4vaddPKfS0_Pfi.kd".into()),
        (0x1040, "__amd_rocclr_fillBufferAligned.kd".into()),
    ]);
    w.add_kernel_info(vec![softgpu_hsa::capture::KernelMeta {
        kernel_object: 0x1000,
        sgpr_count: 16,
        vgpr_count: 8,
        ..Default::default()
    }]);
    for i in 0..130 {
        if i % 3 == 0 {
            b.push(&rec(11, i));
        } else {
            a.push(&rec(10, i));
        }
    }
    w.finish(0, 9).unwrap();
    let bytes = std::fs::read(&path).unwrap();
    let _ = std::fs::remove_file(&path);
    bytes
}

#[test]
fn a_flipped_length_field_in_a_middle_frame_is_corruption_with_its_offset_not_a_cut() {
    let data = real_capture("flipped_length");
    let fr = frames(&data);
    let full = read_bytes(&data).unwrap();
    assert!(full.complete);
    assert_eq!(full.records.len(), 130);
    let &(off, kind, total) = fr
        .iter()
        .filter(|f| f.1 == format::kind::PACKET)
        .nth(5)
        .unwrap();
    let len = (total - format::FRAME_HEAD_LEN - format::FRAME_CRC_LEN) as u32;
    // Longer (into the next frames, or past the end of the file), shorter,
    // zero: a valid frame follows every one of them, so none is a cut.
    for bad_len in [len + 1, len * 2, 0x00ff_ffff, len - 1, 0] {
        let mut bad = data.clone();
        bad[off + 2..off + 6].copy_from_slice(&bad_len.to_le_bytes());
        let e = read_bytes(&bad).unwrap_err();
        assert_eq!(e.offset(), Some(off as u64), "len {bad_len}: {e}");
        let next = match e.kind {
            CaptureErrorKind::ChecksumMismatch {
                kind: k,
                next_frame,
                ..
            }
            | CaptureErrorKind::FrameRunsPastEnd {
                kind: k,
                next_frame,
                ..
            } => {
                assert_eq!(k, kind);
                next_frame
            }
            other => panic!("len {bad_len}: {other:?}"),
        };
        assert_eq!(
            next,
            Some((off + total) as u64),
            "len {bad_len}: the error says where the next valid frame is"
        );
        assert!(e.to_string().contains(&format!("offset {off}: ")), "{e}");
    }
}

/// Start offset of the frame holding byte `p` (`None` in the preamble).
fn frame_of(fr: &[(usize, u16, usize)], p: usize) -> Option<usize> {
    fr.iter()
        .find(|&&(o, _, t)| o <= p && p < o + t)
        .map(|f| f.0)
}

#[test]
fn every_flipped_byte_reads_fully_or_is_corruption_at_its_frame_or_only_in_the_last_frame_a_cut() {
    let data = real_capture("flip_every_byte");
    let fr = frames(&data);
    let full = read_bytes(&data).unwrap();
    let (last_off, last_kind, _) = *fr.last().unwrap();
    assert_eq!(last_kind, format::kind::TRAILER);
    let mut seen = [0u32; 3];
    for p in 0..data.len() {
        for mask in [0x01u8, 0x80, 0xff] {
            let mut m = data.clone();
            m[p] ^= mask;
            let what = format!("byte {p} ^ {mask:#04x}");
            match read_bytes(&m) {
                Ok(cap) if cap.complete => {
                    // Only the minor version and the reserved word of the
                    // preamble may change without changing what is read.
                    assert!((10..16).contains(&p), "{what}: read as complete");
                    assert_eq!(cap.records, full.records, "{what}");
                    seen[0] += 1;
                }
                Ok(cap) => {
                    assert!(p >= last_off, "{what}: a cut before the last frame");
                    assert_eq!(cap.truncated_at, Some(last_off as u64), "{what}");
                    assert_eq!(cap.records, full.records, "{what}");
                    seen[1] += 1;
                }
                Err(e) => {
                    let want = match p {
                        0..8 => 0,
                        8..10 => 8,
                        _ => frame_of(&fr, p).unwrap(),
                    };
                    assert_eq!(e.offset(), Some(want as u64), "{what}: {e}");
                    assert!(
                        p < last_off,
                        "{what}: the last frame's damage is a cut: {e}"
                    );
                    let in_length = frame_of(&fr, p).is_some_and(|o| (o + 2..o + 6).contains(&p));
                    if in_length {
                        assert!(
                            matches!(
                                e.kind,
                                CaptureErrorKind::ChecksumMismatch { .. }
                                    | CaptureErrorKind::FrameRunsPastEnd { .. }
                                    | CaptureErrorKind::FrameTooLong { .. }
                            ),
                            "{what}: {e}"
                        );
                    }
                    seen[2] += 1;
                }
            }
        }
    }
    // Each outcome happened, so the test is not vacuous.
    assert!(seen.iter().all(|&n| n > 0), "{seen:?}");
}

#[test]
fn a_kernel_info_frame_with_longer_entries_from_a_later_minor_version_reads() {
    let data = small_capture("kernel_info_longer");
    let mut payload = Vec::new();
    payload.extend_from_slice(&2u32.to_le_bytes());
    for (ko, sgpr) in [(0x1000u64, 11u32), (0x2000, 22)] {
        let mut entry = Vec::new();
        entry.extend_from_slice(&ko.to_le_bytes());
        for v in [sgpr, 8, 4, 1024, 16, 24, 64, 256] {
            entry.extend_from_slice(&v.to_le_bytes());
        }
        assert_eq!(entry.len(), format::KERNEL_INFO_ENTRY_LEN);
        entry.extend_from_slice(&[0xAB; 12]); // fields a later version appended
        payload.extend_from_slice(&entry);
    }
    let mut newer = with_frame_after_header(&data, format::kind::KERNEL_INFO, &payload);
    newer[10] = 9; // minor 9
    let cap = read_bytes(&newer).unwrap();
    assert!(cap.complete);
    assert_eq!(cap.kernels.len(), 2);
    let k = cap.kernels[&0x2000];
    assert_eq!(k.sgpr_count, 22);
    assert_eq!(k.vgpr_count, 8);
    assert_eq!(k.max_flat_workgroup_size, 256);
    // Entries shorter than 40 bytes, or a count that does not divide the
    // payload, are malformed.
    for bad in [&payload[..4 + 2 * 30], &payload[..payload.len() - 1]] {
        let file = with_frame_after_header(&data, format::kind::KERNEL_INFO, bad);
        let e = read_bytes(&file).unwrap_err();
        assert!(
            matches!(e.kind, CaptureErrorKind::MalformedFrame { .. }),
            "{e}"
        );
    }
}

#[test]
fn read_file_refuses_a_fifo_a_device_a_directory_and_a_huge_file_without_reading() {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("capture_reader");
    std::fs::create_dir_all(&dir).unwrap();
    let fifo = dir.join("fifo.sgcap");
    let _ = std::fs::remove_file(&fifo);
    assert!(
        std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success()
    );
    let sparse = dir.join("sparse.sgcap");
    std::fs::File::create(&sparse)
        .unwrap()
        .set_len(1 << 40)
        .unwrap();
    // A FIFO with no writer blocks a plain open for reading: run the read on
    // a thread and give it a (generous) deadline.
    let (tx, rx) = std::sync::mpsc::channel();
    let f = fifo.clone();
    std::thread::spawn(move || {
        let _ = tx.send(read_file(&f));
    });
    let e = rx
        .recv_timeout(std::time::Duration::from_secs(30))
        .expect("read_file blocked on a FIFO")
        .unwrap_err();
    assert_eq!(
        e.kind,
        CaptureErrorKind::NotARegularFile {
            file_type: "a FIFO"
        }
    );
    assert!(e.to_string().contains("fifo.sgcap"), "{e}");
    for (p, t) in [
        (PathBuf::from("/dev/zero"), "a character device"),
        (dir.clone(), "a directory"),
    ] {
        let e = read_file(&p).unwrap_err();
        assert_eq!(
            e.kind,
            CaptureErrorKind::NotARegularFile { file_type: t },
            "{e}"
        );
    }
    let e = read_file(&sparse).unwrap_err();
    assert_eq!(
        e.kind,
        CaptureErrorKind::TooLarge {
            offset: format::MAX_FILE_LEN,
            size: 1 << 40,
            limit: format::MAX_FILE_LEN
        }
    );
    let _ = std::fs::remove_file(&sparse);
}

/// The rows of the Markdown table that follows `heading` in `doc`, as cells.
fn table_after(doc: &str, heading: &str) -> Vec<Vec<String>> {
    let at = doc
        .find(heading)
        .unwrap_or_else(|| panic!("CAPTURE_FORMAT.md has no {heading:?}"));
    doc[at..]
        .lines()
        .skip_while(|l| !l.starts_with('|'))
        .take_while(|l| l.starts_with('|'))
        .skip(2) // header and separator
        .map(|l| {
            l.trim_matches('|')
                .split(" | ")
                .map(|c| c.trim().to_string())
                .collect()
        })
        .collect()
}

#[test]
fn the_format_doc_has_this_version_every_frame_kind_and_the_one_packet_layout() {
    let doc = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/CAPTURE_FORMAT.md"),
    )
    .unwrap();
    let title = doc.lines().next().unwrap();
    assert!(
        title.ends_with(&format!(
            "version {}.{}",
            format::FORMAT_MAJOR,
            format::FORMAT_MINOR
        )),
        "{title}"
    );
    let mut kinds: Vec<u16> = table_after(&doc, "### Frame kinds")
        .iter()
        .map(|r| u16::from_str_radix(r[0].trim_matches('`').trim_start_matches("0x"), 16).unwrap())
        .collect();
    kinds.sort_unstable();
    let mut known = format::KNOWN_KINDS.to_vec();
    known.sort_unstable();
    assert_eq!(kinds, known, "the frame kinds table");
    let rows: Vec<(usize, usize, String)> = table_after(&doc, "#### Packet (`0x8003`)")
        .iter()
        .map(|r| {
            let name = r[2]
                .split('`')
                .nth(1)
                .filter(|_| !r[2].starts_with("reserved"))
                .unwrap_or("reserved")
                .to_string();
            (r[0].parse().unwrap(), r[1].parse().unwrap(), name)
        })
        .collect();
    let fields: Vec<(usize, usize, String)> = format::packet::FIELDS
        .iter()
        .map(|f| (f.offset, f.size, f.name.to_string()))
        .collect();
    assert_eq!(
        rows, fields,
        "the Packet table against format::packet::FIELDS"
    );
}

#[test]
fn the_packet_frame_round_trips_through_the_one_layout() {
    let mut r = rec(10, 3);
    r.status = Status::Rejected;
    r.reasons = ReasonSet(0x8000_0000_0000_0005);
    r.thread = 0xdead_beef;
    let frame = format::encode_packet_frame(77, &r, KernargClass::ForeignOpaque);
    assert_eq!(frame.len(), format::PACKET_FRAME_LEN);
    let payload = &frame[format::FRAME_HEAD_LEN..format::PACKET_FRAME_LEN - format::FRAME_CRC_LEN];
    let f = format::decode_packet(payload).unwrap();
    assert_eq!(
        (f.seq, f.queue_id, f.packet_index, f.raw, f.thread),
        (77, r.queue_id, r.packet_index, r.raw, r.thread)
    );
    assert_eq!((f.status, f.kernarg_class), (1, 2));
    assert_eq!(
        (f.reasons, f.observed_ns, f.done_ns),
        (r.reasons.0, r.observed_ns, r.done_ns)
    );
    for reserved in [format::packet::RESERVED_A, format::packet::RESERVED_B] {
        assert!(payload[reserved.range()].iter().all(|&b| b == 0));
    }
    // A longer payload (a later minor version) decodes the same; a shorter one does not.
    let mut longer = payload.to_vec();
    longer.extend_from_slice(&[9; 16]);
    assert_eq!(format::decode_packet(&longer), Some(f));
    assert_eq!(format::decode_packet(&payload[..127]), None);
}

// ---------------------------------------------------------------------------
// Format 2.0: the live ring, recovery, late frames
// ---------------------------------------------------------------------------

/// The Ring frame's region: `(file offset, length)`.
fn ring_region(data: &[u8]) -> (usize, usize) {
    let &(off, kind, total) = &frames(data)[1];
    assert_eq!(
        kind,
        format::kind::RING,
        "the second frame of a 2.x capture"
    );
    let pad = u32::from_le_bytes(data[off + 6..off + 10].try_into().unwrap()) as usize;
    let at = off + format::FRAME_HEAD_LEN + format::RING_PREFIX_LEN + pad;
    (at, off + total - format::FRAME_CRC_LEN - at)
}

fn set_word(data: &mut [u8], at: usize, v: u64) {
    data[at..at + 8].copy_from_slice(&v.to_le_bytes());
}

#[test]
fn a_2_0_capture_reads_complete_with_its_ring_and_nothing_recovered() {
    let data = small_capture_v2("v2_complete");
    let cap = read_bytes(&data).unwrap();
    assert_eq!(cap.version, (2, format::FORMAT_MINOR));
    assert!(cap.complete, "{:?}", cap.end);
    assert_eq!(cap.records.len(), 6);
    assert!(
        cap.records
            .iter()
            .enumerate()
            .all(|(i, r)| r.seq == i as u64)
    );
    let ring = cap.end.ring.unwrap();
    assert_eq!((ring.capacity, ring.next_seq, ring.consumed), (4, 6, 6));
    assert_eq!(cap.end.recovered, 0);
    assert_eq!(cap.end.kind, Some(softgpu_hsa::capture::EndKind::Finish));
    // The region starts on a page boundary of the file (it is mapped).
    assert_eq!(ring_region(&data).0 % 4096, 0);
}

#[test]
fn a_stream_cut_at_every_frame_boundary_with_the_ring_intact_gives_back_every_record_the_ring_holds()
 {
    for capacity in [8usize, 4] {
        let data = small_capture_ring(&format!("v2_cut_frames_{capacity}"), capacity);
        let full = read_bytes(&data).unwrap();
        let fr = frames(&data);
        let stream_start = fr[1].0 + fr[1].2;
        for &(off, _, _) in fr.iter().filter(|f| f.0 >= stream_start) {
            let cap = read_bytes(&data[..off]).unwrap();
            assert!(!cap.complete && cap.trailer.is_none(), "cut {off}");
            assert_eq!(cap.truncated_at, None, "cut {off}: at a boundary");
            // The stream's records before the cut, and every one the ring
            // still holds (the last `capacity`), once each.
            let in_stream = frames(&data[..off])
                .iter()
                .filter(|f| f.1 == format::kind::PACKET_BATCH)
                .count();
            let ring_from = 6u64.saturating_sub(capacity as u64);
            let want: Vec<_> = full
                .records
                .iter()
                .filter(|r| r.seq >= ring_from || r.offset < off as u64)
                .map(|r| r.packet_record())
                .collect();
            let got: Vec<_> = cap.records.iter().map(|r| r.packet_record()).collect();
            assert_eq!(got, want, "cut {off} ({in_stream} batches before it)");
            assert!(cap.records.windows(2).all(|w| w[0].seq < w[1].seq));
            assert_eq!(
                cap.end.missing,
                6 - want.len() as u64,
                "cut {off}: what neither holds is counted missing"
            );
            assert_eq!(
                cap.end.recovered
                    + cap
                        .records
                        .iter()
                        .filter(|r| r.offset < off as u64 && (r.offset as usize) >= stream_start)
                        .count() as u64,
                cap.records.len() as u64,
                "cut {off}"
            );
        }
        // Cut at every byte after the ring: never an error, never fewer records.
        for cut in stream_start..data.len() {
            let cap = read_bytes(&data[..cut]).unwrap();
            assert!(cap.records.len() >= capacity.min(6), "cut {cut}");
        }
        // Cut inside the Ring frame: the file was cut while being created.
        let cap = read_bytes(&data[..fr[1].0 + 100]).unwrap();
        assert_eq!(cap.truncated_at, Some(fr[1].0 as u64));
        assert!(cap.records.is_empty());
    }
}

#[test]
fn a_ring_slot_whose_commit_word_does_not_fit_its_position_is_skipped_and_counted() {
    let data = small_capture_ring("v2_bad_commit", 8);
    let fr = frames(&data);
    let stream_start = fr[1].0 + fr[1].2;
    // As a killed process leaves it: the frames after the ring never written.
    let mut killed = data[..stream_start].to_vec();
    let cap = read_bytes(&killed).unwrap();
    assert_eq!(
        (cap.records.len(), cap.end.recovered, cap.end.bad_slots),
        (6, 6, 0)
    );
    let (at, _) = ring_region(&killed);
    let slot = |i: usize| at + 4096 + i * 128;
    // Slot 3 claims seq 4 (commit 5): wrong position.
    set_word(&mut killed, slot(3), 5);
    // Slot 5 claims a seq beyond anything handed out in its position (13 % 8 == 5).
    set_word(&mut killed, slot(5), 14);
    let cap = read_bytes(&killed).unwrap();
    assert_eq!(cap.end.bad_slots, 1, "{:?}", cap.end);
    let seqs: Vec<u64> = cap.records.iter().map(|r| r.seq).collect();
    assert!(
        !seqs.contains(&3),
        "the damaged slot is not a record: {seqs:?}"
    );
    assert!(!cap.complete);
    // A bad status byte is damage too.
    let mut bad = data[..stream_start].to_vec();
    set_word(&mut bad, slot(0) + 11 * 8, 9);
    let cap = read_bytes(&bad).unwrap();
    assert_eq!((cap.end.bad_slots, cap.records.len()), (1, 5));
}

#[test]
fn a_ring_whose_consumed_word_is_ahead_or_behind_the_stream_changes_no_record_returned() {
    let data = small_capture_ring("v2_consumed", 8);
    let full = read_bytes(&data).unwrap();
    let (at, _) = ring_region(&data);
    let fr = frames(&data);
    let stream_start = fr[1].0 + fr[1].2;
    for consumed in [0u64, 3, 1000] {
        // Complete capture: the reader trusts the frames, not the word.
        let mut m = data.clone();
        set_word(&mut m, at + 16 * 8, consumed);
        let cap = read_bytes(&m).unwrap();
        assert_eq!(cap.records, full.records, "consumed {consumed}");
        assert!(cap.complete);
        // Killed before any frame: every record comes from the ring.
        let mut k = data[..stream_start].to_vec();
        set_word(&mut k, at + 16 * 8, consumed);
        let cap = read_bytes(&k).unwrap();
        let got: Vec<_> = cap.records.iter().map(|r| r.packet_record()).collect();
        let want: Vec<_> = full.records.iter().map(|r| r.packet_record()).collect();
        assert_eq!(got, want, "consumed {consumed}");
        assert_eq!(cap.end.recovered, 6);
    }
}

#[test]
fn in_2_0_late_frames_may_follow_the_trailer_but_a_second_trailer_or_header_may_not() {
    let data = small_capture_v2("v2_after_trailer");
    let mut late = data.clone();
    push_frame(&mut late, 0x0077, b"a later version's skippable frame");
    let cap = read_bytes(&late).unwrap();
    assert_eq!(cap.skipped_frames, 1);
    let fr = frames(&data);
    let &(toff, _, ttotal) = fr.iter().find(|f| f.1 == format::kind::TRAILER).unwrap();
    for k in [format::kind::TRAILER, format::kind::HEADER] {
        let mut bad = data.clone();
        let payload = data[toff + 6..toff + ttotal - 4].to_vec();
        push_frame(&mut bad, k, &payload);
        let e = read_bytes(&bad).unwrap_err();
        assert!(
            matches!(e.kind, CaptureErrorKind::DataAfterTrailer { .. }),
            "{e}"
        );
    }
}

#[test]
fn every_flipped_byte_of_a_2_0_capture_reads_or_is_an_error_at_its_frame_never_a_panic() {
    let data = small_capture_v2("v2_flip_every_byte");
    let full = read_bytes(&data).unwrap();
    let fr = frames(&data);
    let (ring_at, ring_len) = ring_region(&data);
    let (last_off, _, _) = *fr.last().unwrap();
    for p in 0..data.len() {
        for mask in [0x01u8, 0x80] {
            let mut m = data.clone();
            m[p] ^= mask;
            let what = format!("byte {p} ^ {mask:#04x}");
            // The Ring frame after its length: prefix, padding, region and
            // CRC field carry no checksum.
            let in_ring = (fr[1].0 + 6..ring_at + ring_len + 4).contains(&p);
            match read_bytes(&m) {
                Ok(cap) if !in_ring && cap.complete => {
                    assert!((10..16).contains(&p), "{what}: read as complete");
                    assert_eq!(cap.records, full.records, "{what}");
                }
                Ok(cap) if in_ring => {
                    // The live region has no checksum: a flip there is told by
                    // the slot and header checks, never turns into a record
                    // the stream does not hold, and never drops one it does.
                    for r in &full.records {
                        assert!(cap.records.contains(r), "{what}: lost seq {}", r.seq);
                    }
                }
                Ok(cap) => {
                    assert!(p >= last_off, "{what}: a cut before the last frame");
                    assert_eq!(cap.records, full.records, "{what}");
                }
                Err(e) => {
                    let want = match p {
                        0..8 => 0,
                        8..10 => 8,
                        _ => frame_of(&fr, p).unwrap(),
                    };
                    assert_eq!(e.offset(), Some(want as u64), "{what}: {e}");
                }
            }
        }
    }
}

fn softgpu(args: &[&str], files: &[&Path]) -> Output {
    Command::new(common::cli())
        .args(&args[..1])
        .args(files)
        .args(&args[1..])
        .output()
        .expect("cannot run softgpu")
}

#[test]
fn inspect_replay_and_diff_read_the_1_1_fixtures_as_they_read_2_0_files_of_the_same_records() {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("capture_reader_cli");
    std::fs::create_dir_all(&dir).unwrap();
    let cases = [
        (
            "small",
            small_capture("cli"),
            small_capture_v2("cli_small"),
            6,
        ),
        (
            "real",
            real_capture("cli"),
            real_capture_v2("cli_real"),
            130,
        ),
    ];
    for (name, v1, v2, n) in cases {
        assert_eq!(read_bytes(&v1).unwrap().version.0, 1, "{name}");
        assert_eq!(read_bytes(&v2).unwrap().version.0, 2, "{name}");
        let old = dir.join(format!("{name}-1.1.sgcap"));
        let new = dir.join(format!("{name}-2.0.sgcap"));
        std::fs::write(&old, &v1).unwrap();
        std::fs::write(&new, &v2).unwrap();
        let text = |o: &Output| String::from_utf8_lossy(&o.stdout).into_owned();
        for format in ["jsonl", "csv", "table"] {
            let a = softgpu(&["inspect", "--format", format], &[&old]);
            let b = softgpu(&["inspect", "--format", format], &[&new]);
            for (o, what) in [(&a, "1.1"), (&b, "2.0")] {
                assert_eq!(
                    o.status.code(),
                    Some(0),
                    "{name} {what} inspect {format}: {o:?}"
                );
                assert!(
                    o.stderr.is_empty(),
                    "{name} {what} inspect {format}: a complete capture gets no warning: {}",
                    String::from_utf8_lossy(&o.stderr)
                );
            }
            if format == "jsonl" {
                assert_eq!(text(&a).lines().count(), n, "{name}");
            }
            if format == "table" {
                // The heading names the file and its format; the rest is the same.
                let (ha, ra) = text(&a)
                    .split_once('\n')
                    .map(|(h, r)| (h.to_string(), r.to_string()))
                    .unwrap();
                let (hb, rb) = text(&b)
                    .split_once('\n')
                    .map(|(h, r)| (h.to_string(), r.to_string()))
                    .unwrap();
                assert!(
                    ha.contains("format 1.1") && hb.contains("format 2.1"),
                    "{ha}\n{hb}"
                );
                assert_eq!(ra, rb, "{name}: inspect --format table");
            } else {
                assert_eq!(text(&a), text(&b), "{name}: inspect --format {format}");
            }
        }
        let a = softgpu(&["replay", "--format", "jsonl"], &[&old]);
        let b = softgpu(&["replay", "--format", "jsonl"], &[&new]);
        assert_ne!(a.status.code(), Some(2), "{name} 1.1 replay: {a:?}");
        assert_eq!(
            a.status.code(),
            b.status.code(),
            "{name}: replay exit codes"
        );
        assert_eq!(
            text(&a).lines().count(),
            n,
            "{name}: one replay line per record"
        );
        assert_eq!(text(&a), text(&b), "{name}: replay");
        for level in ["exact", "count", "order", "events"] {
            let d = softgpu(&["diff", "--level", level], &[&old, &new]);
            assert_eq!(
                d.status.code(),
                Some(0),
                "{name}: diff --level {level} of the 1.1 file and the 2.0 file: {}{}",
                text(&d),
                String::from_utf8_lossy(&d.stderr)
            );
        }
    }
}

/// Pending counts come from the file: two queues ended with counts that add
/// up past `u64::MAX` (a fuzzer's find) read back as they are, their total
/// saturates instead of overflowing (a panic in a debug build, a wrapped
/// small number in a release one), and `softgpu inspect` says the capture
/// is incomplete with the saturated total.
#[test]
fn pending_counts_that_add_up_past_u64_max_saturate_and_never_panic() {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("capture_reader_pending");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("huge-pending.sgcap");
    let w = CaptureWriter::create_with(
        &path,
        header(),
        Box::new(|_| KernargClass::Softgpu),
        Default::default(),
    )
    .unwrap();
    let mut a = w.register_queue(10, 1, 64, 0);
    let b = w.register_queue(11, 1, 64, 0);
    a.push(&rec(10, 0));
    a.end(u64::MAX, 5);
    b.end(2, 6);
    w.finish(0, 9).unwrap();
    let cap = read_bytes(&std::fs::read(&path).unwrap()).unwrap();
    assert_eq!(
        cap.end.pending_at_destroy,
        vec![(10, u64::MAX), (11, 2)],
        "{:?}",
        cap.end
    );
    assert_eq!(cap.end.pending_packets(), u64::MAX);
    assert!(!cap.complete);
    let out = softgpu(&["inspect"], &[&path]);
    let all = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        all.contains(&format!(
            "{} packets were never processed when their queue was destroyed",
            u64::MAX
        )),
        "{all}"
    );
}

/// A capture whose records are stamped with the TSC (as the shim stamps them
/// where the kernel's clock is the TSC): 40 records, stamped as pushed, a
/// little over 1 ms apart in groups, each record's CLOCK_MONOTONIC window
/// (read just before and after its stamp) kept.
fn tsc_capture(name: &str) -> (Vec<u8>, Vec<(u64, u64)>) {
    use softgpu_hsa::capture::clock::Stamp;
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("capture_reader");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("{name}.sgcap"));
    let opts = softgpu_hsa::capture::WriterOptions {
        ring_capacity: 64,
        stamp: Stamp::Tsc,
        ..Default::default()
    };
    let w = CaptureWriter::create_with(&path, header(), Box::new(|_| KernargClass::Softgpu), opts)
        .unwrap();
    let mut q = w.register_queue(10, 1, 64, 0);
    let mut windows = Vec::new();
    for i in 0..40u64 {
        if i % 8 == 0 {
            std::thread::sleep(std::time::Duration::from_micros(1500));
        }
        let before = softgpu_hsa::sys::monotonic_ns();
        let mut r = rec(10, i);
        r.observed_ns = q.now();
        r.done_ns = q.now();
        let after = softgpu_hsa::sys::monotonic_ns();
        windows.push((before, after));
        q.push(&r);
    }
    w.drain();
    drop(q);
    w.finish(0, 9).unwrap();
    let bytes = std::fs::read(&path).unwrap();
    let _ = std::fs::remove_file(&path);
    (bytes, windows)
}

/// Each record's times lie in its window, give or take `slack_ns`, and
/// never run backwards.
fn times_fit(cap: &softgpu_hsa::capture::Capture, windows: &[(u64, u64)], slack_ns: u64) {
    assert_eq!(cap.records.len(), windows.len());
    let mut last = 0;
    for (r, &(before, after)) in cap.records.iter().zip(windows) {
        for t in [r.observed_ns, r.done_ns] {
            assert!(
                t + slack_ns >= before && t <= after + slack_ns,
                "seq {}: {t} outside [{before}, {after}]",
                r.seq
            );
        }
        assert!(
            r.observed_ns >= last && r.done_ns >= r.observed_ns,
            "seq {}",
            r.seq
        );
        last = r.done_ns;
    }
}

#[test]
fn tsc_stamps_are_written_as_monotonic_ns_and_recovered_from_the_ring_the_same_way() {
    let (data, windows) = tsc_capture("tsc_stamps");
    let cap = read_bytes(&data).unwrap();
    assert!(cap.complete);
    times_fit(&cap, &windows, 2_000);
    // Killed before any frame was written: every record comes from the
    // ring, its stamps scaled from the header's clock words as the writer
    // scaled them.
    let fr = frames(&data);
    let stream_start = fr[1].0 + fr[1].2;
    let killed = data[..stream_start].to_vec();
    let got = read_bytes(&killed).unwrap();
    assert_eq!(got.end.recovered, 40);
    times_fit(&got, &windows, 2_000);
    for (a, b) in got.records.iter().zip(&cap.records) {
        // The header's anchor is the writer's last: the rate is the same,
        // so the two conversions differ by the rounding of a few anchors.
        assert!(
            a.observed_ns.abs_diff(b.observed_ns) <= 1_000,
            "seq {}",
            a.seq
        );
    }
    // The writer died in the middle of an anchor update (odd sequence
    // word), or before its first anchor: the times are unknown, read as 0,
    // never made up.
    let (at, _) = ring_region(&data);
    let word = |i: usize| at + i * 8;
    let mut torn = killed.clone();
    let seq = u64::from_le_bytes(torn[word(41)..word(41) + 8].try_into().unwrap());
    assert!(
        seq >= 2 && seq % 2 == 0,
        "the writer published anchors: {seq}"
    );
    set_word(&mut torn, word(41), seq + 1);
    let mut unanchored = killed.clone();
    set_word(&mut unanchored, word(44), 0);
    set_word(&mut unanchored, word(45), 0);
    for k in [torn, unanchored] {
        let c = read_bytes(&k).unwrap();
        assert_eq!(c.end.recovered, 40);
        assert!(
            c.records
                .iter()
                .all(|r| r.observed_ns == 0 && r.done_ns == 0)
        );
    }
    // A version 2 ring (no clock words) is read as ns, as before.
    let mut v2 = killed.clone();
    v2[at + 7] = 2;
    let c = read_bytes(&v2).unwrap();
    assert_eq!(c.end.recovered, 40);
    assert!(
        c.records
            .iter()
            .zip(&got.records)
            .all(|(a, b)| a.observed_ns != b.observed_ns)
    );
}
