//! The task writer's WAL file, written in one system call a commit.
//!
//! SQLite writes each frame of a commit to the WAL as two `pwrite`s (its 24-byte
//! header, then the page), so a commit of 38 one-KiB pages makes 76 calls before
//! its `fsync`: on this kind of virtual machine about 0.1 ms, against 0.02 ms for
//! one call of the same bytes (bench/RESULTS.md). This VFS is SQLite's own default
//! VFS with one change: a WAL file's writes that follow each other are gathered in
//! memory and written in one call, before anything else is asked of the file (its
//! sync, a read, its size, a truncation, a file control, its close). Every other
//! file (the database, the `-shm`) is the default VFS's own, untouched.
//!
//! Why nothing is lost or seen early: the task writer's connection runs with
//! `synchronous = FULL` and `cache_spill = OFF` (`writer.rs`). Without spilling,
//! SQLite writes frames only when it commits, and with FULL it then syncs the WAL
//! before the wal-index shows the commit to any reader: the sync writes what was
//! gathered first. A frame on disk before the sync is worth nothing to recovery
//! (it checks every frame's checksum and stops at the last synced commit), so a
//! crash before it loses what was not yet durable either way. A write that does
//! not follow the gathered ones (the WAL's header after a restart, a rewritten
//! frame) writes the gathered ones first, so writes reach the file in SQLite's own
//! order.

use std::ffi::{CStr, c_char, c_int, c_void};
use std::sync::OnceLock;

use rusqlite::ffi;

/// The VFS's name, for `Connection::open_with_flags_and_vfs`.
pub(super) const NAME: &CStr = c"switchback-wal-batch";

/// Gathered bytes past this are written at once (a commit's frames are far fewer).
const MOST_GATHERED: usize = 4 << 20;

/// Registers the VFS (once; later calls return at once). Fails only if SQLite has
/// no default VFS or refuses the registration.
pub(super) fn register() -> Result<(), String> {
    static REGISTERED: OnceLock<Result<(), String>> = OnceLock::new();
    REGISTERED
        .get_or_init(|| {
            // SAFETY: `sqlite3_vfs_find(NULL)` returns the default VFS, which SQLite
            // keeps for the life of the process; it is only read here.
            let inner = unsafe { ffi::sqlite3_vfs_find(std::ptr::null()) };
            if inner.is_null() {
                return Err("SQLite has no default VFS".to_owned());
            }
            // SAFETY: `inner` is a valid VFS (above); copying it keeps every method
            // and its `pAppData`, which the copied methods read from the VFS they
            // are given.
            let mut vfs: ffi::sqlite3_vfs = unsafe { std::ptr::read(inner) };
            let inner_size = usize::try_from(vfs.szOsFile).map_err(|error| error.to_string())?;
            vfs.szOsFile =
                c_int::try_from(INNER_AT + inner_size).map_err(|error| error.to_string())?;
            vfs.pNext = std::ptr::null_mut();
            vfs.zName = NAME.as_ptr();
            vfs.xOpen = Some(open);
            INNER.set(Inner(inner)).ok();
            let vfs = Box::leak(Box::new(vfs));
            // SAFETY: `vfs` lives for the rest of the process (leaked), as SQLite
            // requires of a registered VFS.
            match unsafe { ffi::sqlite3_vfs_register(vfs, 0) } {
                ffi::SQLITE_OK => Ok(()),
                code => Err(format!("registering the WAL VFS failed ({code})")),
            }
        })
        .clone()
}

/// The default VFS, which opens and does everything but gather a WAL's writes.
struct Inner(*mut ffi::sqlite3_vfs);
// SAFETY: SQLite's VFS objects are safe to use from any thread (their methods
// are called on every connection's thread).
unsafe impl Send for Inner {}
// SAFETY: as above.
unsafe impl Sync for Inner {}
static INNER: OnceLock<Inner> = OnceLock::new();

/// A WAL file: SQLite's `sqlite3_file` first (its methods are [`METHODS`]), then the
/// gathered writes, then, at [`INNER_AT`], the default VFS's own file.
#[repr(C)]
struct WalFile {
    base: ffi::sqlite3_file,
    /// Bytes written since the last flush, to go at `at`.
    gathered: Vec<u8>,
    at: i64,
}

