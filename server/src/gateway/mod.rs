//! The gateway face (docs/SPEC.md §8): OpenAI's `POST /v1/chat/completions`
//! and Anthropic's `POST /v1/messages`, so a client of either protocol gets
//! Switchback's recovery by changing its base URL; `GET /v1/models` lists the
//! profiles. The request's `model` names a profile; each call is a task of
//! kind `gateway`, run by the same engine as every task (its candidates,
//! policies, circuits and record), within the client's deadline.
//!
//! - [`request`]: the body and headers read and checked.
//! - [`shapes`]: answers, stream events and errors in each protocol's shape.
//! - here: the task started, its route followed until it answers, fails or the
//!   client goes; what the client gets, and when.
//!
//! A streaming client's answer begins with the first piece of text: until then
//! any failure is the route's to recover, and the client may still get a plain
//! HTTP error (429 with `Retry-After`, 404, ...). From then on a failure ends
//! the stream with the protocol's error event, never a normal stop, and the
//! route is held (`unsafe_effect`): what the client was sent cannot be taken
//! back, and a repeat could say something else.

pub mod request;
pub mod shapes;

use std::sync::Arc;

use api::{RouteView, TaskId, Timestamp};
use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::{DefaultBodyLimit, Extension, Request, State};
use axum::http::{HeaderMap, HeaderName, HeaderValue, StatusCode, header};
use axum::middleware::{Next, from_fn_with_state};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use policy::SemanticCode;
use policy::route::{RouteCause, RouteState};
use providers::{ClientRequest, StopReason, Wire};
use serde_json::json;
use tokio::sync::{mpsc, oneshot};

use self::request::DEFAULT_DEADLINE_MS;
use self::shapes::{Failure, Head};
use crate::domain::{GatewayCall, Task};
use crate::engine::{CallNews, Engine, task_write, views};
use crate::http::{AccessControl, AppState, HostGuard};
use crate::services::{Services, new_id};
use crate::store::StoreError;

/// The largest request body the gateway reads: long conversations are large.
pub const MAX_GATEWAY_BODY_BYTES: usize = 32 * 1024 * 1024;

/// The call's task id, in every answer.
pub const INVOCATION_HEADER: &str = "x-switchback-invocation";
/// How many attempts the call took.
pub const ATTEMPTS_HEADER: &str = "x-switchback-attempts";
/// The model of the candidate that answered (or failed last).
pub const CANDIDATE_HEADER: &str = "x-switchback-candidate";

/// The gateway's routes, with their own limits: no request time limit (the
/// client's deadline bounds a call), no budget of changes, a larger body.
pub fn router(state: &AppState) -> Router<AppState> {
    Router::new()
        .route("/v1/chat/completions", post(calls_in(Wire::OpenAi)))
        .route("/v1/messages", post(calls_in(Wire::Anthropic)))
        .route("/v1/models", get(models))
        .layer(DefaultBodyLimit::max(MAX_GATEWAY_BODY_BYTES))
        .layer(from_fn_with_state(
            (
                state.access.clone(),
                state.host_guard.clone(),
                state.services.clone(),
            ),
            admit,
        ))
}

/// The protocol a request to `path` speaks (`GET /v1/models` answers in
/// Anthropic's shape to a client that sends `anthropic-version`).
fn wire_of(path: &str, headers: &HeaderMap) -> Wire {
    if path == "/v1/messages" || headers.contains_key("anthropic-version") {
        Wire::Anthropic
    } else {
        Wire::OpenAi
    }
}

/// Who may call: anyone on a server without an admin token (loopback), as
/// for the rest of the server; on a guarded server, a caller with a working
/// client key (`Authorization: Bearer` or `x-api-key`), which then names only
/// its own profiles. The admin token is not a client key.
async fn admit(
    State((access, guard, services)): State<(AccessControl, HostGuard, Services)>,
    mut request: Request,
    next: Next,
) -> Response {
    let wire = wire_of(request.uri().path(), request.headers());
    let authority = request
        .uri()
        .authority()
        .map(|authority| authority.as_str());
    // Foreign host names and cross-site posts (a web page's, which would spend
    // the providers' credit) are refused as everywhere; SDKs send neither
    // `Origin` nor `Sec-Fetch-Site`.
    if let Some(refused) = guard.refusal(request.method(), authority, request.headers()) {
        return failure_response(wire, &Failure::new(403, refused.to_string()), None);
    }
    if !access.is_guarded() {
        return next.run(request).await;
    }
    let refused = |message: &str| {
        failure_response(
            wire,
            &Failure::new(401, message).with_code("invalid_api_key"),
            None,
        )
    };
    let Some(presented) = presented_key(request.headers()) else {
        return refused(
            "This server needs a client key: `Authorization: Bearer sbk_...` or `x-api-key: sbk_...`.",
        );
    };
    match services.client_key(&presented).await {
        Ok(Some(key)) => {
            request.extensions_mut().insert(Caller(Arc::new(key)));
            next.run(request).await
        }
        Ok(None) => refused(
            "This is not a working client key (keys begin with `sbk_`; the admin token is not one).",
        ),
        Err(error) => {
            tracing::error!(error = %error, "checking a client key failed");
            failure_response(
                wire,
                &Failure::new(500, "The key could not be checked."),
                None,
            )
        }
    }
}

