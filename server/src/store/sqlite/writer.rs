//! The task writer: a thread of its own with one SQLite connection, through which
//! every write of tasks, routes, attempts, turns, circuits and route events goes,
//! in batches (group commit).
//!
//! Routes make transitions many at a time, and each must be durable before it is
//! acted on. One transaction per transition would pay one fsync each (with
//! `synchronous = FULL`); here, whatever arrived while the previous batch was
//! being written is written together: one `BEGIN IMMEDIATE` transaction, one
//! savepoint per job, one commit. A job that fails rolls back its savepoint alone
//! and the others stand; a route found at another generation has written nothing
//! (its fenced UPDATE is its first statement). Only after the commit does each
//! job's `after` run, in commit order (the engine publishes its event there, so
//! events go out in the order of their ids), and its caller hear the result. A
//! write nobody waits on (a gateway call's outcome, its answer already sent)
//! rides with the next batch rather than pay an fsync of its own, and goes alone
//! only after waiting 2 ms.
//!
//! A thread, not an async driver: a statement here is a function call on a
//! prepared, cached statement, not a round trip to a worker thread. Copying the
//! log back into the database (a checkpoint) is another thread's, after the
//! batches, so no batch waits for one. The other
//! writer (profiles and providers, through sqlx) takes the same [`Gate`], so the
//! two never meet SQLite's busy handler.

use std::collections::VecDeque;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::sync::mpsc::{Receiver, RecvTimeoutError, SyncSender, TrySendError, sync_channel};
use std::time::Duration;

use rusqlite::{Connection, OpenFlags, TransactionBehavior};
use tokio::sync::oneshot;

use super::wal_batch;
use crate::store::StoreError;

/// Taken by whichever writer writes: the task writer for a batch, the sqlx writer
/// for a transaction.
pub(super) type Gate = Arc<tokio::sync::Mutex<()>>;

/// The most jobs of work in progress written in one transaction.
const MAX_BATCH: usize = 1_024;

/// The most new tasks written in one transaction: enough that a burst is taken
/// in quickly, few enough that the batch stays short for the routes in it.
pub(super) const NEW_PER_BATCH: usize = 16;

/// Jobs waiting for the writer before senders wait too (backpressure).
const QUEUE: usize = 16_384;

/// The longest an unhurried job waits for other work to ride with.
const UNHURRIED_WAIT: Duration = Duration::from_millis(2);

/// How long the checkpointer lets batches gather before it copies them back.
const CHECKPOINT_AFTER: Duration = Duration::from_millis(20);

/// Log pages (about 10 MB at 1 KiB a page, 40 MB at 4 KiB) past which the writer
/// checkpoints itself, should the checkpointer fall that far behind (SQLite's
/// default is 1,000).
const WAL_FRAMES_BEFORE_THE_WRITER_CHECKPOINTS: i64 = 10_000;

/// Run after a batch: told whether the batch committed.
type Settle = Box<dyn FnOnce(Result<(), &str>) + Send>;

/// What a job did in its savepoint.
enum Done {
    /// Keep it (release the savepoint); settle after the commit.
    Keep(Settle),
    /// Roll it back (it failed); settle all the same, with its own error.
    RollBack(Settle),
}

/// A job: run on the connection (in its savepoint), or refused with the batch's
/// error before it could run.
type Job = Box<dyn for<'c> FnOnce(Result<&'c Connection, &'c str>) -> Done + Send>;

/// Which work a job is: a writer under load writes work in progress first.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Work {
    /// A route's transition, an attempt's end, a probe's claim: what a deadline or
    /// a running call waits for.
    InProgress,
    /// A new task: at most [`NEW_PER_BATCH`] in a batch, so a burst of new tasks
    /// does not lengthen the batches that routes in progress wait for.
    New,
    /// A write nobody waits on: it rides with the next batch, and starts one of
    /// its own only after [`UNHURRIED_WAIT`], so it seldom costs an `fsync`.
    Unhurried,
}

enum Message {
    Job(Job, Work),
    /// Write what came before, end the thread (closing its connection), then say so.
    Close(oneshot::Sender<()>),
}

