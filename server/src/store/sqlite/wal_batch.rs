//! The task writer's WAL file, written in one system call a commit.
//!
//! SQLite writes each frame of a commit to the WAL as two `pwrite`s (its 24-byte
//! header, then the page), so a commit of 38 one-KiB pages makes 76 calls before
//! its `fsync`: on this kind of virtual machine about 0.1 ms, against 0.02 ms for
//! one call of the same bytes (bench/RESULTS.md). This VFS is SQLite's own default
//! VFS with one change: a WAL file's writes that follow each other are gathered in
//! memory and written in one call (one per 64 KiB, the most the default VFS writes
//! at once), before anything else is asked of the file (its sync, a read, its
//! size, a truncation, a file control, its close). Every other file (the database,
//! the `-shm`) is the default VFS's own, untouched.
//!
//! Why nothing is lost or seen early: the task writer's connection runs with
//! `synchronous = FULL` and `cache_spill = OFF`, on a file that allows power-safe
//! overwrites (SQLite's default), which [`guard`] checks and then keeps: a statement
//! that would change the first two, or the journal mode, is refused. Without
//! spilling, SQLite writes frames only when it commits; with FULL it then syncs the
//! WAL before the wal-index shows the commit to any reader, and the sync writes what
//! was gathered first; with power-safe overwrites it pads no frame after that sync.
//! A frame on disk before the sync is worth nothing to recovery (it checks every
//! frame's checksum and stops at the last synced commit), so a crash before it
//! loses what was not yet durable either way. A write that does not follow the
//! gathered ones (the WAL's header after a restart, a rewritten frame) writes the
//! gathered ones first, so writes reach the file in SQLite's own order.

use std::ffi::{CStr, c_char, c_int, c_void};
use std::sync::OnceLock;

use rusqlite::ffi;

/// The VFS's name, for `Connection::open_with_flags_and_vfs`.
pub(super) const NAME: &CStr = c"switchback-wal-batch";

/// Gathered bytes past this are written at once (a commit's frames are far fewer).
const MOST_GATHERED: usize = 4 << 20;

/// The most bytes one call writes: the default VFS writes less than 128 KiB a call
/// (it masks a longer length to its low 17 bits, and a write of a multiple of
/// 128 KiB would write nothing and fail as a full disk). A batch larger than a
/// gateway call's commit (some 35 KB) takes a call per 64 KiB.
const MOST_AT_ONCE: usize = 64 << 10;

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

/// Checks that `connection` (opened through this VFS) runs as gathering needs (see
/// the module's doc), and refuses from then on any statement that would change it.
pub(super) fn guard(connection: &rusqlite::Connection) -> Result<(), String> {
    let pragma = |name: &str| -> Result<i64, String> {
        connection
            .query_row(&format!("PRAGMA {name}"), [], |row| row.get(0))
            .map_err(|error| format!("reading PRAGMA {name}: {error}"))
    };
    if pragma("synchronous")? < 2 {
        return Err("the task writer's WAL needs synchronous = FULL".to_owned());
    }
    if pragma("cache_spill")? != 0 {
        return Err("the task writer's WAL needs cache_spill = OFF".to_owned());
    }
    let mut power_safe: c_int = -1;
    // SAFETY: the handle is the connection's own, used on its thread for one call;
    // this file control reads (with -1) an int through the pointer it is given.
    let code = unsafe {
        ffi::sqlite3_file_control(
            connection.handle(),
            c"main".as_ptr(),
            ffi::SQLITE_FCNTL_POWERSAFE_OVERWRITE,
            std::ptr::addr_of_mut!(power_safe).cast(),
        )
    };
    if code != ffi::SQLITE_OK || power_safe != 1 {
        return Err("the task writer's WAL needs power-safe overwrites (psow)".to_owned());
    }
    connection
        .authorizer(Some(
            |context: rusqlite::hooks::AuthContext<'_>| match context.action {
                rusqlite::hooks::AuthAction::Pragma {
                    pragma_name,
                    pragma_value: Some(_),
                } if ["synchronous", "cache_spill", "journal_mode"]
                    .iter()
                    .any(|kept| pragma_name.eq_ignore_ascii_case(kept)) =>
                {
                    rusqlite::hooks::Authorization::Deny
                }
                _ => rusqlite::hooks::Authorization::Allow,
            },
        ))
        .map_err(|error| error.to_string())
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