/// The client key a request presents: OpenAI clients send it as a bearer
/// token, Anthropic clients as `x-api-key`.
fn presented_key(headers: &HeaderMap) -> Option<String> {
    let bearer = headers
        .get(header::AUTHORIZATION)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| {
            value
                .split_once(' ')
                .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
                .map(|(_, token)| token)
        });
    let api_key = headers
        .get("x-api-key")
        .and_then(|value| value.to_str().ok());
    bearer
        .or(api_key)
        .map(str::trim)
        .filter(|key| !key.is_empty())
        .map(str::to_owned)
}

/// The client key a guarded server admitted the call with.
#[derive(Debug, Clone)]
struct Caller(Arc<crate::domain::ClientKey>);

impl Caller {
    /// Whether the key may name `profile`.
    fn may_use(caller: Option<&Self>, profile: &api::ProfileId) -> bool {
        caller.is_none_or(|caller| caller.0.profile_ids.contains(profile))
    }
}

/// A gateway call's answer, to come.
type Answering = std::pin::Pin<Box<dyn std::future::Future<Output = Response> + Send>>;

/// The handler of one protocol's calls.
fn calls_in(
    wire: Wire,
) -> impl Fn(State<Services>, Option<Extension<Caller>>, HeaderMap, Bytes) -> Answering
+ Clone
+ Send
+ Sync
+ 'static {
    move |State(services), caller, headers, body| {
        Box::pin(serve(
            services,
            caller.map(|caller: Extension<Caller>| caller.0),
            wire,
            headers,
            body,
        ))
    }
}

/// The profiles a caller may name as `model`, in the protocol's list shape.
async fn models(
    State(services): State<Services>,
    caller: Option<Extension<Caller>>,
    headers: HeaderMap,
) -> Response {
    let wire = wire_of("/v1/models", &headers);
    let caller = caller.map(|caller| caller.0);
    let profiles: Vec<_> = match services.store.list_profiles().await {
        Ok(profiles) => profiles
            .into_iter()
            .filter(|profile| Caller::may_use(caller.as_ref(), &profile.id))
            .collect(),
        Err(error) => return internal(wire, &error),
    };
    let body = match wire {
        Wire::OpenAi => json!({
            "object": "list",
            "data": profiles.iter().map(|profile| json!({
                "id": profile.name,
                "object": "model",
                "created": profile.created_at.as_millis() / 1_000,
                "owned_by": "switchback",
            })).collect::<Vec<_>>(),
        }),
        Wire::Anthropic => json!({
            "data": profiles.iter().map(|profile| json!({
                "type": "model",
                "id": profile.name,
                "display_name": profile.name,
                "created_at": profile.created_at.to_string(),
            })).collect::<Vec<_>>(),
            "has_more": false,
            "first_id": profiles.first().map(|profile| profile.name.clone()),
            "last_id": profiles.last().map(|profile| profile.name.clone()),
        }),
    };
    axum::Json(body).into_response()
}

