//! Point reads on the caller's own thread: the few small reads the engine makes
//! for every dispatch and every deadline (a route, its progress, its circuits,
//! its provider, the due routes), each on a rusqlite connection taken from a
//! small pool and given back.
//!
//! Through sqlx, each of these reads is a round trip to a connection's worker
//! thread and back: two thread wakes, and under load a third of the process's
//! CPU went to them. A point read of pages SQLite has cached takes some
//! microseconds, less than the wakes it would cost, so it runs in place. Reads
//! that can be long (listings, a task's whole history) stay on the sqlx pool.
//! In WAL mode a reader never waits for the writer, and sees every batch the
//! task writer has committed.

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;

use rusqlite::Connection;

use crate::store::StoreError;

/// The most idle connections kept; more are opened when more threads read at
/// once, and closed after.
const KEPT: usize = 16;

/// A pool of read-only connections to one database file.
#[derive(Debug)]
pub(super) struct Readers {
    path: PathBuf,
    idle: Mutex<Vec<Connection>>,
}

impl Readers {
    /// Readers of the (already migrated) database file at `path`: one is opened
    /// now, so a bad path fails here rather than at the first read.
    pub(super) fn open(path: &Path) -> Result<Self, rusqlite::Error> {
        let first = open(path)?;
        Ok(Self {
            path: path.to_owned(),
            idle: Mutex::new(vec![first]),
        })
    }

    /// Run `work` on a connection, in one implicit read transaction per
    /// statement (each statement sees one committed state).
    pub(super) fn read<T>(
        &self,
        work: impl FnOnce(&Connection) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        let taken = self
            .idle
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .pop();
        let connection = match taken {
            Some(connection) => connection,
            None => open(&self.path)?,
        };
        let result = work(&connection);
        let mut idle = self
            .idle
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if idle.len() < KEPT {
            idle.push(connection);
        }
        result
    }
}

/// A reader reads through the page cache, not a memory map: the file grows
/// with nearly every batch, and a reader with a map remaps the whole file at
/// its next read after each growth (at 1,000 gateway calls a second, an
/// `munmap` and `mmap` of some 20 MB per read, each `munmap` stopping the other
/// core to flush its TLB).
fn open(path: &Path) -> Result<Connection, rusqlite::Error> {
    let connection = Connection::open_with_flags(
        path,
        rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY
            | rusqlite::OpenFlags::SQLITE_OPEN_NO_MUTEX
            | rusqlite::OpenFlags::SQLITE_OPEN_URI,
    )?;
    connection.busy_timeout(Duration::from_secs(10))?;
    connection.set_prepared_statement_cache_capacity(32);
    Ok(connection)
}