/// Where the default VFS's file starts inside ours: past ours, on a multiple of 8,
/// as SQLite places it (it allocates `szOsFile` bytes aligned to 8, all any file
/// here needs).
const INNER_AT: usize = std::mem::size_of::<WalFile>().next_multiple_of(8);
const _: () = assert!(std::mem::align_of::<WalFile>() <= 8);

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

    /// Writes what was gathered, a call per [`MOST_AT_ONCE`] bytes (one for a
    /// gateway call's commit); nothing is gathered afterwards, even
    /// when the write fails (SQLite then fails the commit, and writes its frames
    /// again from where they began).
    ///
    /// # Safety
    /// As [`WalFile::methods`].
    unsafe fn flush(file: *mut ffi::sqlite3_file) -> c_int {
        // SAFETY: `file` is a WalFile (the caller's promise).
        let this = unsafe { &mut *file.cast::<WalFile>() };
        let mut code = ffi::SQLITE_OK;
        let mut at = this.at;
        for chunk in this.gathered.chunks(MOST_AT_ONCE) {
            #[cfg(test)]
            WRITES.with(|writes| writes.set(writes.get() + 1));
            // SAFETY: the inner file is open; `chunk` holds its length in bytes,
            // which is below `MOST_AT_ONCE` and so fits a c_int.
            code = unsafe {
                (Self::methods(file).xWrite.expect("a file writes"))(
                    Self::inner(file),
                    chunk.as_ptr().cast(),
                    chunk.len() as c_int,
                    at,
                )
            };
            if code != ffi::SQLITE_OK {
                break;
            }
            at += chunk.len() as i64;
        }
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
        let opened = WalFile::inner(file);
        let code = inner_open(inner, name, opened, flags, out_flags);
        let methods = (*opened).pMethods;
        if code != ffi::SQLITE_OK {
            // A failed open that left methods set is closed (SQLite will not).
            if let Some(close) = methods.as_ref().and_then(|methods| methods.xClose) {
                close(opened);
            }
            return code;
        }
        if methods.is_null() {
            return ffi::SQLITE_CANTOPEN;
        }
        std::ptr::addr_of_mut!((*file.cast::<WalFile>()).gathered).write(Vec::new());
        std::ptr::addr_of_mut!((*file.cast::<WalFile>()).at).write(0);
        (*file).pMethods = &METHODS;
        code
    }
}