/// One gateway call, from its body to its answer.
async fn serve(
    services: Services,
    caller: Option<Caller>,
    wire: Wire,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let began = std::time::Instant::now();
    let call = match request::read(wire, &headers, &body) {
        Ok(call) => call,
        Err(refused) => {
            count("", "refused");
            return failure_response(wire, &refused, None);
        }
    };
    let engine = services.engine.clone();
    // A repeated Idempotency-Key follows the first call's task: only a gateway
    // call's, of a profile this caller may use, named as this one names it.
    if let Some(key) = &call.idempotency_key {
        match services.store.task_by_idempotency_key(key).await {
            Ok(Some(first)) => {
                let Some(respond_by) = first.task.respond_by_ms().filter(|_| {
                    Caller::may_use(caller.as_ref(), &first.task.profile_id)
                        && first.task.profile_name.eq_ignore_ascii_case(&call.model)
                }) else {
                    count("", "refused");
                    return failure_response(
                        wire,
                        &Failure::new(409, "This Idempotency-Key was used for another request.")
                            .with_param("Idempotency-Key")
                            .with_code("idempotency_key_reused"),
                        None,
                    );
                };
                let watch = engine.watch(&first.task.id);
                let head = head_of(&first.task.id, &call.model, first.task.created_at);
                return follow(Following {
                    services,
                    wire,
                    stream: call.stream,
                    task: Arc::new(first.task),
                    head,
                    respond_by_ms: respond_by,
                    watch,
                    cancel_on_leave: false,
                    from_start: false,
                    known: None,
                    began,
                })
                .await;
            }
            Ok(None) => {}
            Err(error) => return internal(wire, &error),
        }
    }
    let profile = match services.store.profile_by_name(&call.model).await {
        Ok(profile) if Caller::may_use(caller.as_ref(), &profile.id) => profile,
        // A key sees only its own profiles: another's is as unknown as none.
        Ok(_) | Err(StoreError::NotFound { .. }) => {
            count("", "refused");
            return failure_response(
                wire,
                &Failure::new(
                    404,
                    format!(
                        "The model `{}` does not exist: no Switchback profile has that name.",
                        call.model
                    ),
                )
                .with_param("model")
                .with_code("model_not_found"),
                None,
            );
        }
        Err(error) => return internal(wire, &error),
    };
    let now = services.clock.now();
    if services
        .open_tasks
        .check(&services.store, now.as_millis())
        .await
        .is_err()
    {
        count(&profile.name, "refused");
        return failure_response(
            wire,
            &Failure::new(
                429,
                "Switchback holds as many unfinished tasks as it may take; try again later.",
            )
            .with_code("too_many_tasks"),
            None,
        );
    }
    // The client's own deadline, else its profile's, else the server's.
    let deadline_ms = call.deadline_ms.unwrap_or_else(|| {
        profile
            .gateway_deadline_s
            .map_or(DEFAULT_DEADLINE_MS, |seconds| u64::from(seconds) * 1_000)
    });
    let respond_by_ms = now
        .as_millis()
        .saturating_add(i64::try_from(deadline_ms).unwrap_or(i64::MAX));
    let task = Task {
        id: TaskId::new(new_id()),
        profile_id: profile.id.clone(),
        profile_name: profile.name.clone(),
        candidates: profile.candidates,
        created_at: now,
        gateway: Some(Arc::new(GatewayCall {
            request: ClientRequest {
                wire,
                body: serde_json::Value::Object(call.body.clone()),
            },
            stream: call.stream,
            respond_by: Timestamp::from_millis(respond_by_ms),
        })),
    };
    let Some(write) = task_write(
        task.clone(),
        call.prompt.clone(),
        call.idempotency_key.clone(),
    ) else {
        count(&profile.name, "refused");
        return failure_response(
            wire,
            &Failure::new(
                400,
                format!("The profile `{}` has no enabled candidate.", profile.name),
            )
            .with_param("model"),
            None,
        );
    };
    // Watched before it exists: nothing it does is missed.
    let watch = engine.watch(&task.id);
    let head = head_of(&task.id, &call.model, now);
    let (detail, created) = match engine.create_and_send(write).await {
        Ok(created) => created,
        Err(error) => return internal(wire, &error),
    };
    if created {
        services.open_tasks.created();
    }
    let (task, watch, head, known) = if created {
        let known = Arc::new(views::route_view(&task, &detail.route));
        (Arc::new(task), watch, head, Some(known))
    } else {
        // The key was taken in between: follow the first call instead.
        let watch_first = engine.watch(&detail.task.id);
        let head = head_of(&detail.task.id, &call.model, detail.task.created_at);
        (Arc::new(detail.task), watch_first, head, None)
    };
    follow(Following {
        services,
        wire,
        stream: call.stream,
        respond_by_ms: task.respond_by_ms().unwrap_or(respond_by_ms),
        task,
        head,
        watch,
        cancel_on_leave: created,
        from_start: created,
        known,
        began,
    })
    .await
}

