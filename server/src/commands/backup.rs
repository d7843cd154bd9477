//! `switchback backup FILE`: a consistent copy of a SQLite database, taken
//! while a server uses it. SQLite's `VACUUM INTO` reads the database in one
//! read transaction (writers go on meanwhile, in the write-ahead log) and
//! writes a compact copy; the copy is written beside `FILE`, checked with
//! `PRAGMA integrity_check`, and only then linked as `FILE` (a link never
//! replaces a file), so `FILE` either is a whole, checked backup or does not
//! exist. Restoring is
//! starting a server on the copy: its waiting routes resume from their
//! stored deadlines. PostgreSQL is backed up with `pg_dump`.

use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::time::Instant;

use rusqlite::{Connection, OpenFlags};
use sqlx::sqlite::SqliteConnectOptions;

/// Why a backup was not taken.
#[derive(Debug, thiserror::Error)]
pub enum BackupError {
    /// A PostgreSQL URL: that is `pg_dump`'s work.
    #[error(
        "{0} is a PostgreSQL database: back it up with pg_dump (for example `pg_dump --format=custom --file=switchback.dump DATABASE_URL`) and restore with pg_restore"
    )]
    Postgres(String),
    /// Not a SQLite URL.
    #[error("invalid database URL {0:?}: expected sqlite://PATH")]
    Url(String),
    /// The database file is not there.
    #[error("there is no database at {0}")]
    Missing(PathBuf),
    /// The target exists: a backup never overwrites.
    #[error("{0} exists already; a backup never overwrites a file, so name a new one")]
    Exists(PathBuf),
    /// SQLite failed.
    #[error("{0}")]
    Sqlite(#[from] rusqlite::Error),
    /// The copy failed its integrity check.
    #[error("the copy failed its integrity check: {0}")]
    Corrupt(String),
    /// The file system failed.
    #[error("{0}")]
    Io(#[from] std::io::Error),
}

/// What a backup copied.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Backup {
    /// Tasks in the copy.
    pub tasks: i64,
    /// Routes not ended (waiting, held, running, queued) in the copy.
    pub open_routes: i64,
    /// The copy's size.
    pub bytes: u64,
    /// How long it took.
    pub elapsed_ms: u128,
}

/// Copy the database `database_url` names to `target`.
pub fn backup(database_url: &str, target: &Path) -> Result<Backup, BackupError> {
    if database_url.starts_with("postgres://") || database_url.starts_with("postgresql://") {
        return Err(BackupError::Postgres(crate::store::without_password(
            database_url,
        )));
    }
    let options = SqliteConnectOptions::from_str(database_url)
        .map_err(|_| BackupError::Url(database_url.to_owned()))?;
    let source = options.get_filename().to_path_buf();
    if !source.exists() {
        return Err(BackupError::Missing(source));
    }
    if target.exists() {
        return Err(BackupError::Exists(target.to_path_buf()));
    }
    let started = Instant::now();
    let mut partial = target.as_os_str().to_owned();
    partial.push(".partial");
    let partial = PathBuf::from(partial);
    if partial.exists() {
        return Err(BackupError::Exists(partial));
    }
    let outcome = copy_and_check(&source, &partial);
    let counts = match outcome {
        Ok(counts) => counts,
        Err(error) => {
            let _ = std::fs::remove_file(&partial);
            return Err(error);
        }
    };
    // A hard link never replaces a file: one made at `target` meanwhile stays.
    let linked = std::fs::hard_link(&partial, target);
    let _ = std::fs::remove_file(&partial);
    match linked {
        Ok(()) => {}
        Err(error) if error.kind() == std::io::ErrorKind::AlreadyExists => {
            return Err(BackupError::Exists(target.to_path_buf()));
        }
        Err(error) => return Err(error.into()),
    }
    Ok(Backup {
        tasks: counts.0,
        open_routes: counts.1,
        bytes: std::fs::metadata(target)?.len(),
        elapsed_ms: started.elapsed().as_millis(),
    })
}

/// `VACUUM INTO` `partial`, then check the copy: (tasks, open routes).
fn copy_and_check(source: &Path, partial: &Path) -> Result<(i64, i64), BackupError> {
    let connection = Connection::open_with_flags(
        source,
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )?;
    // A server holding its write lock for a moment must not fail the backup.
    connection.busy_timeout(std::time::Duration::from_secs(30))?;
    connection.execute("VACUUM INTO ?1", [partial.to_string_lossy().as_ref()])?;
    drop(connection);
    let copy = Connection::open_with_flags(partial, OpenFlags::SQLITE_OPEN_READ_ONLY)?;
    let verdict: String = copy.query_row("PRAGMA integrity_check", [], |row| row.get(0))?;
    if verdict != "ok" {
        return Err(BackupError::Corrupt(verdict));
    }
    let tasks = copy.query_row("SELECT COUNT(*) FROM tasks", [], |row| row.get(0))?;
    let open_routes = copy.query_row(
        "SELECT COUNT(*) FROM routes WHERE state NOT IN ('completed', 'stopped')",
        [],
        |row| row.get(0),
    )?;
    Ok((tasks, open_routes))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refusals_name_what_to_do_and_leave_nothing_behind() {
        let dir = tempfile::tempdir().unwrap();
        let existing = dir.path().join("taken.db");
        std::fs::write(&existing, b"x").unwrap();
        let database = dir.path().join("live.db");
        Connection::open(&database)
            .unwrap()
            .execute_batch("CREATE TABLE tasks (id TEXT); CREATE TABLE routes (state TEXT);")
            .unwrap();
        let live = format!("sqlite://{}", database.display());
        for (url, target, message) in [
            (
                "postgres://app:secret@db/switchback",
                dir.path().join("a.db"),
                "pg_dump",
            ),
            (
                &*format!("sqlite://{}", dir.path().join("none.db").display()),
                dir.path().join("b.db"),
                "there is no database at",
            ),
            (&*live, existing.clone(), "exists already"),
        ] {
            let error = backup(url, &target).unwrap_err().to_string();
            assert!(error.contains(message), "{url}: {error}");
            assert!(!error.contains("secret"), "{error}");
        }
        assert_eq!(std::fs::read(&existing).unwrap(), b"x", "never overwritten");
        let copy = dir.path().join("copy.db");
        let taken = backup(&live, &copy).unwrap();
        assert_eq!((taken.tasks, taken.open_routes), (0, 0));
        assert!(!dir.path().join("copy.db.partial").exists());
    }
}