#[cfg(test)]
thread_local! {
    /// How many writes reached a WAL file from this thread.
    pub(super) static WRITES: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// Where the default VFS's file starts inside ours (aligned as SQLite aligns).
const INNER_AT: usize = std::mem::size_of::<WalFile>().next_multiple_of(16);

impl WalFile {
    /// The default VFS's file.
    ///
    /// # Safety
    /// `file` is a [`WalFile`] this VFS opened.
    unsafe fn inner(file: *mut ffi::sqlite3_file) -> *mut ffi::sqlite3_file {
        // SAFETY: SQLite allocated `szOsFile` bytes, past `INNER_AT` (register).
        unsafe { file.cast::<u8>().add(INNER_AT).cast() }
    }

    /// The default VFS's methods for its file.
    ///
    /// # Safety
    /// As [`WalFile::inner`], and the inner file is open.
    unsafe fn methods(file: *mut ffi::sqlite3_file) -> &'static ffi::sqlite3_io_methods {
        // SAFETY: an open file's methods live as long as its VFS: the process.
        unsafe { &*(*Self::inner(file)).pMethods }
    }

    /// Writes what was gathered, in one call; nothing is gathered afterwards, even
    /// when the write fails (SQLite then fails the commit, and writes its frames
    /// again from where they began).
    ///
    /// # Safety
    /// As [`WalFile::methods`].
    unsafe fn flush(file: *mut ffi::sqlite3_file) -> c_int {
        // SAFETY: `file` is a WalFile (the caller's promise).
        let this = unsafe { &mut *file.cast::<WalFile>() };
        if this.gathered.is_empty() {
            return ffi::SQLITE_OK;
        }
        let Ok(amount) = c_int::try_from(this.gathered.len()) else {
            this.gathered.clear();
            return ffi::SQLITE_IOERR_WRITE;
        };
        #[cfg(test)]
        WRITES.with(|writes| writes.set(writes.get() + 1));
        // SAFETY: the inner file is open; the buffer holds `amount` bytes.
        let code = unsafe {
            (Self::methods(file).xWrite.expect("a file writes"))(
                Self::inner(file),
                this.gathered.as_ptr().cast(),
                amount,
                this.at,
            )
        };
        this.gathered.clear();
        code
    }
}

unsafe extern "C" fn open(
    _vfs: *mut ffi::sqlite3_vfs,
    name: *const c_char,
    file: *mut ffi::sqlite3_file,
    flags: c_int,
    out_flags: *mut c_int,
) -> c_int {
    let inner = INNER.get().expect("registered before use").0;
    // SAFETY: `inner` is the default VFS, which opens every file.
    let inner_open = unsafe { (*inner).xOpen.expect("a VFS opens files") };
    if flags & ffi::SQLITE_OPEN_WAL == 0 {
        // Anything but a WAL is the default VFS's file, in the same room.
        // SAFETY: `file` has room for the default VFS's file (szOsFile is larger).
        return unsafe { inner_open(inner, name, file, flags, out_flags) };
    }
    // SAFETY: `file` has room for a WalFile and then the default VFS's file.
    unsafe {
        (*file).pMethods = std::ptr::null();
        let code = inner_open(inner, name, WalFile::inner(file), flags, out_flags);
        if code != ffi::SQLITE_OK || (*WalFile::inner(file)).pMethods.is_null() {
            return code;
        }
        std::ptr::addr_of_mut!((*file.cast::<WalFile>()).gathered).write(Vec::new());
        std::ptr::addr_of_mut!((*file.cast::<WalFile>()).at).write(0);
        (*file).pMethods = &METHODS;
        code
    }
}

/// A WAL file's methods: writes gathered, everything else the default VFS's after
/// a flush.
static METHODS: ffi::sqlite3_io_methods = ffi::sqlite3_io_methods {
    iVersion: 3,
    xClose: Some(close),
    xRead: Some(read),
    xWrite: Some(write),
    xTruncate: Some(truncate),
    xSync: Some(sync),
    xFileSize: Some(file_size),
    xLock: Some(lock),
    xUnlock: Some(unlock),
    xCheckReservedLock: Some(check_reserved_lock),
    xFileControl: Some(file_control),
    xSectorSize: Some(sector_size),
    xDeviceCharacteristics: Some(device_characteristics),
    xShmMap: Some(shm_map),
    xShmLock: Some(shm_lock),
    xShmBarrier: Some(shm_barrier),
    xShmUnmap: Some(shm_unmap),
    xFetch: Some(fetch),
    xUnfetch: Some(unfetch),
};