fn head_of(id: &TaskId, model: &str, created: Timestamp) -> Head {
    Head {
        id: id.as_str().to_owned(),
        model: model.to_owned(),
        created_s: created.as_millis() / 1_000,
    }
}

/// A call followed to its answer.
struct Following {
    services: Services,
    wire: Wire,
    stream: bool,
    task: Arc<Task>,
    head: Head,
    respond_by_ms: i64,
    watch: crate::engine::Watch,
    /// Whether this client owns the call: its leaving stops the route (a
    /// repeat of an idempotency key only follows it).
    cancel_on_leave: bool,
    /// Whether it watched the task from its creation (and so heard every
    /// piece of the answer).
    from_start: bool,
    /// The route as its creation left it, for the call that created it
    /// (others read it first).
    known: Option<Arc<RouteView>>,
    /// When the request came.
    began: std::time::Instant,
}

impl Following {
    /// Whether an OpenAI client asked for the stream's usage chunk.
    fn usage_chunk(&self) -> bool {
        self.wire == Wire::OpenAi
            && self.task.gateway.as_ref().is_some_and(|call| {
                call.request.body["stream_options"]["include_usage"]
                    == serde_json::Value::Bool(true)
            })
    }
}

/// What the client is told first: the whole answer or an error (a plain HTTP
/// response), or, streaming, that the answer has begun (its body follows).
enum Opening {
    Whole(Response),
    Stream(mpsc::Receiver<Bytes>, Vec<(HeaderName, HeaderValue)>),
}

/// Follow the call in a task of its own (which notices the client leaving
/// while the route waits), and answer what it says first.
async fn follow(following: Following) -> Response {
    let wire = following.wire;
    let id = following.task.id.clone();
    let (opening, opened) = oneshot::channel();
    tokio::spawn(run(following, opening));
    match opened.await {
        Ok(Opening::Whole(response)) => response,
        Ok(Opening::Stream(body, headers)) => {
            let stream = futures_util::stream::unfold(body, |mut body| async move {
                body.recv()
                    .await
                    .map(|bytes| (Ok::<_, std::convert::Infallible>(bytes), body))
            });
            let mut response = Response::new(Body::from_stream(stream));
            let response_headers = response.headers_mut();
            response_headers.insert(
                header::CONTENT_TYPE,
                HeaderValue::from_static("text/event-stream"),
            );
            response_headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
            for (name, value) in headers {
                response_headers.insert(name, value);
            }
            response
        }
        Err(_) => failure_response(
            wire,
            &Failure::new(500, "the call ended without an answer"),
            Some(&id),
        ),
    }
}

/// Where a followed call is.
#[derive(Default)]
struct Seen {
    /// The newest route heard.
    route: Option<Arc<RouteView>>,
    /// Attempts started.
    attempts: u32,
    /// The current attempt's text so far, and whether it answered (and why it
    /// stopped), as this process streamed it.
    text: String,
    /// The current attempt's tool calls so far.
    tools: Vec<providers::ToolCall>,
    stop: Option<StopReason>,
    usage: Option<providers::Usage>,
    /// Time in provider calls, and in the route's waits (a retry's backoff, a
    /// stated reset): not Switchback's own.
    elsewhere: std::time::Duration,
    /// Since when the route waits, while it does.
    waiting_since: Option<std::time::Instant>,
    /// The generation the attempt whose answer is collected started at.
    attempt: Option<i64>,
}

impl Seen {
    /// Whether news of the attempt started at `generation` is of the current
    /// attempt; a newer attempt's makes it the current one, and what an older
    /// one said is dropped (unless a stream had begun: then the route is held
    /// and no other attempt follows).
    fn of_current_attempt(&mut self, generation: i64, streaming: bool) -> bool {
        match self.attempt {
            Some(current) if generation < current => false,
            Some(current) if generation == current => true,
            _ => {
                self.attempt = Some(generation);
                if !streaming {
                    self.text.clear();
                    self.tools.clear();
                    self.stop = None;
                    self.usage = None;
                }
                true
            }
        }
    }

    fn headers(&self, id: &TaskId) -> Vec<(HeaderName, HeaderValue)> {
        let mut headers = vec![(
            HeaderName::from_static(INVOCATION_HEADER),
            HeaderValue::from_str(id.as_str()).unwrap_or_else(|_| HeaderValue::from_static("-")),
        )];
        headers.push((
            HeaderName::from_static(ATTEMPTS_HEADER),
            HeaderValue::from(self.attempts),
        ));
        if let Some(model) = self
            .route
            .as_ref()
            .and_then(|route| HeaderValue::from_str(&route.model).ok())
        {
            headers.push((HeaderName::from_static(CANDIDATE_HEADER), model));
        }
        headers
    }
}