/// The handle to the writer thread: cheap to clone.
#[derive(Clone)]
pub(super) struct TaskWriter {
    jobs: SyncSender<Message>,
}

impl std::fmt::Debug for TaskWriter {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.debug_struct("TaskWriter").finish_non_exhaustive()
    }
}

impl TaskWriter {
    /// Open the database file at `path` (already migrated) and start the thread; it
    /// ends when every handle is dropped.
    pub(super) fn start(path: &std::path::Path, gate: Gate) -> Result<Self, String> {
        wal_batch::register()?;
        // The writer's WAL is written a commit at a time (`wal_batch.rs`), which
        // needs every commit synced (FULL) and no frames written before a commit
        // (no cache spill): set before anything is written.
        let open = |vfs: Option<&std::ffi::CStr>| -> Result<Connection, rusqlite::Error> {
            let connection = match vfs {
                Some(vfs) => Connection::open_with_flags_and_vfs(path, OpenFlags::default(), vfs)?,
                None => Connection::open(path)?,
            };
            connection.busy_timeout(Duration::from_secs(10))?;
            connection.pragma_update(None, "synchronous", "FULL")?;
            connection.pragma_update(None, "cache_spill", "OFF")?;
            connection.pragma_update(None, "journal_mode", "WAL")?;
            connection.pragma_update(None, "foreign_keys", "ON")?;
            // Savepoints keep their undo in memory rather than in a temporary file.
            connection.pragma_update(None, "temp_store", "MEMORY")?;
            connection.set_prepared_statement_cache_capacity(64);
            Ok(connection)
        };
        let connection = open(Some(wal_batch::NAME)).map_err(|error| error.to_string())?;
        // Checkpoints are the checkpointer's (below); the writer checkpoints only
        // if that one falls far behind.
        connection
            .pragma_update(
                None,
                "wal_autocheckpoint",
                WAL_FRAMES_BEFORE_THE_WRITER_CHECKPOINTS,
            )
            .map_err(|error| error.to_string())?;
        wal_batch::guard(&connection)?;
        let checkpointer = open(None).map_err(|error| error.to_string())?;
        let (written, batches) = sync_channel(1);
        std::thread::Builder::new()
            .name("switchback-checkpoints".to_owned())
            .spawn(move || checkpoint(&checkpointer, &batches))
            .map_err(|error| error.to_string())?;
        let (jobs, receiver) = sync_channel(QUEUE);
        std::thread::Builder::new()
            .name("switchback-task-writer".to_owned())
            .spawn(move || run(connection, &receiver, &gate, &written))
            .map_err(|error| error.to_string())?;
        Ok(Self { jobs })
    }

