//! The gateway face through the real router, on a loopback mock provider:
//! both protocols, whole and streamed; recovery by the candidates' policies;
//! a stream cut after its first piece; an unknown model; a request a candidate
//! cannot carry; a client that leaves while its call waits.

use std::time::Duration;

use axum::body::Body;
use axum::http::{Method, Request, StatusCode, header};
use policy::route::RouteState;
use providers::mock::{MockEnd, MockProvider, MockResponse};
use providers::{StopReason, Wire, read_stream_chunks};
use serde_json::{Value, json};
use tower::ServiceExt;

use super::{Answer, Api, HOST};

/// OpenAI's answer to a throttled request, saying to come back in 30 s.
fn throttled_for_30s() -> MockResponse {
    MockResponse::status(
        429,
        &[("retry-after", "30")],
        r#"{"error":{"message":"Rate limit reached for requests","type":"requests","param":null,"code":"rate_limit_exceeded"}}"#,
    )
}

/// A candidate's policy: no retries, no waits; skip to the next on any failure.
fn skip_at_once() -> Value {
    let section = json!({"retry": {"enabled": false, "max_retries": 2, "initial_interval_ms": 500},
                         "reset_wait": {"enabled": false, "max_wait_s": 60}, "on_exhausted": "skip"});
    json!({"version": 2, "transient": section, "hard": section})
}

impl Api {
    /// A provider of `kind` at `base_url`.
    async fn provider_at(&self, name: &str, kind: &str, base_url: &str) -> String {
        let (status, body) = self
            .call(
                Method::POST,
                "/api/providers",
                Some(json!({"name": name, "kind": kind, "base_url": base_url})),
            )
            .await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
        body["id"].as_str().unwrap().to_owned()
    }

    /// A profile `name` of these (provider, model) candidates, each skipping at once.
    async fn gateway_profile(&self, name: &str, candidates: &[(&str, &str)]) {
        let candidates: Vec<Value> = candidates
            .iter()
            .map(|(provider, model)| {
                json!({"provider_id": provider, "model": model, "enabled": true,
                                           "max_tokens": 256, "policy": skip_at_once()})
            })
            .collect();
        let (status, body) = self
            .call(
                Method::POST,
                "/api/profiles",
                Some(json!({"name": name, "candidates": candidates})),
            )
            .await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
    }

    /// A gateway call in `wire`'s protocol.
    async fn gateway(&self, wire: Wire, body: Value, headers: &[(&str, &str)]) -> Answer {
        self.send(gateway_request(wire, &body, headers)).await
    }

    /// A task as the API shows it once its route is not running (a gateway
    /// call's outcome commits just after its client has the answer).
    async fn task_json(&self, id: &str) -> Value {
        testkit::eventually_async(Duration::from_secs(10), || async {
            let (status, body) = self
                .call(Method::GET, &format!("/api/tasks/{id}"), None)
                .await;
            assert_eq!(status, StatusCode::OK, "{body}");
            (body["route"]["state"] != "running").then_some(body)
        })
        .await
    }
}

/// An API whose profile `fast` has one candidate, `model` on a mock provider.
async fn one_candidate(model: &str) -> (Api, MockProvider) {
    let api = Api::new().await;
    let mock = MockProvider::start().await;
    let provider = api
        .provider_at("mock", "openai_compatible", &mock.base_url())
        .await;
    api.gateway_profile("fast", &[(&provider, model)]).await;
    (api, mock)
}

/// An API whose profile `fast` has two candidates, `first` then `second`, on
/// providers of one mock, each skipping at once.
async fn two_candidates(first: &str, second: &str) -> (Api, MockProvider) {
    let api = Api::new().await;
    let mock = MockProvider::start().await;
    let a = api
        .provider_at("mock", "openai_compatible", &mock.base_url())
        .await;
    let b = api
        .provider_at("other", "openai_compatible", &mock.base_url())
        .await;
    api.gateway_profile("fast", &[(&a, first), (&b, second)])
        .await;
    (api, mock)
}

/// An API whose profile `patient` has one candidate on a mock provider, with
/// the default policy: transient failures retried, stated resets waited for.
async fn patient() -> (Api, MockProvider) {
    let api = Api::new().await;
    let mock = MockProvider::start().await;
    let provider = api
        .provider_at("mock", "openai_compatible", &mock.base_url())
        .await;
    let candidates =
        json!([{"provider_id": provider, "model": "gpt-mock", "enabled": true, "max_tokens": 64}]);
    let (status, body) = api
        .call(
            Method::POST,
            "/api/profiles",
            Some(json!({"name": "patient", "candidates": candidates})),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    (api, mock)
}

fn gateway_request(wire: Wire, body: &Value, headers: &[(&str, &str)]) -> Request<Body> {
    let path = match wire {
        Wire::OpenAi => "/v1/chat/completions",
        Wire::Anthropic => "/v1/messages",
    };
    let mut builder = Request::builder()
        .method(Method::POST)
        .uri(path)
        .header(header::HOST, HOST)
        .header(header::CONTENT_TYPE, "application/json");
    for (name, value) in headers {
        builder = builder.header(*name, *value);
    }
    builder.body(Body::from(body.to_string())).unwrap()
}

fn ask(model: &str, stream: bool) -> Value {
    json!({"model": model, "max_tokens": 100, "stream": stream,
           "messages": [{"role": "user", "content": "Say hello"}]})
}

fn header<'a>(answer: &'a Answer, name: &str) -> &'a str {
    answer
        .headers
        .get(name)
        .and_then(|value| value.to_str().ok())
        .unwrap_or_else(|| panic!("no {name} header: {:?}", answer.headers))
}