/// A WAL file's methods: writes gathered, everything else the default VFS's after
/// a flush. Version 1: SQLite asks a WAL file for no shared memory and no memory
/// map (those go to the database file, which is the default VFS's own).
static METHODS: ffi::sqlite3_io_methods = ffi::sqlite3_io_methods {
    iVersion: 1,
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
    xShmMap: None,
    xShmLock: None,
    xShmBarrier: None,
    xShmUnmap: None,
    xFetch: None,
    xUnfetch: None,
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
    /// no cache spill, small pages, WAL; and a page cache of ten pages, so that
    /// each transaction below would spill if spilling were on.
    fn open_gathering(path: &std::path::Path) -> Connection {
        super::register().unwrap();
        let connection =
            Connection::open_with_flags_and_vfs(path, OpenFlags::default(), super::NAME).unwrap();
        connection
            .execute_batch(
                "PRAGMA synchronous = FULL; PRAGMA cache_spill = OFF; PRAGMA page_size = 1024;
                 PRAGMA journal_mode = WAL; PRAGMA wal_autocheckpoint = 0; PRAGMA cache_size = 10;",
            )
            .unwrap();
        super::guard(&connection).unwrap();
        connection
    }

    /// Inserts `count` rows in one transaction, after rows inserted and taken back
    /// in a savepoint of their own.
    fn insert_rows(connection: &mut Connection, from: usize, count: usize) {
        let mut transaction = connection.transaction().unwrap();
        let mut savepoint = transaction.savepoint().unwrap();
        savepoint
            .execute("INSERT INTO rows (n, text) VALUES (-1, 'taken back')", [])
            .unwrap();
        savepoint.rollback().unwrap();
        drop(savepoint);
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

    /// A commit of many more pages than the cache holds reaches the WAL in one
    /// write (the first after the log starts again in two: SQLite syncs the new
    /// header before any frame), between commits of another connection on SQLite's
    /// own VFS, which sees each of ours as soon as it returns; and the file checks
    /// whole and holds every row when opened again without this VFS. A commit too
    /// large for one write takes one a 64 KiB.
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
        let other = Connection::open(&path).unwrap();
        other
            .busy_timeout(std::time::Duration::from_secs(5))
            .unwrap();
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
                assert_eq!(count(&other), rows, "seen by another connection at once");
                // The other connection writes the log next, where ours left it.
                other
                    .execute(
                        "INSERT INTO rows (n, text) VALUES (?1, 'the other')",
                        [1_000_000 + rows as i64],
                    )
                    .unwrap();
                rows += 1;
            }
            // The log starts again from its beginning (header, then frames).
            writer
                .query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |row| {
                    row.get::<_, i64>(0)
                })
                .unwrap();
        }
        // A commit of some 800 KB, the first in the emptied log: its header (32
        // bytes, synced first), then a write per 64 KiB of frames, none of 128 KiB
        // or more (which SQLite's own VFS cannot write).
        let before = (writes(), log_size());
        assert_eq!(before.1, 0, "emptied");
        insert_rows(&mut writer, rows, 1_500);
        rows += 1_500;
        let after = (writes(), log_size());
        let chunks = (after.1 - 32).div_ceil(64 << 10) as usize;
        assert!(chunks > 4, "a large commit: {before:?} {after:?}");
        assert_eq!(
            after.0 - before.0,
            1 + chunks,
            "the header, then a write per 64 KiB"
        );
        assert_eq!(count(&writer), rows, "the writer reads the other's rows");
        drop((writer, other));
        let reopened = Connection::open(&path).unwrap();
        let check: String = reopened
            .query_row("PRAGMA integrity_check", [], |row| row.get(0))
            .unwrap();
        assert_eq!(check, "ok");
        assert_eq!(count(&reopened), rows);
    }

    /// The guard refuses a connection that would publish gathered frames unsynced,
    /// or spill them, and keeps a guarded one from being changed to either.
    #[test]
    fn the_guard_keeps_every_commit_synced_and_unspilled() {
        let dir = tempfile::tempdir().unwrap();
        super::register().unwrap();
        let open = |settings: &str| {
            let connection = Connection::open_with_flags_and_vfs(
                dir.path().join("guarded.db"),
                OpenFlags::default(),
                super::NAME,
            )
            .unwrap();
            connection.execute_batch(settings).unwrap();
            connection
        };
        let error = super::guard(&open(
            "PRAGMA synchronous = NORMAL; PRAGMA cache_spill = OFF;",
        ))
        .unwrap_err();
        assert!(error.contains("synchronous"), "{error}");
        let error = super::guard(&open("PRAGMA synchronous = FULL;")).unwrap_err();
        assert!(error.contains("cache_spill"), "{error}");
        let guarded = open("PRAGMA synchronous = FULL; PRAGMA cache_spill = OFF;");
        super::guard(&guarded).unwrap();
        for change in [
            "PRAGMA synchronous = NORMAL",
            "PRAGMA cache_spill = ON",
            "PRAGMA Journal_Mode = DELETE",
        ] {
            assert!(guarded.execute_batch(change).is_err(), "{change} refused");
        }
        let synchronous: i64 = guarded
            .query_row("PRAGMA synchronous", [], |row| row.get(0))
            .unwrap();
        assert_eq!(synchronous, 2, "reading is allowed, and it is unchanged");
        guarded
            .execute_batch("PRAGMA foreign_keys = ON; CREATE TABLE t (x);")
            .unwrap();
    }
}