    /// Run `work` in the next batch and answer its result once the batch is
    /// durable; `after` sees a successful result first, on the writer thread, in
    /// commit order. A failed `work` writes nothing.
    pub(super) async fn write<T: Send + 'static>(
        &self,
        work: impl FnOnce(&Connection) -> Result<T, StoreError> + Send + 'static,
        after: impl FnOnce(&T) + Send + 'static,
    ) -> Result<T, StoreError> {
        self.submit(work, after, Work::InProgress).await
    }

    /// [`TaskWriter::write`] for a new task: written after the work in progress
    /// when the writer has a backlog.
    pub(super) async fn write_new<T: Send + 'static>(
        &self,
        work: impl FnOnce(&Connection) -> Result<T, StoreError> + Send + 'static,
        after: impl FnOnce(&T) + Send + 'static,
    ) -> Result<T, StoreError> {
        self.submit(work, after, Work::New).await
    }

    /// [`TaskWriter::write`] for a write nobody waits on: written with the next
    /// batch, or on its own after [`UNHURRIED_WAIT`].
    pub(super) async fn write_unhurried<T: Send + 'static>(
        &self,
        work: impl FnOnce(&Connection) -> Result<T, StoreError> + Send + 'static,
        after: impl FnOnce(&T) + Send + 'static,
    ) -> Result<T, StoreError> {
        self.submit(work, after, Work::Unhurried).await
    }

    async fn submit<T: Send + 'static>(
        &self,
        work: impl FnOnce(&Connection) -> Result<T, StoreError> + Send + 'static,
        after: impl FnOnce(&T) + Send + 'static,
        kind: Work,
    ) -> Result<T, StoreError> {
        let (reply, answer) = oneshot::channel();
        // A panic in a job or its `after` is this job's failure, never the thread's:
        // the writer goes on for everyone else.
        let job: Job = Box::new(move |connection| {
            let worked = match connection {
                Ok(connection) => catch_unwind(AssertUnwindSafe(|| work(connection)))
                    .unwrap_or_else(|_| Err(StoreError::Write("a write panicked".to_owned()))),
                Err(message) => Err(StoreError::Write(message.to_owned())),
            };
            match worked {
                Ok(value) => Done::Keep(Box::new(move |committed| {
                    let _ = reply.send(match committed {
                        Ok(()) => {
                            if catch_unwind(AssertUnwindSafe(|| after(&value))).is_err() {
                                tracing::error!("a write's after-commit step panicked");
                            }
                            Ok(value)
                        }
                        Err(message) => Err(StoreError::Write(message.to_owned())),
                    });
                })),
                Err(error) => Done::RollBack(Box::new(move |_| {
                    let _ = reply.send(Err(error));
                })),
            }
        });
        self.send(Message::Job(job, kind)).await?;
        answer.await.unwrap_or_else(|_| Err(stopped()))
    }

    /// Write what is queued, then stop the thread and close its connection; later
    /// writes fail. Answers once it is done.
    pub(super) async fn close(&self) {
        let (done, closed) = oneshot::channel();
        if self.send(Message::Close(done)).await.is_ok() {
            let _ = closed.await;
        }
    }

    /// Queue a message; while the queue is full, wait for room.
    async fn send(&self, mut message: Message) -> Result<(), StoreError> {
        loop {
            match self.jobs.try_send(message) {
                Ok(()) => return Ok(()),
                Err(TrySendError::Full(back)) => {
                    message = back;
                    tokio::time::sleep(Duration::from_millis(1)).await;
                }
                Err(TrySendError::Disconnected(_)) => return Err(stopped()),
            }
        }
    }
}

fn stopped() -> StoreError {
    StoreError::Write("the task writer has stopped".to_owned())
}

/// Copy the write-ahead log back into the database file after batches commit,
/// on a connection and thread of its own (a PASSIVE checkpoint: it never holds
/// the writer up), so no batch pays for a checkpoint of its own. Ends when the
/// writer does; closing the writer's connection checkpoints what is left.
fn checkpoint(connection: &Connection, batches: &Receiver<()>) {
    while batches.recv().is_ok() {
        // Let a few batches land first: one checkpoint for them all.
        std::thread::sleep(CHECKPOINT_AFTER);
        while batches.try_recv().is_ok() {}
        if let Err(error) = connection.query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |_| Ok(())) {
            tracing::warn!(error = %error, "a checkpoint failed; the next batch tries again");
        }
    }
}