/// Stops the route when the client leaves before its end (unless disarmed).
struct LeaveGuard {
    engine: Engine,
    id: TaskId,
    armed: bool,
}

impl Drop for LeaveGuard {
    fn drop(&mut self) {
        if self.armed {
            let (engine, id) = (self.engine.clone(), self.id.clone());
            tokio::spawn(async move {
                if let Err(error) = engine.cancel_for_client(&id).await {
                    tracing::warn!(task_id = %id, error = %error, "stopping a call its client left failed");
                }
            });
        }
    }
}

/// How long a follower waits without news before it reads the route itself
/// (news lost to a lagging feed, a transition on another replica).
const READ_AFTER_SILENCE: std::time::Duration = std::time::Duration::from_secs(1);

/// A call followed in its own task, counted when it ends:
/// `switchback_gateway_requests_total{profile,outcome}`, and Switchback's own
/// time in it (all of it but provider calls and the route's waits) as
/// `switchback_gateway_overhead_seconds`.
async fn run(following: Following, opening: oneshot::Sender<Opening>) {
    let profile = following.task.profile_name.clone();
    let began = following.began;
    let (outcome, elsewhere) = follow_call(following, opening).await;
    count(&profile, outcome);
    metrics::histogram!("switchback_gateway_overhead_seconds")
        .record(began.elapsed().saturating_sub(elsewhere).as_secs_f64());
}

/// Count a gateway request by profile and how it ended.
fn count(profile: &str, outcome: &'static str) {
    metrics::counter!(
        "switchback_gateway_requests_total",
        "profile" => profile.to_owned(),
        "outcome" => outcome
    )
    .increment(1);
}

