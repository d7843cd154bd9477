//! The soak's provider: the loopback mock on OpenAI's wire, in the test's
//! process (so it outlives every server it serves), answering each request as
//! its task's script says and counting requests by task and model.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use providers::mock::{MockCall, MockEnd, MockProvider, MockResponse};

use crate::soak::script::{self, Reply};

/// What the provider received.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Received {
    /// Requests by task index and model.
    pub by_task: HashMap<usize, HashMap<String, usize>>,
    /// Every request.
    pub total: usize,
    /// Requests no script has: an unknown prompt, or more requests for a task's
    /// model than its script sends (so one was sent twice).
    pub unexpected: Vec<String>,
}

/// The provider's record, shared with the test.
pub type Log = Arc<Mutex<Received>>;

/// Start the provider: the provider (serving until it drops), and its record.
pub fn start() -> (MockProvider, Log) {
    let log = Log::default();
    let kept = log.clone();
    let provider = MockProvider::scripted_apart(move |call| answer(&kept, call));
    (provider, log)
}

/// The answer its task's script gives this request, recorded.
fn answer(log: &Log, call: &MockCall<'_>) -> MockResponse {
    let Some(index) = script::index_of(call.prompt) else {
        log.lock()
            .unwrap()
            .unexpected
            .push(format!("{}: {:?}", call.model, call.prompt));
        return MockResponse::status(400, &[], r#"{"error":"no such task"}"#);
    };
    {
        let mut received = log.lock().unwrap();
        received.total += 1;
        *received
            .by_task
            .entry(index)
            .or_default()
            .entry(call.model.to_owned())
            .or_insert(0) += 1;
    }
    let nth = call.nth as usize;
    let Some(reply) = script::script_of(index).reply(call.model, nth) else {
        log.lock().unwrap().unexpected.push(format!(
            "request {nth} to {} for {:?}",
            call.model, call.prompt
        ));
        return MockResponse::status(400, &[], r#"{"error":"the script has no such request"}"#);
    };
    // Calls take a while (5 to 24 ms), so kills find some of them in flight.
    wire(reply).after(Duration::from_millis(5 + (index as u64 * 7) % 20))
}

/// One reply, in OpenAI's wire format.
fn wire(reply: Reply) -> MockResponse {
    match reply {
        Reply::Answer => MockResponse::reply("Hello"),
        // Part of an answer, then the body ends without a finish.
        Reply::BrokenStream => MockResponse::Events {
            chunks: vec![
                "data: {\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"Hel\"},\"finish_reason\":null}]}\n\n".to_owned(),
            ],
            end: MockEnd::Finish,
        },
        Reply::Throttled => MockResponse::openai_throttled(),
        Reply::Overloaded => MockResponse::status(
            529,
            &[],
            r#"{"error":{"message":"The engine is currently overloaded, please try again later","type":"server_error","param":null,"code":null}}"#,
        ),
        Reply::ServerError => MockResponse::openai_server_error(),
        Reply::Unauthorized => MockResponse::status(
            401,
            &[],
            r#"{"error":{"message":"Incorrect API key provided: sk-soak. You can find your API key at https://platform.openai.com/account/api-keys.","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}"#,
        ),
        Reply::InvalidRequest => MockResponse::status(
            400,
            &[],
            r#"{"error":{"message":"Invalid value for 'messages': the soak asks for a refusal.","type":"invalid_request_error","param":"messages","code":null}}"#,
        ),
    }
}
