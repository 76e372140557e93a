//! Reading an input file whole, safely: the one way the CLI and the capture
//! reader take a file from the user.
//!
//! Why it exists: a path can name anything. `/dev/zero` never ends, a FIFO
//! blocks its reader until someone writes to it, a directory or a device is not
//! a report's input, and a sparse file can claim terabytes. [`read_regular_file`]
//! (and [`open_regular_file`], for readers that bound their own reads) opens
//! the path once, without blocking (`O_NONBLOCK`, so a FIFO cannot hold
//! it), asks the opened file (not the path, so nothing can be swapped in
//! between) whether it is a regular file, refuses anything larger than the
//! caller's limit before reading a byte, and reads at most that many bytes.
//!
//! How it fails: a [`ReadError`] that says what the file is or why it could not
//! be read; the caller adds the file name.

use std::fs::{File, OpenOptions};
use std::io::{self, Read};
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::Path;

/// Why a file could not be taken as input.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    /// Opening or reading failed (missing, no permission, I/O error).
    #[error("cannot read: {0}")]
    Io(#[from] io::Error),
    /// The path names something other than a regular file.
    #[error("not a regular file (it is {0}); softgpu reads only regular files")]
    NotRegular(&'static str),
    /// The file is larger than the caller accepts.
    #[error(
        "the file is {size} bytes, more than the {limit} bytes (the limit) this reader accepts"
    )]
    TooLarge { size: u64, limit: u64 },
}

/// What kind of file `t` is, in words, for [`ReadError::NotRegular`].
fn describe(t: std::fs::FileType) -> &'static str {
    if t.is_dir() {
        "a directory"
    } else if t.is_fifo() {
        "a FIFO"
    } else if t.is_char_device() {
        "a character device"
    } else if t.is_block_device() {
        "a block device"
    } else if t.is_socket() {
        "a socket"
    } else {
        "not a plain file"
    }
}

/// A path for a message: as it is when it is UTF-8; otherwise quoted, with
/// each byte that is not UTF-8 escaped (`"/tmp/\xFF.sgcap"`), so that the
/// message names the real file instead of a lossy look-alike.
pub fn show_path(path: &Path) -> String {
    match path.to_str() {
        Some(s) => s.to_string(),
        None => format!("{path:?} (not UTF-8)"),
    }
}

/// Opens `path` once, without blocking, and refuses anything that is not a
/// regular file: the file and its metadata (taken from the opened file). For
/// readers that take what they need with positioned reads (`softgpu objects`
/// reads a file of any size one bundle at a time) and bound each read
/// themselves.
pub fn open_regular_file(path: &Path) -> Result<(File, std::fs::Metadata), ReadError> {
    // O_NONBLOCK: opening a FIFO for reading would otherwise wait for a
    // writer. It changes nothing for the regular files that are read below.
    // O_NOCTTY: a terminal named as input never becomes our controlling one.
    let file: File = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)?;
    let meta = file.metadata()?;
    if !meta.file_type().is_file() {
        return Err(ReadError::NotRegular(describe(meta.file_type())));
    }
    Ok((file, meta))
}

/// Opens `path` once, refuses anything that is not a regular file of at most
/// `limit` bytes, and returns its contents.
pub fn read_regular_file(path: &Path, limit: u64) -> Result<Vec<u8>, ReadError> {
    let (file, meta) = open_regular_file(path)?;
    if meta.len() > limit {
        return Err(ReadError::TooLarge {
            size: meta.len(),
            limit,
        });
    }
    // The size is a hint (the file may grow while it is read): read at most
    // one byte past the limit to tell.
    let mut bytes = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0));
    file.take(limit.saturating_add(1)).read_to_end(&mut bytes)?;
    let got = bytes.len() as u64;
    if got > limit {
        return Err(ReadError::TooLarge { size: got, limit });
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_path_that_is_not_utf8_is_shown_escaped_not_lossily() {
        use std::os::unix::ffi::OsStrExt;
        let p = Path::new(std::ffi::OsStr::from_bytes(b"/tmp/\xff\xfe.sgcap"));
        assert_eq!(show_path(p), r#""/tmp/\xFF\xFE.sgcap" (not UTF-8)"#);
        assert_eq!(show_path(Path::new("/tmp/a b.sgcap")), "/tmp/a b.sgcap");
    }

    #[test]
    fn a_directory_and_a_device_are_refused_without_reading() {
        let e = read_regular_file(Path::new("/"), 1 << 20).unwrap_err();
        assert!(matches!(e, ReadError::NotRegular("a directory")), "{e}");
        let e = read_regular_file(Path::new("/dev/zero"), 1 << 20).unwrap_err();
        assert!(
            matches!(e, ReadError::NotRegular("a character device")),
            "{e}"
        );
    }
}