/// Follow a call to its end, answering the client on the way; says how it
/// ended (the metric's `outcome`) and the time spent outside Switchback.
async fn follow_call(
    mut following: Following,
    opening: oneshot::Sender<Opening>,
) -> (&'static str, std::time::Duration) {
    let wire = following.wire;
    let id = following.task.id.clone();
    let mut guard = LeaveGuard {
        engine: following.services.engine.clone(),
        id: id.clone(),
        armed: following.cancel_on_leave,
    };
    let shared = following.services.store.is_shared();
    let stopping = following.services.engine.stopped();
    tokio::pin!(stopping);
    let mut seen = Seen::default();
    let mut opening = Some(opening);
    let mut body: Option<mpsc::Sender<Bytes>> = None;
    let clock = following.services.clock.clone();
    let mut writer = shapes::StreamWriter::new(wire, following.head.clone());
    // Read once first (a repeat may follow a call that already ended), unless
    // this call created it.
    let mut news = match following.known.clone() {
        Some(known) => Some(CallNews::Route(known)),
        None => read_route(&following).await.map(CallNews::Route),
    };
    loop {
        let news_now = match news.take() {
            Some(news) => Some(news),
            None => {
                // The deadline bounds waiting: for the first attempt, between
                // attempts, and for a stream to begin. An attempt in flight runs
                // to its provider's timeouts, and a stream begun to its end.
                let attempting = body.is_some()
                    || seen
                        .route
                        .as_ref()
                        .is_some_and(|route| route.state == RouteState::Running);
                let left_ms = following.respond_by_ms - clock.now().as_millis();
                if left_ms <= 0 && !attempting {
                    let failure = Failure::new(
                        504,
                        "No candidate answered within the call's deadline; the call is stopped.",
                    )
                    .with_code("deadline_exceeded");
                    end_with(wire, &id, &seen, failure, opening.take(), body.take()).await;
                    return ("deadline", seen.elsewhere);
                }
                // News of this process's commits cannot be missed; another
                // replica's come through the feed, which may lag: read the route
                // now and then.
                let wait = match (shared, left_ms > 0 && !attempting) {
                    (true, _) => READ_AFTER_SILENCE,
                    (false, true) => {
                        std::time::Duration::from_millis(u64::try_from(left_ms).unwrap_or(0))
                    }
                    (false, false) => std::time::Duration::from_secs(3_600),
                };
                let closed = async {
                    if let Some(body) = &body {
                        body.closed().await;
                    } else if let Some(opening) = opening.as_mut() {
                        opening.closed().await;
                    } else {
                        std::future::pending::<()>().await;
                    }
                };
                tokio::select! {
                    heard = following.watch.next() => heard,
                    () = closed => {
                        // The client left: the guard stops the route.
                        return ("client_left", seen.elsewhere);
                    }
                    () = &mut stopping => {
                        // The server is stopping: the next start stops the route.
                        guard.armed = false;
                        let failure = Failure::new(503, "Switchback is stopping; the call did not end.");
                        end_with(wire, &id, &seen, failure, opening.take(), body.take()).await;
                        return ("failed", seen.elsewhere);
                    }
                    () = tokio::time::sleep(wait) => {
                        if shared { read_route(&following).await.map(CallNews::Route) } else { None }
                    }
                }
            }
        };
        let Some(news_now) = news_now else { continue };
        // A follower that did not watch from the start heard only part of an
        // answer: it answers from the stored turn instead.
        if !following.from_start
            && matches!(
                news_now,
                CallNews::Text(..)
                    | CallNews::Tool(..)
                    | CallNews::Answered(..)
                    | CallNews::Usage(..)
            )
        {
            continue;
        }
        match news_now {
            CallNews::Text(generation, piece) => {
                if !seen.of_current_attempt(generation, body.is_some()) {
                    continue;
                }
                seen.text.push_str(&piece);
                if following.stream {
                    let mut events = stream_begins(&mut writer, &opening);
                    events.push_str(&writer.text(&piece));
                    if !stream_out(&seen, &id, events, &mut opening, &mut body).await {
                        return ("client_left", seen.elsewhere);
                    }
                }
            }
            CallNews::Tool(generation, piece) => {
                if !seen.of_current_attempt(generation, body.is_some()) {
                    continue;
                }
                piece.add_to(&mut seen.tools);
                if following.stream {
                    let mut events = stream_begins(&mut writer, &opening);
                    events.push_str(&writer.tool(&piece));
                    if !stream_out(&seen, &id, events, &mut opening, &mut body).await {
                        return ("client_left", seen.elsewhere);
                    }
                }
            }
            CallNews::Answered(generation, stop) => {
                if seen.of_current_attempt(generation, body.is_some()) {
                    // The task, its route and the attempt's start were durable
                    // before the request went out; a stop that wins the race
                    // with the outcome's commit only changes the record.
                    seen.stop = Some(stop);
                    break;
                }
            }
            CallNews::Usage(generation, usage) => {
                if seen.of_current_attempt(generation, body.is_some()) {
                    seen.usage = Some(usage);
                }
            }
            CallNews::Called(took) => seen.elsewhere += took,
            CallNews::Route(route) => {
                if seen
                    .route
                    .as_ref()
                    .is_some_and(|last| last.generation >= route.generation)
                {
                    continue;
                }
                if route.state == RouteState::Running {
                    seen.attempts += 1;
                    seen.of_current_attempt(route.generation.get(), body.is_some());
                }
                seen.route = Some(route.clone());
                let waits = matches!(
                    route.state,
                    RouteState::RetryWait | RouteState::WaitingForReset
                );
                match (waits, seen.waiting_since) {
                    (true, None) => seen.waiting_since = Some(std::time::Instant::now()),
                    (false, Some(since)) => {
                        seen.elsewhere += since.elapsed();
                        seen.waiting_since = None;
                    }
                    _ => {}
                }
                match route.state {
                    RouteState::Completed => break,
                    RouteState::Stopped | RouteState::Held => {
                        guard.armed = false;
                        let failure = failure_of(&following, &route).await;
                        end_with(wire, &id, &seen, failure, opening.take(), body.take()).await;
                        let outcome = match (route.state, route.cause) {
                            (RouteState::Held, _) => "held",
                            (_, Some(RouteCause::CancelledByClient)) => "client_left",
                            _ => "failed",
                        };
                        return (outcome, seen.elsewhere);
                    }
                    _ => {}
                }
            }
        }
    }
    // Answered: the provider's answer is whole (the client has it now, while
    // its outcome commits: a gateway call's answer always completes its
    // route), or the route completed (heard from another replica, or by a
    // repeat).
    guard.armed = false;
    complete(
        &following,
        &mut seen,
        &mut writer,
        opening.take(),
        body.take(),
    )
    .await;
    ("answered", seen.elsewhere)
}