#[tokio::test]
async fn an_openai_client_gets_the_whole_answer_and_its_call_is_a_task() {
    let (api, mock) = one_candidate("gpt-mock").await;
    // The recorder is installed by the first scrape.
    api.call(Method::GET, "/metrics", None).await;
    mock.push(MockResponse::reply("Hello there"));
    let answer = api.gateway(Wire::OpenAi, ask("Fast", false), &[]).await;
    assert_eq!(answer.status, StatusCode::OK, "{}", answer.text);
    let body = answer.json();
    assert_eq!(body["object"], "chat.completion");
    assert_eq!(body["model"], "Fast", "the model as the client named it");
    assert_eq!(body["choices"][0]["message"]["content"], "Hello there");
    assert_eq!(body["choices"][0]["finish_reason"], "stop");
    let id = header(&answer, "x-switchback-invocation");
    assert_eq!(body["id"], id);
    assert_eq!(header(&answer, "x-switchback-attempts"), "1");
    assert_eq!(header(&answer, "x-switchback-candidate"), "gpt-mock");
    // The provider got the client's request with the candidate's model.
    let sent = &mock.requests()[0];
    let sent = sent.body.clone();
    assert_eq!(
        (sent["model"].as_str(), sent["max_tokens"].as_u64()),
        (Some("gpt-mock"), Some(100))
    );
    // Recorded as a task, with its route, attempt and turn.
    let task = api.task_json(id).await;
    assert_eq!(task["kind"], "gateway");
    assert_eq!(task["route"]["state"], "completed");
    assert_eq!(task["turns"][0]["prompt"], "Say hello");
    assert_eq!(task["turns"][0]["answer"], "Hello there");
    assert_eq!(task["attempts"].as_array().unwrap().len(), 1);
    // Its client sends the whole conversation with each call: no new turns here.
    let (status, refused) = api
        .call(
            Method::POST,
            &format!("/api/tasks/{id}/turns"),
            Some(json!({"prompt": "And again?"})),
        )
        .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{refused}");
    assert_eq!(refused["error"], "not_allowed_now");
    // Counted, with Switchback's own time.
    let metrics = api
        .send(
            Request::builder()
                .uri("/metrics")
                .header(header::HOST, HOST)
                .body(Body::empty())
                .unwrap(),
        )
        .await
        .text;
    assert!(
        metrics
            .contains(r#"switchback_gateway_requests_total{profile="fast",outcome="answered"} 1"#),
        "{metrics}"
    );
    assert!(
        metrics.contains("switchback_gateway_overhead_seconds_count 1"),
        "{metrics}"
    );
}

impl Api {
    /// A new gateway call's task write for profile `fast`, as the gateway makes
    /// it.
    async fn gateway_write(&self) -> server::domain::TaskWrite {
        let profile = self.services.store.profile_by_name("fast").await.unwrap();
        let now = self.services.clock.now();
        let task = server::domain::Task {
            id: api::TaskId::new(uuid::Uuid::now_v7().to_string()),
            profile_id: profile.id,
            profile_name: profile.name,
            candidates: profile.candidates,
            created_at: now,
            gateway: Some(std::sync::Arc::new(server::domain::GatewayCall {
                request: providers::ClientRequest {
                    wire: Wire::OpenAi,
                    body: ask("fast", false),
                },
                stream: false,
                respond_by: api::Timestamp::from_millis(now.as_millis() + 60_000),
            })),
        };
        server::engine::task_write(task, "Say hello".to_owned(), None).unwrap()
    }
}

/// A call nothing stands in the way of has its first attempt recorded as
/// started in its task's creation commit (one commit before the request goes
/// out, not two); one whose candidate's circuit is open is created queued, for
/// the dispatcher to decide (here: wait for the circuit), and nothing is sent.
#[tokio::test]
async fn a_calls_first_attempt_starts_with_its_task_unless_a_circuit_is_open() {
    let (api, mock) = one_candidate("gpt-mock").await;
    let engine = &api.services.engine;
    mock.push(MockResponse::reply("Hello there"));
    // Its client waits on it (a call nobody waits on is left to the dispatcher,
    // which stops it).
    let write = api.gateway_write().await;
    let _watch = engine.watch(&write.task.id);
    let (started, created) = engine.create_and_send(write).await.unwrap();
    assert!(created);
    let route = &started.route.route;
    assert_eq!(
        (route.state, route.generation, started.attempts.len()),
        (RouteState::Running, 1, 1)
    );
    let id = started.task.id.as_str().to_owned();
    let answered = testkit::eventually_async(Duration::from_secs(10), || async {
        let task = api.task_json(&id).await;
        (task["route"]["state"] == "completed").then_some(task)
    })
    .await;
    assert_eq!(answered["turns"][0]["answer"], "Hello there");
    assert_eq!(answered["attempts"].as_array().unwrap().len(), 1);
    assert_eq!(mock.hits(), 1);
    // A throttle that says when to come back opens the candidate's circuit.
    mock.push(throttled_for_30s());
    let throttled = api.gateway(Wire::OpenAi, ask("fast", false), &[]).await;
    assert_eq!(
        throttled.status,
        StatusCode::TOO_MANY_REQUESTS,
        "{}",
        throttled.text
    );
    let write = api.gateway_write().await;
    let _watch = engine.watch(&write.task.id);
    let (queued, _) = engine.create_and_send(write).await.unwrap();
    let route = &queued.route.route;
    assert_eq!(
        (route.state, route.generation, queued.attempts.len()),
        (RouteState::Queued, 0, 0)
    );
    // The dispatcher decides: the route waits for the circuit (the clock
    // stands still), and nothing is sent.
    let id = queued.task.id.as_str().to_owned();
    let waiting = testkit::eventually_async(Duration::from_secs(10), || async {
        let task = api.task_json(&id).await;
        (task["route"]["state"] == "waiting_for_reset").then_some(task)
    })
    .await;
    assert_eq!(waiting["route"]["circuit_wait"], true, "{waiting}");
    assert_eq!(mock.hits(), 2, "nothing was sent to the open circuit");
}

#[tokio::test]
async fn an_anthropic_client_streams_the_answer_from_an_openai_candidate() {
    let (api, mock) = one_candidate("gpt-mock").await;
    mock.push(MockResponse::reply("Hello from the other side"));
    let body = json!({"model": "fast", "max_tokens": 50, "stream": true, "system": "Be brief.",
                      "messages": [{"role": "user", "content": "Say hello"}]});
    let answer = api.gateway(Wire::Anthropic, body, &[]).await;
    assert_eq!(answer.status, StatusCode::OK, "{}", answer.text);
    assert_eq!(header(&answer, "content-type"), "text/event-stream");
    assert!(
        answer.text.starts_with("event: message_start\n"),
        "{}",
        answer.text
    );
    assert!(
        answer
            .text
            .ends_with("event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"),
        "{}",
        answer.text
    );
    let reading = read_stream_chunks(Wire::Anthropic, [answer.text.as_bytes()]);
    assert_eq!(reading.text, "Hello from the other side");
    assert_eq!(reading.stop, Some(StopReason::End));
    // Translated: the system prompt became OpenAI's system message.
    let sent = mock.requests()[0].body.clone();
    assert_eq!(
        sent["messages"][0],
        json!({"role": "system", "content": "Be brief."})
    );
}

#[tokio::test]
async fn an_overloaded_candidate_is_skipped_for_the_next() {
    let api = Api::new().await;
    let first = MockProvider::start().await;
    let second = MockProvider::start().await;
    let a = api
        .provider_at("first", "openai_compatible", &first.base_url())
        .await;
    let b = api
        .provider_at("second", "openai_compatible", &second.base_url())
        .await;
    api.gateway_profile("fast", &[(&a, "claude-mock"), (&b, "gpt-mock")])
        .await;
    first.push(MockResponse::status(
        529,
        &[],
        r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#,
    ));
    second.push(MockResponse::reply("Second answers"));
    let answer = api.gateway(Wire::OpenAi, ask("fast", true), &[]).await;
    assert_eq!(answer.status, StatusCode::OK, "{}", answer.text);
    let reading = read_stream_chunks(Wire::OpenAi, [answer.text.as_bytes()]);
    assert_eq!(reading.text, "Second answers");
    assert!(answer.text.ends_with("data: [DONE]\n\n"), "{}", answer.text);
    assert_eq!(header(&answer, "x-switchback-attempts"), "2");
    assert_eq!(header(&answer, "x-switchback-candidate"), "gpt-mock");
}

#[tokio::test]
async fn when_every_candidate_is_limited_the_client_gets_429_with_retry_after() {
    let api = Api::new().await;
    let mock = MockProvider::start().await;
    let provider = api
        .provider_at("mock", "openai_compatible", &mock.base_url())
        .await;
    api.gateway_profile("fast", &[(&provider, "claude-mock")])
        .await;
    mock.push(throttled_for_30s());
    let answer = api.gateway(Wire::Anthropic, ask("fast", false), &[]).await;
    assert_eq!(
        answer.status,
        StatusCode::TOO_MANY_REQUESTS,
        "{}",
        answer.text
    );
    assert_eq!(answer.json()["type"], "error");
    assert_eq!(answer.json()["error"]["type"], "rate_limit_error");
    let retry_after: u64 = header(&answer, "retry-after").parse().unwrap();
    assert!((1..=30).contains(&retry_after), "{retry_after}");
}

#[tokio::test]
async fn a_stream_cut_after_its_first_piece_ends_in_an_error_and_holds_the_route() {
    let (api, mock) = two_candidates("claude-mock", "claude-other").await;
    mock.push(MockResponse::StreamError {
        text_before: "Hel".to_owned(),
        event: r#"{"error":{"message":"The server is overloaded","type":"server_error","param":null,"code":null}}"#
            .to_owned(),
    });
    let answer = api.gateway(Wire::Anthropic, ask("fast", true), &[]).await;
    assert_eq!(answer.status, StatusCode::OK, "the stream had begun");
    let reading = read_stream_chunks(Wire::Anthropic, [answer.text.as_bytes()]);
    assert_eq!(reading.text, "Hel");
    assert!(
        !answer.text.contains("message_stop"),
        "never a normal end: {}",
        answer.text
    );
    assert!(answer.text.contains("event: error\n"), "{}", answer.text);
    let id = header(&answer, "x-switchback-invocation");
    let task = api.task_json(id).await;
    assert_eq!(task["route"]["state"], "held");
    assert_eq!(task["route"]["cause"], "unsafe_effect");
    assert_eq!(mock.hits(), 1, "never sent again");
}

#[tokio::test]
async fn an_unknown_model_is_each_protocols_404() {
    let api = Api::new().await;
    let answer = api.gateway(Wire::OpenAi, ask("nope", false), &[]).await;
    assert_eq!(answer.status, StatusCode::NOT_FOUND);
    assert_eq!(answer.json()["error"]["code"], "model_not_found");
    assert_eq!(answer.json()["error"]["param"], "model");
    assert_eq!(answer.json()["error"]["type"], "invalid_request_error");
    let answer = api.gateway(Wire::Anthropic, ask("nope", true), &[]).await;
    assert_eq!(answer.status, StatusCode::NOT_FOUND);
    assert_eq!(answer.json()["error"]["type"], "not_found_error");
    let answer = api
        .gateway(Wire::OpenAi, json!({"model": "x", "messages": []}), &[])
        .await;
    assert_eq!(
        (answer.status, answer.json()["error"]["param"].clone()),
        (StatusCode::BAD_REQUEST, json!("messages"))
    );
}

#[tokio::test]
async fn a_request_a_candidate_cannot_carry_skips_it_saying_why() {
    let api = Api::new().await;
    let mock = MockProvider::start().await;
    let (status, simulated) = api
        .call(
            Method::POST,
            "/api/providers",
            Some(json!({"name": "sim", "kind": "simulated",
            "script": [{"reply": "simulated"}]})),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{simulated}");
    let simulated = simulated["id"].as_str().unwrap().to_owned();
    let real = api
        .provider_at("mock", "openai_compatible", &mock.base_url())
        .await;
    api.gateway_profile("tools", &[(&simulated, "sim"), (&real, "gpt-mock")])
        .await;
    mock.push(MockResponse::reply("A cat"));
    // An image: a simulated candidate carries text only.
    let image =
        json!({"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}});
    let body = json!({"model": "tools", "messages": [{"role": "user", "content": [
        {"type": "text", "text": "What is this?"}, image]}]});
    let answer = api.gateway(Wire::OpenAi, body, &[]).await;
    assert_eq!(answer.status, StatusCode::OK, "{}", answer.text);
    assert_eq!(answer.json()["choices"][0]["message"]["content"], "A cat");
    let sent = mock.requests()[0].body.clone();
    assert_eq!(sent["messages"][0]["content"][1], image, "passed through");
    // Only the second candidate was called; the first was skipped, not sent.
    let task = api
        .task_json(header(&answer, "x-switchback-invocation"))
        .await;
    assert_eq!(task["attempts"].as_array().unwrap().len(), 1);
    // Tools: the simulated candidate is skipped, saying so; the real one gets
    // them as sent, and its tool call comes back to the client whole.
    let tools = json!([{"type": "function", "function": {"name": "weather",
                        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}}]);
    let body = json!({"model": "tools", "messages": [{"role": "user", "content": "Weather in Paris?"}],
                      "tools": tools, "tool_choice": "auto"});
    let chunk = |delta: Value, finish: Value| {
        format!(
            "data: {}\n\n",
            json!({"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "gpt-mock",
                   "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
        )
    };
    mock.push(MockResponse::Events {
        chunks: vec![
            chunk(json!({"role": "assistant", "content": null, "tool_calls": [{"index": 0,
                  "id": "call_abc", "type": "function", "function": {"name": "weather", "arguments": ""}}]}), Value::Null),
            chunk(json!({"tool_calls": [{"index": 0, "function": {"arguments": "{\"city\":"}}]}), Value::Null),
            chunk(json!({"tool_calls": [{"index": 0, "function": {"arguments": "\"Paris\"}"}}]}), Value::Null),
            chunk(json!({}), json!("tool_calls")),
            "data: [DONE]\n\n".to_owned(),
        ],
        end: MockEnd::Finish,
    });
    let answer = api.gateway(Wire::OpenAi, body, &[]).await;
    assert_eq!(answer.status, StatusCode::OK, "{}", answer.text);
    let choice = &answer.json()["choices"][0];
    assert_eq!(choice["finish_reason"], "tool_calls");
    assert_eq!(choice["message"]["content"], Value::Null);
    assert_eq!(
        choice["message"]["tool_calls"],
        json!([{"id": "call_abc", "type": "function",
                "function": {"name": "weather", "arguments": "{\"city\":\"Paris\"}"}}])
    );
    let sent = mock.requests()[1].body.clone();
    assert_eq!(
        (&sent["tools"], &sent["tool_choice"]),
        (&tools, &json!("auto"))
    );
    let task = api
        .task_json(header(&answer, "x-switchback-invocation"))
        .await;
    let attempts = task["attempts"].as_array().unwrap();
    assert_eq!(
        attempts.len(),
        1,
        "the simulated candidate was not sent: {task}"
    );
    assert_eq!(
        task["turns"][0]["tool_calls"][0]["name"], "weather",
        "{task}"
    );
}

/// A stream cut after a tool call began (no text at all) is held as unsafe, as
/// after text: the client saw the call's first piece, so it is never sent again
/// to the next candidate.
#[tokio::test]
async fn a_stream_cut_after_a_tool_call_began_holds_the_route() {
    let (api, mock) = two_candidates("gpt-mock", "gpt-other").await;
    mock.push(MockResponse::Events {
        chunks: vec![format!(
            "data: {}\n\n",
            json!({"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "id": "call_1",
                   "type": "function", "function": {"name": "rm", "arguments": "{\"path\""}}]}}]})
        )],
        end: MockEnd::Close,
    });
    let mut body = ask("fast", true);
    body["tools"] = json!([{"type": "function", "function": {"name": "rm"}}]);
    let answer = api.gateway(Wire::OpenAi, body, &[]).await;
    assert_eq!(answer.status, StatusCode::OK, "the stream had begun");
    let reading = read_stream_chunks(Wire::OpenAi, [answer.text.as_bytes()]);
    assert_eq!(reading.tool_calls[0].name, "rm", "{}", answer.text);
    assert!(
        !answer.text.contains("[DONE]"),
        "never a normal end: {}",
        answer.text
    );
    let task = api
        .task_json(header(&answer, "x-switchback-invocation"))
        .await;
    assert_eq!(task["route"]["state"], "held", "{task}");
    assert_eq!(task["route"]["cause"], "unsafe_effect");
    assert_eq!(mock.hits(), 1, "never sent again");
}

/// A client that streams gets the candidate's text and tool call as its
/// protocol streams them; the turn keeps the call, so a repeat of the request
/// (the same `Idempotency-Key`, not streamed) answers it whole without a second
/// provider call. (Anthropic's blocks: `shapes.rs`'s tests and the Anthropic SDK
/// in `sdks.rs`.)
#[tokio::test]
async fn a_streamed_tool_call_reaches_the_client_and_its_repeat() {
    let (api, mock) = one_candidate("gpt-mock").await;
    let chunk = |delta: Value, finish: Value| {
        format!(
            "data: {}\n\n",
            json!({"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "gpt-mock",
                   "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
        )
    };
    mock.push(MockResponse::Events {
        chunks: vec![
            chunk(json!({"role": "assistant", "content": "Let me look."}), Value::Null),
            chunk(json!({"tool_calls": [{"index": 0, "id": "call_01", "type": "function",
                  "function": {"name": "read_file", "arguments": ""}}]}), Value::Null),
            chunk(json!({"tool_calls": [{"index": 0, "function": {"arguments": "{\"path\": \"src/"}}]}), Value::Null),
            chunk(json!({"tool_calls": [{"index": 0, "function": {"arguments": "main.rs\"}"}}]}), Value::Null),
            chunk(json!({}), json!("tool_calls")),
            "data: [DONE]\n\n".to_owned(),
        ],
        end: MockEnd::Finish,
    });
    let tools = json!([{"type": "function", "function": {"name": "read_file", "parameters": {"type": "object"}}}]);
    let mut body = ask("fast", true);
    body["tools"] = tools.clone();
    let key = [("idempotency-key", "agent-1")];
    let answer = api.gateway(Wire::OpenAi, body.clone(), &key).await;
    assert_eq!(answer.status, StatusCode::OK, "{}", answer.text);
    let reading = read_stream_chunks(Wire::OpenAi, [answer.text.as_bytes()]);
    assert_eq!(
        reading.end,
        providers::StreamEnd::Finished,
        "{}",
        answer.text
    );
    assert_eq!(reading.text, "Let me look.");
    let call = providers::ToolCall {
        id: "call_01".into(),
        name: "read_file".into(),
        arguments: r#"{"path": "src/main.rs"}"#.into(),
    };
    assert_eq!(reading.tool_calls, std::slice::from_ref(&call));
    assert_eq!(reading.stop, Some(StopReason::Other("tool_calls".into())));
    assert_eq!(mock.requests()[0].body["tools"], tools);
    let task = api
        .task_json(header(&answer, "x-switchback-invocation"))
        .await;
    assert_eq!(task["turns"][0]["tool_calls"][0]["id"], "call_01", "{task}");
    body["stream"] = json!(false);
    let again = api.gateway(Wire::OpenAi, body, &key).await;
    assert_eq!(again.status, StatusCode::OK, "{}", again.text);
    let choice = &again.json()["choices"][0];
    assert_eq!(choice["message"]["content"], "Let me look.");
    assert_eq!(
        choice["message"]["tool_calls"][0]["function"]["arguments"],
        call.arguments
    );
    assert_eq!(choice["finish_reason"], "tool_calls");
    assert_eq!(mock.hits(), 1);
}

#[tokio::test]
async fn a_client_that_leaves_while_its_call_waits_stops_the_route() {
    // Retries transient failures, so a throttled call waits (the clock stands still).
    let (api, mock) = patient().await;
    mock.push(MockResponse::openai_server_error());
    let router = api.router();
    let call =
        tokio::spawn(router.oneshot(gateway_request(Wire::OpenAi, &ask("patient", false), &[])));
    // Wait for the route to wait, then leave.
    let id = testkit::eventually_async(Duration::from_secs(10), || async {
        let (_, page) = api.call(Method::GET, "/api/tasks", None).await;
        page["tasks"]
            .as_array()
            .and_then(|tasks| tasks.first())
            .filter(|task| task["route"]["state"] == "retry_wait")
            .and_then(|task| task["id"].as_str().map(str::to_owned))
    })
    .await;
    call.abort();
    let stopped = testkit::eventually_async(Duration::from_secs(10), || async {
        let task = api.task_json(&id).await;
        (task["route"]["state"] == "stopped").then_some(task)
    })
    .await;
    assert_eq!(stopped["route"]["cause"], "cancelled_by_client");
    assert_eq!(mock.hits(), 1);
}

/// The tokens a provider counted reach the client in its protocol's words: in
/// a whole answer, and as the usage chunk an OpenAI client asked for.
#[tokio::test]
async fn the_tokens_used_reach_the_client() {
    let (api, mock) = one_candidate("gpt-mock").await;
    let counted = || {
        MockResponse::Events {
        chunks: vec![
            "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hi\"},\"finish_reason\":null}]}\n\n".into(),
            "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n".into(),
            "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":11,\"completion_tokens\":1,\"total_tokens\":12}}\n\n".into(),
            "data: [DONE]\n\n".into(),
        ],
        end: providers::mock::MockEnd::Finish,
    }
    };
    mock.push(counted());
    let answer = api.gateway(Wire::Anthropic, ask("fast", false), &[]).await;
    assert_eq!(answer.status, StatusCode::OK, "{}", answer.text);
    assert_eq!(
        answer.json()["usage"],
        json!({"input_tokens": 11, "output_tokens": 1})
    );
    mock.push(counted());
    let mut body = ask("fast", true);
    body["stream_options"] = json!({"include_usage": true});
    let answer = api.gateway(Wire::OpenAi, body, &[]).await;
    let last_chunk = answer
        .text
        .split("\n\n")
        .filter(|event| event.starts_with("data: {"))
        .last()
        .unwrap();
    let last_chunk: Value = serde_json::from_str(&last_chunk["data: ".len()..]).unwrap();
    assert_eq!(last_chunk["choices"], json!([]));
    assert_eq!(last_chunk["usage"]["total_tokens"], 12);
    assert!(answer.text.ends_with("data: [DONE]\n\n"));
}

/// On a guarded server a gateway caller needs a client key: made once through
/// the API (with the admin token), presented either way, limited to its
/// profiles, refused in the protocol's 401 once revoked; the admin token is
/// not a client key.
#[tokio::test]
async fn client_keys_admit_callers_to_their_profiles_only() {
    const ADMIN: &str = "admin-token-0123456789";
    let api = Api::with(super::Settings {
        admin_token: Some(ADMIN),
        ..super::Settings::default()
    })
    .await;
    let mock = MockProvider::start().await;
    let admin = |method: Method, path: &str, body: Option<Value>| {
        let builder = Request::builder()
            .method(method)
            .uri(path)
            .header(header::HOST, HOST)
            .header(header::AUTHORIZATION, format!("Bearer {ADMIN}"))
            .header(header::CONTENT_TYPE, "application/json");
        builder
            .body(body.map_or_else(Body::empty, |body| Body::from(body.to_string())))
            .unwrap()
    };
    let answer = api
        .send(admin(
            Method::POST,
            "/api/providers",
            Some(json!({"name": "mock", "kind": "openai_compatible", "base_url": mock.base_url()})),
        ))
        .await;
    let provider = answer.json()["id"].as_str().unwrap().to_owned();
    let mut profile_ids = Vec::new();
    for name in ["mine", "theirs"] {
        let candidates = json!([{"provider_id": provider, "model": "gpt-mock", "enabled": true,
                                 "max_tokens": 64, "policy": skip_at_once()}]);
        let answer = api
            .send(admin(
                Method::POST,
                "/api/profiles",
                Some(json!({"name": name, "candidates": candidates})),
            ))
            .await;
        assert_eq!(answer.status, StatusCode::CREATED, "{}", answer.text);
        profile_ids.push(answer.json()["id"].as_str().unwrap().to_owned());
    }
    let refused = api
        .send(admin(
            Method::POST,
            "/api/client-keys",
            Some(json!({"name": "laptop", "profile_ids": ["no-such-profile"]})),
        ))
        .await;
    assert_eq!(
        refused.status,
        StatusCode::UNPROCESSABLE_ENTITY,
        "{}",
        refused.text
    );
    assert_eq!(refused.json()["errors"][0]["field"], "profile_ids[0]");
    let made = api
        .send(admin(
            Method::POST,
            "/api/client-keys",
            Some(json!({"name": "laptop", "profile_ids": [profile_ids[0]]})),
        ))
        .await;
    assert_eq!(made.status, StatusCode::CREATED, "{}", made.text);
    let key = made.json()["key"].as_str().unwrap().to_owned();
    let id = made.json()["client_key"]["id"].as_str().unwrap().to_owned();
    assert!(key.starts_with("sbk_"));
    let listed = api.send(admin(Method::GET, "/api/client-keys", None)).await;
    assert!(!listed.text.contains(&key), "never shown again");
    assert_eq!(listed.json()[0]["prefix"], key[..8]);

    mock.push(MockResponse::reply("with a key"));
    let bearer = format!("Bearer {key}");
    let answer = api
        .gateway(
            Wire::OpenAi,
            ask("mine", false),
            &[("authorization", &bearer)],
        )
        .await;
    assert_eq!(answer.status, StatusCode::OK, "{}", answer.text);
    mock.push(MockResponse::reply("with a key"));
    let answer = api
        .gateway(Wire::Anthropic, ask("mine", false), &[("x-api-key", &key)])
        .await;
    assert_eq!(answer.status, StatusCode::OK, "{}", answer.text);
    // Another profile is as unknown as none.
    let answer = api
        .gateway(
            Wire::OpenAi,
            ask("theirs", false),
            &[("authorization", &bearer)],
        )
        .await;
    assert_eq!(answer.status, StatusCode::NOT_FOUND, "{}", answer.text);
    let models = api
        .send(
            Request::builder()
                .uri("/v1/models")
                .header(header::HOST, HOST)
                .header(header::AUTHORIZATION, &bearer)
                .body(Body::empty())
                .unwrap(),
        )
        .await;
    assert_eq!(
        models.json()["data"],
        json!([{"id": "mine", "object": "model",
        "created": models.json()["data"][0]["created"], "owned_by": "switchback"}])
    );
    // No key, the admin token, a wrong key: each protocol's 401.
    let admin_bearer = format!("Bearer {ADMIN}");
    for headers in [
        vec![],
        vec![("authorization", admin_bearer.as_str())],
        vec![("x-api-key", "sbk_wrong")],
    ] {
        let answer = api
            .gateway(Wire::Anthropic, ask("mine", false), &headers)
            .await;
        assert_eq!(answer.status, StatusCode::UNAUTHORIZED, "{headers:?}");
        assert_eq!(answer.json()["error"]["type"], "authentication_error");
    }
    let revoked = api
        .send(admin(
            Method::DELETE,
            &format!("/api/client-keys/{id}"),
            None,
        ))
        .await;
    assert_eq!(revoked.status, StatusCode::OK, "{}", revoked.text);
    assert!(revoked.json()["revoked_at"].is_string());
    let answer = api
        .gateway(
            Wire::OpenAi,
            ask("mine", false),
            &[("authorization", &bearer)],
        )
        .await;
    assert_eq!(answer.status, StatusCode::UNAUTHORIZED);
    assert_eq!(answer.json()["error"]["code"], "invalid_api_key");
}

/// A wait the candidate's policy would take is not taken when it would end
/// after the caller's deadline: the route moves on at once, and the client
/// hears 429 with the reset it would have waited for.
#[tokio::test]
async fn a_wait_past_the_callers_deadline_is_not_taken() {
    // The defaults: transient failures are retried and stated resets waited for.
    let (api, mock) = patient().await;
    mock.push(throttled_for_30s());
    let answer = api
        .gateway(
            Wire::OpenAi,
            ask("patient", false),
            &[("x-switchback-deadline-ms", "5000")],
        )
        .await;
    assert_eq!(
        answer.status,
        StatusCode::TOO_MANY_REQUESTS,
        "{}",
        answer.text
    );
    assert_eq!(header(&answer, "retry-after"), "30");
    assert_eq!(answer.json()["error"]["code"], "rate_limited");
    let task = api
        .task_json(header(&answer, "x-switchback-invocation"))
        .await;
    assert_eq!(task["route"]["state"], "stopped");
    assert_eq!(mock.hits(), 1, "no retry inside five seconds");
    // The editor's dry run plays this call with the deadline it had.
    let candidate = &task["candidates"][0];
    let (status, replay) = api
        .call(
            Method::GET,
            &format!(
                "/api/replay?provider_id={}&model={}",
                candidate["provider_id"].as_str().unwrap(),
                candidate["model"].as_str().unwrap()
            ),
            None,
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{replay}");
    let at = |value: &Value| serde_json::from_value::<api::Timestamp>(value.clone()).unwrap();
    let played = &replay["tasks"][0];
    let deadline_ms = at(&played["respond_by"]).as_millis() - at(&played["created_at"]).as_millis();
    assert!((5_000..6_000).contains(&deadline_ms), "{played}");
}

/// A profile's own deadline bounds its calls when the client names none: the
/// 30 s reset is past a profile's 5 s, so it is not waited for.
#[tokio::test]
async fn a_profiles_deadline_bounds_a_call_that_names_none() {
    let (api, mock) = patient().await;
    let (_, profiles) = api.call(Method::GET, "/api/profiles", None).await;
    let mut profile = profiles[0].clone();
    let id = profile["id"].as_str().unwrap().to_owned();
    for field in ["id", "created_at", "updated_at"] {
        profile.as_object_mut().unwrap().remove(field);
    }
    profile["gateway_deadline_s"] = json!(5);
    let (status, saved) = api
        .call(Method::PUT, &format!("/api/profiles/{id}"), Some(profile))
        .await;
    assert_eq!(status, StatusCode::OK, "{saved}");
    assert_eq!(saved["gateway_deadline_s"], 5);
    mock.push(throttled_for_30s());
    let answer = api.gateway(Wire::OpenAi, ask("patient", false), &[]).await;
    assert_eq!(
        answer.status,
        StatusCode::TOO_MANY_REQUESTS,
        "{}",
        answer.text
    );
    assert_eq!(mock.hits(), 1, "no wait past the profile's five seconds");
}

/// A repeated `Idempotency-Key` follows the first call: the same task and
/// answer, no second request to a provider.
#[tokio::test]
async fn a_repeated_idempotency_key_answers_the_first_call() {
    let (api, mock) = one_candidate("gpt-mock").await;
    mock.push(MockResponse::reply("Once"));
    let key = [("idempotency-key", "call-1")];
    let first = api.gateway(Wire::OpenAi, ask("fast", false), &key).await;
    assert_eq!(first.status, StatusCode::OK, "{}", first.text);
    let again = api.gateway(Wire::OpenAi, ask("fast", true), &key).await;
    assert_eq!(again.status, StatusCode::OK, "{}", again.text);
    assert_eq!(
        header(&again, "x-switchback-invocation"),
        header(&first, "x-switchback-invocation")
    );
    let reading = read_stream_chunks(Wire::OpenAi, [again.text.as_bytes()]);
    assert_eq!(reading.text, "Once");
    assert_eq!(mock.hits(), 1);
    // The same key for another request (another profile) is refused.
    let other = api.gateway(Wire::OpenAi, ask("other", false), &key).await;
    assert_eq!(other.status, StatusCode::CONFLICT, "{}", other.text);
    assert_eq!(other.json()["error"]["code"], "idempotency_key_reused");
}

/// A web page cannot make a gateway call on a browser's behalf (it would spend
/// the providers' credit): a cross-site post is refused, in the protocol's shape.
#[tokio::test]
async fn a_cross_site_post_is_refused() {
    let (api, mock) = one_candidate("gpt-mock").await;
    let answer = api
        .gateway(
            Wire::Anthropic,
            ask("fast", false),
            &[
                ("origin", "https://evil.example"),
                ("sec-fetch-site", "cross-site"),
            ],
        )
        .await;
    assert_eq!(answer.status, StatusCode::FORBIDDEN, "{}", answer.text);
    assert_eq!(answer.json()["error"]["type"], "permission_error");
    assert_eq!(mock.hits(), 0);
}