unsafe extern "C" fn write(
    file: *mut ffi::sqlite3_file,
    data: *const c_void,
    amount: c_int,
    offset: i64,
) -> c_int {
    let Ok(amount) = usize::try_from(amount) else {
        return ffi::SQLITE_IOERR_WRITE;
    };
    // SAFETY: SQLite calls this only on files this VFS opened as WalFiles, and
    // passes `amount` readable bytes at `data`. No other reference to the file is
    // held across the flushes.
    unsafe {
        let (at, gathered) = {
            let this = &*file.cast::<WalFile>();
            (this.at, this.gathered.len())
        };
        let follows =
            gathered > 0 && i64::try_from(gathered).is_ok_and(|gathered| at + gathered == offset);
        if !follows {
            let code = WalFile::flush(file);
            if code != ffi::SQLITE_OK {
                return code;
            }
            (*file.cast::<WalFile>()).at = offset;
        }
        let bytes = std::slice::from_raw_parts(data.cast::<u8>(), amount);
        let this = &mut *file.cast::<WalFile>();
        this.gathered.extend_from_slice(bytes);
        if this.gathered.len() >= MOST_GATHERED {
            return WalFile::flush(file);
        }
    }
    ffi::SQLITE_OK
}

unsafe extern "C" fn close(file: *mut ffi::sqlite3_file) -> c_int {
    // SAFETY: a WalFile this VFS opened; it is not used after its close.
    unsafe {
        let flushed = WalFile::flush(file);
        let closed = (WalFile::methods(file).xClose.expect("a file closes"))(WalFile::inner(file));
        std::ptr::drop_in_place(std::ptr::addr_of_mut!((*file.cast::<WalFile>()).gathered));
        (*file).pMethods = std::ptr::null();
        if flushed != ffi::SQLITE_OK {
            flushed
        } else {
            closed
        }
    }
}

/// Each of the default VFS's methods but write, close and the two that only
/// describe the device, called on its own file
/// once what was gathered is written.
macro_rules! after_a_flush {
    ($name:ident, $method:ident ( $($argument:ident : $type:ty),* )) => {
        unsafe extern "C" fn $name(file: *mut ffi::sqlite3_file $(, $argument: $type)*) -> c_int {
            // SAFETY: SQLite calls this only on files this VFS opened as WalFiles.
            unsafe {
                let code = WalFile::flush(file);
                if code != ffi::SQLITE_OK {
                    return code;
                }
                match WalFile::methods(file).$method {
                    Some(method) => method(WalFile::inner(file) $(, $argument)*),
                    None => ffi::SQLITE_IOERR,
                }
            }
        }
    };
}

after_a_flush!(read, xRead(data: *mut c_void, amount: c_int, offset: i64));
after_a_flush!(truncate, xTruncate(size: i64));
after_a_flush!(sync, xSync(flags: c_int));
after_a_flush!(file_size, xFileSize(size: *mut i64));
after_a_flush!(lock, xLock(level: c_int));
after_a_flush!(unlock, xUnlock(level: c_int));
after_a_flush!(check_reserved_lock, xCheckReservedLock(out: *mut c_int));
after_a_flush!(file_control, xFileControl(operation: c_int, argument: *mut c_void));
after_a_flush!(shm_map, xShmMap(page: c_int, size: c_int, extend: c_int, out: *mut *mut c_void));
after_a_flush!(shm_lock, xShmLock(offset: c_int, count: c_int, flags: c_int));
after_a_flush!(shm_unmap, xShmUnmap(delete: c_int));
after_a_flush!(fetch, xFetch(offset: i64, amount: c_int, out: *mut *mut c_void));
after_a_flush!(unfetch, xUnfetch(offset: i64, page: *mut c_void));

unsafe extern "C" fn shm_barrier(file: *mut ffi::sqlite3_file) {
    // SAFETY: SQLite calls this only on files this VFS opened as WalFiles.
    unsafe {
        WalFile::flush(file);
        if let Some(method) = WalFile::methods(file).xShmBarrier {
            method(WalFile::inner(file));
        }
    }
}