/// The route as the store has it now, as a view.
async fn read_route(following: &Following) -> Option<Arc<RouteView>> {
    let progress = following
        .services
        .store
        .get_progress(&following.task.id)
        .await
        .ok()?;
    Some(Arc::new(views::route_view(
        &following.task,
        &progress.route,
    )))
}

/// The events that open a streamed answer, when it has not opened yet.
fn stream_begins(
    writer: &mut shapes::StreamWriter,
    opening: &Option<oneshot::Sender<Opening>>,
) -> String {
    if opening.is_some() {
        writer.opening()
    } else {
        String::new()
    }
}

/// Send `events` of a streamed answer: the stream opens (its headers, then
/// the events) with the first output. False when the client left.
async fn stream_out(
    seen: &Seen,
    id: &TaskId,
    events: String,
    opening: &mut Option<oneshot::Sender<Opening>>,
    body: &mut Option<mpsc::Sender<Bytes>>,
) -> bool {
    if let Some(opening) = opening.take() {
        let (sender, receiver) = mpsc::channel(64);
        let _ = sender.send(Bytes::from(events)).await;
        if opening
            .send(Opening::Stream(receiver, seen.headers(id)))
            .is_err()
        {
            return false;
        }
        *body = Some(sender);
        return true;
    }
    match body {
        Some(sender) => sender.send(Bytes::from(events)).await.is_ok(),
        None => true,
    }
}

/// The call answered: the whole answer, or the stream's end.
async fn complete(
    following: &Following,
    seen: &mut Seen,
    writer: &mut shapes::StreamWriter,
    opening: Option<oneshot::Sender<Opening>>,
    body: Option<mpsc::Sender<Bytes>>,
) {
    let wire = following.wire;
    let id = &following.task.id;
    if seen.stop.is_none() {
        // Answered elsewhere (another replica), or followed as a repeat: the
        // answer is the turn's.
        match following.services.store.get_task(id).await {
            Ok(detail) => {
                let turn = detail.turns.last();
                seen.text = turn
                    .and_then(|turn| turn.answer.clone())
                    .unwrap_or_default();
                seen.tools = turn.map(|turn| turn.tool_calls.clone()).unwrap_or_default();
                seen.stop = Some(if turn.is_some_and(|turn| turn.truncated) {
                    StopReason::MaxTokens
                } else if !seen.tools.is_empty() {
                    StopReason::Other("tool_use".to_owned())
                } else {
                    StopReason::End
                });
            }
            Err(error) => {
                end_with(wire, id, seen, internal_failure(&error), opening, body).await;
                return;
            }
        }
    }
    let stop = seen.stop.clone().unwrap_or(StopReason::End);
    match (opening, body) {
        (_, Some(body)) => {
            let _ = body
                .send(Bytes::from(writer.closing(
                    &stop,
                    seen.usage,
                    following.usage_chunk(),
                )))
                .await;
        }
        (Some(opening), None) if following.stream => {
            let (sender, receiver) = mpsc::channel(4);
            let mut events = writer.opening();
            if !seen.text.is_empty() {
                events.push_str(&writer.text(&seen.text));
            }
            for (index, call) in seen.tools.iter().enumerate() {
                events.push_str(&writer.tool_call(index, call));
            }
            events.push_str(&writer.closing(&stop, seen.usage, following.usage_chunk()));
            let _ = sender.send(Bytes::from(events)).await;
            let _ = opening.send(Opening::Stream(receiver, seen.headers(id)));
        }
        (Some(opening), None) => {
            let answer = shapes::whole(
                wire,
                &following.head,
                &seen.text,
                &seen.tools,
                &stop,
                seen.usage,
            );
            let mut response = axum::Json(answer).into_response();
            for (name, value) in seen.headers(id) {
                response.headers_mut().insert(name, value);
            }
            let _ = opening.send(Opening::Whole(response));
        }
        (None, None) => {}
    }
}

/// The call failed: a plain HTTP error, or, once the stream has begun, its
/// error event (never a normal end).
async fn end_with(
    wire: Wire,
    id: &TaskId,
    seen: &Seen,
    failure: Failure,
    opening: Option<oneshot::Sender<Opening>>,
    body: Option<mpsc::Sender<Bytes>>,
) {
    if let Some(body) = body {
        let _ = body.send(Bytes::from(failure.event(wire))).await;
        return;
    }
    if let Some(opening) = opening {
        let mut response = failure_response(wire, &failure, Some(id));
        for (name, value) in seen.headers(id) {
            response.headers_mut().insert(name, value);
        }
        let _ = opening.send(Opening::Whole(response));
    }
}

