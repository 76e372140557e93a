//! rocpd databases: the SQLite output of rocprofiler-sdk (rocprofv3's default output
//! since ROCm 7.0), read as a dispatch stream by `softgpu diff` ([`read`]) and written
//! from a capture by `softgpu inspect --format rocpd` ([`write`]), in the schema of
//! [`schema`].
//!
//! A database written here says in its `rocpd_metadata` that no kernel ran and that
//! its timestamps are the packet processor's (when a packet was observed and when
//! its diagnostic completion was signalled), not a GPU's.

pub mod read;
pub mod schema;
pub mod write;

/// The first 16 bytes of every SQLite 3 database file.
pub const SQLITE_MAGIC: &[u8; 16] = b"SQLite format 3\0";

/// Why a rocpd database could not be read or written.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RocpdError {
    /// An SQLite file that is not a rocpd database.
    #[error("not a rocpd database: {0}")]
    NotRocpd(String),
    /// A rocpd (or older RPD) database of a schema version this build does not read.
    #[error("unsupported rocpd schema: {0}")]
    UnknownVersion(String),
    /// A rocpd database whose rows or tables are not what the schema says.
    #[error("malformed rocpd database: {0}")]
    Malformed(String),
    /// Past one of the reader's bounds.
    #[error("rocpd database too large: {0}")]
    TooLarge(String),
    /// SQLite itself failed (a corrupt file, an I/O error, a bad query).
    #[error("SQLite: {0}")]
    Sql(String),
}
