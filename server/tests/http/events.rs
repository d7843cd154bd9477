//! `GET /api/events`: one `route` event per committed transition, after its commit,
//! each with an id; a reconnecting client gets what it missed, or `resync`.

use std::time::Duration;

use axum::body::Body;
use axum::http::{Method, Request, StatusCode, header};
use http_body_util::BodyExt;
use serde_json::{Value, json};
use tower::ServiceExt;

use super::{Api, HOST};

/// An open event stream, read event by event.
pub(super) struct Stream {
    body: Body,
    buffer: String,
}

/// One server-sent event.
#[derive(Debug)]
pub(super) struct Event {
    pub(super) id: i64,
    pub(super) name: String,
    pub(super) data: Value,
}

impl Stream {
    pub(super) async fn open(api: &Api, last_event_id: Option<i64>) -> Self {
        let mut request = Request::builder()
            .method(Method::GET)
            .uri("/api/events")
            .header(header::HOST, HOST);
        if let Some(id) = last_event_id {
            request = request.header("last-event-id", id.to_string());
        }
        let response = api
            .router()
            .oneshot(request.body(Body::empty()).unwrap())
            .await
            .unwrap();
        assert_eq!(response.status(), StatusCode::OK);
        assert_eq!(
            response.headers()[header::CONTENT_TYPE],
            "text/event-stream"
        );
        Self {
            body: response.into_body(),
            buffer: String::new(),
        }
    }

    /// The next event (keep-alive comments skipped).
    pub(super) async fn next(&mut self) -> Event {
        loop {
            if let Some(end) = self.buffer.find("\n\n") {
                let block: String = self.buffer.drain(..end + 2).collect();
                let (mut id, mut name, mut data) = (None, String::new(), String::new());
                for line in block.lines() {
                    if let Some(value) = line.strip_prefix("id:") {
                        id = value.trim().parse().ok();
                    } else if let Some(value) = line.strip_prefix("event:") {
                        name = value.trim().to_owned();
                    } else if let Some(value) = line.strip_prefix("data:") {
                        data.push_str(value.trim_start());
                    }
                }
                if let Some(id) = id {
                    return Event {
                        id,
                        name,
                        data: serde_json::from_str(&data).unwrap(),
                    };
                }
                continue;
            }
            let frame = tokio::time::timeout(Duration::from_secs(20), self.body.frame())
                .await
                .expect("an event within 20 s")
                .expect("the stream is open")
                .unwrap();
            if let Ok(bytes) = frame.into_data() {
                self.buffer.push_str(std::str::from_utf8(&bytes).unwrap());
            }
        }
    }

    /// Events until `task`'s route has left `queued` and `running` (its attempt
    /// ended), within a bound.
    pub(super) async fn until_settled(&mut self, task: &str) {
        tokio::time::timeout(Duration::from_secs(60), async {
            loop {
                let event = self.next().await;
                if event.data["task_id"] == task
                    && !matches!(event.data["state"].as_str(), Some("queued" | "running"))
                {
                    return;
                }
            }
        })
        .await
        .expect("the attempt ended");
    }

    /// Events until one for `task` in `state`.
    pub(super) async fn until(&mut self, task: &str, state: &str) -> Vec<Event> {
        let mut events = Vec::new();
        loop {
            let event = self.next().await;
            let done = event.data["task_id"] == task && event.data["state"] == state;
            events.push(event);
            if done {
                return events;
            }
        }
    }
}

async fn task(api: &Api) -> String {
    let (status, provider) = api
        .call(
            Method::POST,
            "/api/providers",
            Some(json!({"name": format!("sim {}", uuid::Uuid::new_v4()), "kind": "simulated", "script": [{"reply": "hi"}]})),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{provider}");
    let (_, profile) = api
        .call(
            Method::POST,
            "/api/profiles",
            Some(json!({"name": format!("p {}", uuid::Uuid::new_v4()), "candidates": [{"provider_id": provider["id"], "model": "m", "enabled": true, "max_tokens": 10}]})),
        )
        .await;
    let (status, task) = api
        .call(
            Method::POST,
            "/api/tasks",
            Some(json!({"profile_id": profile["id"], "prompt": "hello"})),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{task}");
    task["id"].as_str().unwrap().to_owned()
}

#[tokio::test]
async fn each_committed_transition_is_one_route_event() {
    let api = Api::new().await;
    let mut stream = Stream::open(&api, None).await;
    let id = task(&api).await;
    let events = stream.until(&id, "completed").await;
    let states: Vec<&str> = events
        .iter()
        .filter(|event| event.data["task_id"] == id.as_str())
        .map(|event| event.data["state"].as_str().unwrap())
        .collect();
    assert_eq!(states, ["queued", "running", "completed"]);
    assert!(events.iter().all(|event| event.name == "route"));
    assert!(
        events.windows(2).all(|pair| pair[0].id < pair[1].id),
        "ids increase"
    );
    let last = events.last().unwrap();
    assert_eq!(last.data["generation"], 2);
    // What was published is what is stored.
    let (_, stored) = api
        .call(Method::GET, &format!("/api/tasks/{id}"), None)
        .await;
    assert_eq!(stored["route"], last.data);
}

#[tokio::test]
async fn a_reconnecting_client_gets_what_it_missed_or_is_told_to_resync() {
    let api = Api::new().await;
    let mut stream = Stream::open(&api, None).await;
    let id = task(&api).await;
    let events = stream.until(&id, "completed").await;
    let first = events[0].id;
    drop(stream);

    // Missed: everything after the first event, in order.
    let mut again = Stream::open(&api, Some(first)).await;
    let replayed = again.until(&id, "completed").await;
    let states: Vec<&str> = replayed
        .iter()
        .map(|event| event.data["state"].as_str().unwrap())
        .collect();
    assert_eq!(states, ["running", "completed"]);
    assert_eq!(replayed[0].id, events[1].id);

    // Events no longer kept: resync.
    api.services.store.prune_events(1, 1_000).await.unwrap();
    let mut stale = Stream::open(&api, Some(first)).await;
    let event = stale.next().await;
    assert_eq!(event.name, "resync");
    // Live events follow the resync.
    let next = task(&api).await;
    stale.until(&next, "completed").await;
}