/// What a route that stopped or was held tells the client: its status and
/// words from the last failure, and when every candidate is cooling down,
/// `Retry-After` from the earliest reset Switchback knows of.
async fn failure_of(following: &Following, route: &RouteView) -> Failure {
    let wire = following.wire;
    let id = &following.task.id;
    let cause = route.safe_cause.clone().unwrap_or_default();
    let code = route.code;
    let base = match (route.state, route.cause) {
        (RouteState::Held, _) => Failure::new(
            502,
            format!(
                "The call failed and is held for a person (task {id}): {}",
                if cause.is_empty() {
                    "see its route"
                } else {
                    &cause
                }
            ),
        ),
        (_, Some(RouteCause::CancelledByClient)) => Failure::new(
            504,
            "The call was stopped: its client left or its deadline passed.",
        ),
        _ => match code {
            Some(SemanticCode::InvalidRequest | SemanticCode::ContextLengthExceeded) => {
                Failure::new(
                    400,
                    with_cause("No candidate could take this request", &cause),
                )
            }
            Some(SemanticCode::ContentFiltered) => Failure::new(
                400,
                with_cause("The request was refused by the provider's filter", &cause),
            ),
            Some(
                SemanticCode::RateLimited
                | SemanticCode::UsageLimited
                | SemanticCode::QuotaExhausted
                | SemanticCode::InsufficientCredits,
            ) => Failure::new(429, with_cause("Every candidate is limited", &cause)),
            Some(SemanticCode::Overloaded) => Failure::new(
                if wire == Wire::Anthropic { 529 } else { 503 },
                with_cause("Every candidate is overloaded", &cause),
            ),
            _ => Failure::new(502, with_cause("No candidate answered", &cause)),
        },
    };
    let mut failure = match code {
        Some(code) => base.with_code(code.as_str()),
        None => base,
    };
    if matches!(failure.status, 429 | 503 | 529) {
        failure.retry_after_s = earliest_reset_s(following).await;
    }
    failure
}

fn with_cause(what: &str, cause: &str) -> String {
    if cause.is_empty() {
        format!("{what}.")
    } else {
        format!("{what}: {cause}")
    }
}

/// Seconds until the earliest open circuit over the call's candidates closes.
async fn earliest_reset_s(following: &Following) -> Option<u64> {
    let now_ms = following.services.clock.now().as_millis();
    let mut earliest: Option<i64> = None;
    for candidate in following
        .task
        .candidates
        .iter()
        .filter(|candidate| candidate.enabled)
    {
        let Ok(circuits) = following
            .services
            .store
            .circuits_over(&candidate.provider_id, &candidate.model)
            .await
        else {
            continue;
        };
        for circuit in circuits
            .into_iter()
            .filter(|circuit| circuit.until_ms > now_ms)
        {
            earliest = Some(earliest.map_or(circuit.until_ms, |at| at.min(circuit.until_ms)));
        }
    }
    earliest.map(|at_ms| {
        u64::try_from((at_ms - now_ms + 999) / 1_000)
            .unwrap_or(1)
            .max(1)
    })
}

/// An error answer in `wire`'s shape.
fn failure_response(wire: Wire, failure: &Failure, id: Option<&TaskId>) -> Response {
    let status = StatusCode::from_u16(failure.status).unwrap_or(StatusCode::BAD_GATEWAY);
    let mut response = (status, axum::Json(failure.body(wire))).into_response();
    let headers = response.headers_mut();
    if let Some(seconds) = failure.retry_after_s {
        headers.insert(header::RETRY_AFTER, HeaderValue::from(seconds));
    }
    if let Some(id) = id
        && let Ok(value) = HeaderValue::from_str(id.as_str())
    {
        headers.insert(HeaderName::from_static(INVOCATION_HEADER), value);
    }
    response
}

fn internal_failure(error: &(dyn std::error::Error + 'static)) -> Failure {
    tracing::error!(error = %crate::error::chain(error), "a gateway call failed inside Switchback");
    Failure::new(500, "The call failed inside Switchback (see its log).")
}

fn internal(wire: Wire, error: &(dyn std::error::Error + 'static)) -> Response {
    failure_response(wire, &internal_failure(error), None)
}
