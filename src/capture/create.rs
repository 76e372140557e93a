//! Creating the capture file without trusting what is already at its name.
//!
//! The capture often goes to a shared directory (the working directory, or
//! `/tmp`), under a name anyone can predict (`softgpu-<pid>.sgcap`). So the
//! file is never opened by that name. It is created exclusively
//! (`O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC`, mode 0600) under a fresh
//! temporary name in the same directory, checked to be a regular file owned
//! by us, filled with its first bytes, and only then renamed onto the final
//! name. `rename(2)` replaces the name itself, so no existing file is ever
//! opened, written, truncated or chmod-ed. The only thing the rename may
//! replace is a regular file of the same user (an earlier capture under the
//! same name). Anything else at the name is refused with a message that says
//! what is there: a directory, a symbolic link (never followed, never
//! replaced), a FIFO (never opened), a socket, a device node (run as root,
//! `SOFTGPU_CAPTURE=/dev/null` would otherwise have replaced `/dev/null` with
//! a regular file), or another user's file.

use std::fs::{File, OpenOptions, Permissions};
use std::io;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// A capture file created under a temporary name, not yet in place.
#[derive(Debug)]
pub struct NewFile {
    pub file: File,
    tmp: PathBuf,
    target: PathBuf,
}

fn err(kind: io::ErrorKind, path: &Path, why: impl std::fmt::Display) -> io::Error {
    io::Error::new(kind, format!("{}: {why}", path.display()))
}

/// The directory that will hold `path`, and its file name.
fn split(path: &Path) -> io::Result<(PathBuf, &std::ffi::OsStr)> {
    let name = path.file_name().ok_or_else(|| {
        err(
            io::ErrorKind::InvalidInput,
            path,
            "the capture path names no file",
        )
    })?;
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    Ok((dir, name))
}

/// Refuses a final name that must not be replaced (see the module doc):
/// only nothing, or a regular file owned by `ours` (the uid of the file we
/// created), may be at `path`.
fn check_target(path: &Path, ours: u32) -> io::Result<()> {
    let meta = match std::fs::symlink_metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(err(e.kind(), path, e)),
    };
    if meta.is_dir() {
        return Err(err(
            io::ErrorKind::IsADirectory,
            path,
            "a directory is at the capture's name; refusing to replace it",
        ));
    }
    if !meta.file_type().is_file() {
        return Err(err(
            io::ErrorKind::AlreadyExists,
            path,
            format_args!(
                "{} is at the capture's name; refusing to replace it (a capture is only ever a regular file of this user's)",
                describe(&meta)
            ),
        ));
    }
    if meta.uid() != ours {
        return Err(err(
            io::ErrorKind::PermissionDenied,
            path,
            format_args!(
                "the name already exists and belongs to uid {}, not to this process (uid {ours}); refusing to replace another user's file",
                meta.uid()
            ),
        ));
    }
    Ok(())
}

fn describe(m: &std::fs::Metadata) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    let t = m.file_type();
    if t.is_symlink() {
        "a symbolic link"
    } else if t.is_fifo() {
        "a FIFO"
    } else if t.is_socket() {
        "a socket"
    } else if t.is_block_device() || t.is_char_device() {
        "a device node"
    } else {
        "a file"
    }
}

static COUNTER: AtomicU64 = AtomicU64::new(0);

/// Creates a new, empty, mode-0600 regular file in `path`'s directory under
/// a temporary name, opened for reading and writing. Nothing is at `path`
/// yet: write the first bytes, then [`NewFile::persist`].
pub fn create(path: &Path) -> io::Result<NewFile> {
    let (dir, name) = split(path)?;
    let mut last = None;
    for _ in 0..16 {
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.subsec_nanos())
            .unwrap_or(0);
        let mut tmp_name = std::ffi::OsString::from(".");
        tmp_name.push(name);
        tmp_name.push(format!(".{}.{n}.{nanos:08x}.tmp", std::process::id()));
        let tmp = dir.join(tmp_name);
        // create_new is O_CREAT|O_EXCL (which never follows a symlink at
        // the name); std adds O_CLOEXEC; O_NOFOLLOW says it once more.
        let opened = OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .mode(0o600)
            .custom_flags(libc::O_NOFOLLOW)
            .open(&tmp);
        match opened {
            Ok(file) => {
                let fail = |e: io::Error| {
                    let _ = std::fs::remove_file(&tmp);
                    e
                };
                let meta = file.metadata().map_err(fail)?;
                if !meta.file_type().is_file() {
                    let _ = std::fs::remove_file(&tmp);
                    return Err(err(
                        io::ErrorKind::InvalidData,
                        &tmp,
                        "the file just created is not a regular file",
                    ));
                }
                // The umask may have narrowed the mode; make it exactly 0600
                // (this is our own new file, through our own descriptor).
                file.set_permissions(Permissions::from_mode(0o600))
                    .map_err(fail)?;
                if let Err(e) = check_target(path, meta.uid()) {
                    let _ = std::fs::remove_file(&tmp);
                    return Err(e);
                }
                return Ok(NewFile {
                    file,
                    tmp,
                    target: path.to_path_buf(),
                });
            }
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => last = Some(e),
            Err(e) => return Err(err(e.kind(), &tmp, e)),
        }
    }
    Err(last.unwrap_or_else(|| io::Error::other("no free temporary name")))
}

impl NewFile {
    /// Renames the file onto its final name (replacing whatever name was
    /// there, never what it pointed to). On failure the temporary file is
    /// removed and the error says what is at the name.
    pub fn persist(self) -> io::Result<File> {
        let ours = self.file.metadata().map(|m| m.uid()).unwrap_or(u32::MAX);
        // Checked again just before the rename: the directory may have changed.
        if let Err(e) = check_target(&self.target, ours) {
            let _ = std::fs::remove_file(&self.tmp);
            return Err(e);
        }
        if let Err(e) = std::fs::rename(&self.tmp, &self.target) {
            let _ = std::fs::remove_file(&self.tmp);
            let what = std::fs::symlink_metadata(&self.target)
                .map(|m| {
                    if m.is_dir() {
                        " (a directory is at that name)"
                    } else {
                        ""
                    }
                })
                .unwrap_or("");
            return Err(err(
                e.kind(),
                &self.target,
                format_args!("cannot put the capture in place: {e}{what}"),
            ));
        }
        // The new name is made durable later, off the caller's path (the
        // writer thread calls `sync_dir_of` first thing).
        Ok(self.file)
    }

    /// Removes the temporary file (creation abandoned).
    pub fn abandon(self) {
        let _ = std::fs::remove_file(&self.tmp);
    }
}

/// Syncs the directory that holds `path`, so a name put in place by
/// [`NewFile::persist`] survives an OS crash (best effort: errors ignored).
pub fn sync_dir_of(path: &Path) {
    if let Ok((dir, _)) = split(path) {
        if let Ok(d) = File::open(&dir) {
            let _ = d.sync_all();
        }
    }
}
