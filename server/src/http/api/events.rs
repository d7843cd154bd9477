//! `GET /api/events`: server-sent events, one `route` event per committed
//! transition (its data the route view with `task_id`), sent only after the
//! commit. Every event has an `id`: a client that reconnects with
//! `Last-Event-ID` first receives what it missed, replayed from the database,
//! or a `resync` event when that is no longer kept (or it fell too far behind),
//! after which it should read the routes it shows again.

use std::convert::Infallible;
use std::time::Duration;

use axum::extract::State;
use axum::http::HeaderMap;
use axum::response::sse::{Event, KeepAlive, Sse};
use futures_util::stream::{self, Stream, StreamExt};
use tokio::sync::broadcast::error::RecvError;

use crate::domain::Feed;
use crate::error::AppError;
use crate::services::Services;

/// The most events replayed to a reconnecting client before it is told to resync.
const REPLAY_MAX: u32 = 1_000;

/// Live route changes, as server-sent events.
#[utoipa::path(get, path = "/api/events", tag = "tasks",
    params(("Last-Event-ID" = Option<i64>, Header, description = "The id of the last event received: what was missed is replayed, or a `resync` event says to read everything again")),
    responses(
        (status = 200, description = "`event: route` with the route view (and `task_id`) as `data` and an increasing `id`, one per committed transition; `event: resync` when missed events cannot be replayed", content_type = "text/event-stream", body = String),
    ))]
pub async fn events(
    State(services): State<Services>,
    headers: HeaderMap,
) -> Result<Sse<impl Stream<Item = Result<Event, Infallible>>>, AppError> {
    // Subscribe before reading the log, so nothing committed in between is lost;
    // what both give is sent once (live events at or below the replayed id are skipped).
    let receiver = services.engine.subscribe();
    let last_seen: Option<i64> = headers
        .get("last-event-id")
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.trim().parse().ok());
    let mut opening = Vec::new();
    let mut sent_up_to = services.store.last_event_id().await?;
    if let Some(last_seen) = last_seen {
        let (missed, oldest) = services.store.events_after(last_seen, REPLAY_MAX).await?;
        let gap = oldest.is_some_and(|oldest| oldest > last_seen + 1)
            || missed.len() == REPLAY_MAX as usize;
        if gap {
            opening.push(resync(sent_up_to));
        } else {
            if let Some(last) = missed.last() {
                sent_up_to = sent_up_to.max(last.id);
            }
            opening.extend(
                missed
                    .into_iter()
                    .map(|event| route_event(event.id, &event.data_json)),
            );
        }
    }
    let live = stream::unfold(receiver, move |mut receiver| async move {
        loop {
            match receiver.recv().await {
                Ok(Feed::Event(published)) if published.id <= sent_up_to => continue,
                Ok(Feed::Event(published)) => {
                    return Some((route_event(published.id, &published.data), receiver));
                }
                // The store may have missed events: so may this client.
                Ok(Feed::Resync) => return Some((resync(sent_up_to), receiver)),
                // For the engine: nothing to show.
                Ok(Feed::Cancel { .. }) => continue,
                // Too far behind to catch up from memory: say so.
                Err(RecvError::Lagged(_)) => return Some((resync(sent_up_to), receiver)),
                Err(RecvError::Closed) => return None,
            }
        }
    });
    // The stream ends when the server stops, so a graceful shutdown is not held open.
    let stream = stream::iter(opening)
        .chain(live)
        .take_until(services.engine.stopped())
        .map(Ok);
    Ok(Sse::new(stream).keep_alive(KeepAlive::new().interval(Duration::from_secs(15))))
}

fn route_event(id: i64, data: &str) -> Event {
    Event::default()
        .event("route")
        .id(id.to_string())
        .data(data)
}

fn resync(last_id: i64) -> Event {
    Event::default()
        .event("resync")
        .id(last_id.to_string())
        .data("{}")
}