/// Write batches until every handle is gone; tell the checkpointer of each.
fn run(
    mut connection: Connection,
    jobs: &Receiver<Message>,
    gate: &Gate,
    written: &SyncSender<()>,
) {
    let mut closing = None;
    // New tasks that arrived beyond a batch's share, oldest first.
    let mut new_tasks: VecDeque<Job> = VecDeque::new();
    // Unhurried jobs waiting for a batch to ride with, and since when.
    let mut unhurried: Vec<Job> = Vec::new();
    let mut unhurried_since: Option<std::time::Instant> = None;
    while closing.is_none() {
        let mut batch = Vec::new();
        // Wait for work only when none is left over, and no longer than the
        // oldest unhurried job may wait.
        let first = if new_tasks.is_empty() {
            let arrived = match unhurried_since {
                None => jobs.recv().map_err(|_| RecvTimeoutError::Disconnected),
                Some(since) => jobs.recv_timeout(UNHURRIED_WAIT.saturating_sub(since.elapsed())),
            };
            match arrived {
                Ok(message) => Some(message),
                Err(RecvTimeoutError::Timeout) => None,
                // Every handle is gone, so nobody waits on what is left.
                Err(RecvTimeoutError::Disconnected) => return,
            }
        } else {
            None
        };
        let mut arrived = first
            .into_iter()
            .chain(std::iter::from_fn(|| jobs.try_recv().ok()));
        while batch.len() < MAX_BATCH {
            match arrived.next() {
                Some(Message::Job(job, Work::InProgress)) => batch.push(job),
                Some(Message::Job(job, Work::New)) => new_tasks.push_back(job),
                Some(Message::Job(job, Work::Unhurried)) => {
                    unhurried_since.get_or_insert_with(std::time::Instant::now);
                    unhurried.push(job);
                }
                Some(Message::Close(done)) => {
                    // What is queued is written before the writer ends.
                    closing = Some(done);
                    batch.extend(new_tasks.drain(..));
                    batch.append(&mut unhurried);
                    break;
                }
                None => break,
            }
        }
        let share = NEW_PER_BATCH.min(new_tasks.len());
        batch.extend(new_tasks.drain(..share));
        // Unhurried jobs ride with other work, or go on their own once due.
        let due = unhurried_since.is_some_and(|since| since.elapsed() >= UNHURRIED_WAIT);
        if !batch.is_empty() || due {
            batch.append(&mut unhurried);
            unhurried_since = None;
        }
        if batch.is_empty() {
            continue;
        }
        let size = batch.len();
        let guard = gate.blocking_lock();
        let (settles, committed) = write_batch(&mut connection, batch);
        drop(guard);
        if let Err(message) = &committed {
            tracing::error!(error = %message, jobs = size, "a write batch failed");
        }
        for settle in settles {
            settle(committed.as_ref().copied().map_err(String::as_str));
        }
        // Full: a checkpoint is already due.
        let _ = written.try_send(());
        #[allow(clippy::cast_precision_loss)]
        metrics::histogram!("switchback_write_batch_jobs").record(size as f64);
    }
    drop(connection);
    if let Some(done) = closing {
        let _ = done.send(());
    }
}

/// One transaction: each job in its savepoint. Answers each job's settlement and
/// whether the transaction committed; if it could not be written, the jobs not run
/// yet are refused with its error and the ones run are rolled back with it.
fn write_batch(connection: &mut Connection, batch: Vec<Job>) -> (Vec<Settle>, Result<(), String>) {
    let mut settles = Vec::with_capacity(batch.len());
    let mut jobs = batch.into_iter();
    let failed = match connection.transaction_with_behavior(TransactionBehavior::Immediate) {
        Err(error) => error.to_string(),
        Ok(mut transaction) => {
            let mut failed = None;
            for job in jobs.by_ref() {
                let savepoint = match transaction.savepoint() {
                    Ok(savepoint) => savepoint,
                    Err(error) => {
                        let message = error.to_string();
                        settles.push(settle_of(job(Err(&message))));
                        failed = Some(message);
                        break;
                    }
                };
                match job(Ok(&*savepoint)) {
                    Done::Keep(settle) => {
                        settles.push(settle);
                        if let Err(error) = savepoint.commit() {
                            failed = Some(error.to_string());
                            break;
                        }
                    }
                    // A failed job's statements are undone (a savepoint rolls back
                    // unless committed); the batch goes on.
                    Done::RollBack(settle) => {
                        settles.push(settle);
                        if let Err(error) = savepoint.finish() {
                            failed = Some(error.to_string());
                            break;
                        }
                    }
                }
            }
            match failed {
                // Dropping the transaction rolls it back.
                Some(message) => message,
                None => {
                    return (
                        settles,
                        transaction.commit().map_err(|error| error.to_string()),
                    );
                }
            }
        }
    };
    settles.extend(jobs.map(|job| settle_of(job(Err(&failed)))));
    (settles, Err(failed))
}

fn settle_of(done: Done) -> Settle {
    match done {
        Done::Keep(settle) | Done::RollBack(settle) => settle,
    }
}
