//! The route event log's order in PostgreSQL: each committed event is given
//! its public id after its commit, one batch at a time under a lock held to the
//! batch's commit, so an event committed before another is never given a later
//! id; each batch is announced to every replica, which reads the log in id
//! order. Also the channels replicas announce on.

use super::PostgresStore;
use crate::domain::StoredEvent;
use crate::store::StoreError;

/// The channel a committed stop is announced on (`GENERATION TASK_ID`), so the
/// replica with the call in flight cuts it.
pub(super) const CANCELS: &str = "switchback_route_cancels";

/// The channel a sequenced batch's last id is announced on, to be read.
pub(super) const SEQUENCED: &str = "switchback_route_events_sequenced";

/// The advisory lock that orders the event log (any constant the schema owns).
const EVENT_LOCK: i64 = 0x5357_4954_4348;

/// Events sequenced at once, at most.
pub(super) const SEQUENCE_BATCH: u64 = 4_096;

impl PostgresStore {
    /// Give every committed event not yet sequenced its public id, in one
    /// transaction holding the log's lock to its commit (so batches, and the ids in
    /// them, follow one another in commit order), and announce the batch. Answers
    /// how many it sequenced. Any replica may run it at any time: a second run
    /// waits for the first, then finds what committed since.
    pub(super) async fn sequence(&self) -> Result<u64, StoreError> {
        // Most often another replica sequenced them already: one look, no lock.
        let pending: bool =
            sqlx::query_scalar("SELECT EXISTS (SELECT 1 FROM route_events WHERE seq IS NULL)")
                .fetch_one(&self.pool)
                .await?;
        if !pending {
            return Ok(0);
        }
        let mut tx = self.pool.begin().await?;
        sqlx::query("SELECT pg_advisory_xact_lock($1)")
            .bind(EVENT_LOCK)
            .execute(&mut *tx)
            .await?;
        let count: Option<i64> = sqlx::query_scalar(
            "WITH pending AS (SELECT id FROM route_events WHERE seq IS NULL ORDER BY id LIMIT $1), \
             numbered AS (SELECT id, nextval('route_event_seq') AS seq FROM pending), \
             sequenced AS (UPDATE route_events SET seq = numbered.seq FROM numbered \
             WHERE route_events.id = numbered.id RETURNING route_events.seq), \
             batch AS (SELECT COUNT(*) AS count, MAX(seq) AS last FROM sequenced \
             HAVING COUNT(*) > 0) \
             SELECT count FROM batch, LATERAL pg_notify($2, last::text)",
        )
        .bind(SEQUENCE_BATCH.cast_signed())
        .bind(SEQUENCED)
        .fetch_optional(&mut *tx)
        .await?;
        tx.commit().await?;
        Ok(count.map_or(0, i64::unsigned_abs))
    }

    /// The sequenced events after `after_id`, oldest first, and the oldest id kept
    /// (or, unless `exact_oldest`, the first one read when it follows `after_id`:
    /// enough to tell that nothing was pruned between).
    pub(super) async fn read_log(
        &self,
        after_id: i64,
        limit: u32,
        exact_oldest: bool,
    ) -> Result<(Vec<StoredEvent>, Option<i64>), StoreError> {
        let rows: Vec<(i64, String)> = sqlx::query_as(
            "SELECT seq, data_json FROM route_events WHERE seq > $1 ORDER BY seq LIMIT $2",
        )
        .bind(after_id)
        .bind(i64::from(limit))
        .fetch_all(&self.pool)
        .await?;
        // When the next id follows on, nothing between was pruned: unless asked
        // for the oldest kept, the first is as good.
        let oldest = match rows.first() {
            Some((first, _)) if !exact_oldest && *first == after_id + 1 => Some(*first),
            _ => {
                sqlx::query_scalar("SELECT MIN(seq) FROM route_events")
                    .fetch_one(&self.pool)
                    .await?
            }
        };
        Ok((
            rows.into_iter()
                .map(|(id, data_json)| StoredEvent { id, data_json })
                .collect(),
            oldest,
        ))
    }
}