/// The default VFS's answer: these describe the device, and write nothing.
unsafe extern "C" fn sector_size(file: *mut ffi::sqlite3_file) -> c_int {
    // SAFETY: SQLite calls this only on files this VFS opened as WalFiles.
    unsafe {
        (WalFile::methods(file)
            .xSectorSize
            .expect("a file has sectors"))(WalFile::inner(file))
    }
}

/// As [`sector_size`].
unsafe extern "C" fn device_characteristics(file: *mut ffi::sqlite3_file) -> c_int {
    // SAFETY: SQLite calls this only on files this VFS opened as WalFiles.
    unsafe {
        (WalFile::methods(file)
            .xDeviceCharacteristics
            .expect("a file has characteristics"))(WalFile::inner(file))
    }
}

#[cfg(test)]
mod tests {
    use rusqlite::{Connection, OpenFlags};

    use super::WRITES;

    fn writes() -> usize {
        WRITES.with(std::cell::Cell::get)
    }

    /// Opens `path` as the task writer does: through this VFS, every commit synced,
    /// no cache spill, small pages, WAL.
    fn open_gathering(path: &std::path::Path) -> Connection {
        super::register().unwrap();
        let connection =
            Connection::open_with_flags_and_vfs(path, OpenFlags::default(), super::NAME).unwrap();
        connection
            .execute_batch(
                "PRAGMA synchronous = FULL; PRAGMA cache_spill = OFF; PRAGMA page_size = 1024;
                 PRAGMA journal_mode = WAL; PRAGMA wal_autocheckpoint = 0;",
            )
            .unwrap();
        connection
    }

    fn insert_rows(connection: &mut Connection, from: usize, count: usize) {
        let transaction = connection.transaction().unwrap();
        for n in from..from + count {
            transaction
                .execute(
                    "INSERT INTO rows (n, text) VALUES (?1, ?2)",
                    rusqlite::params![n as i64, format!("{n:0>200}")],
                )
                .unwrap();
        }
        transaction.commit().unwrap();
    }

    /// A commit of many pages reaches the WAL in one write (the first after the log
    /// starts again in two: SQLite syncs the new header before any frame); a reader
    /// on SQLite's own VFS sees each commit as soon as it returns; and the file
    /// checks whole and holds every row when opened again without this VFS.
    #[test]
    fn a_commit_is_one_write_seen_at_once_and_whole_after() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("gathered.db");
        let mut writer = open_gathering(&path);
        writer
            .execute_batch(
                "CREATE TABLE rows (n INTEGER PRIMARY KEY, text TEXT NOT NULL);
                 CREATE INDEX rows_text ON rows (text);",
            )
            .unwrap();
        let reader = Connection::open(&path).unwrap();
        let count = |connection: &Connection| -> usize {
            connection
                .query_row("SELECT COUNT(*) FROM rows", [], |row| row.get::<_, i64>(0))
                .unwrap() as usize
        };
        let log = dir.path().join("gathered.db-wal");
        let log_size = || std::fs::metadata(&log).unwrap().len();
        let mut rows = 0;
        for round in 0..2 {
            for commit in 0..10 {
                let before = (writes(), log_size());
                insert_rows(&mut writer, rows, 40);
                rows += 40;
                let after = (writes(), log_size());
                assert!(
                    after.1 - before.1 >= 20 * 1024,
                    "a commit of many pages: {before:?} {after:?}"
                );
                let restarted = round == 1 && commit == 0;
                assert_eq!(
                    after.0 - before.0,
                    if restarted { 2 } else { 1 },
                    "writes of commit {commit}, round {round}"
                );
                assert_eq!(count(&reader), rows, "seen by a reader at once");
            }
            // The log starts again from its beginning (header, then frames).
            writer
                .query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |row| {
                    row.get::<_, i64>(0)
                })
                .unwrap();
        }
        drop((writer, reader));
        let reopened = Connection::open(&path).unwrap();
        let check: String = reopened
            .query_row("PRAGMA integrity_check", [], |row| row.get(0))
            .unwrap();
        assert_eq!(check, "ok");
        assert_eq!(count(&reopened), rows);
    }
}
