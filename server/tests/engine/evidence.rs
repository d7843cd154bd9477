//! Provider errors as the providers send them (the catalogue's fixtures hold the
//! sources), as simulated steps.

use serde_json::{Value, json};

/// Anthropic, HTTP 529: overloaded (transient, no timing hint).
pub fn overloaded() -> Value {
    json!({"error": {"provider": "anthropic", "status": 529,
        "body": "{\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}"}})
}

/// OpenAI, HTTP 429 with `retry-after: SECONDS` (transient, a reset hint).
pub fn rate_limited(seconds: u32) -> Value {
    json!({"error": {"provider": "openai", "status": 429,
        "headers": {"retry-after": seconds.to_string()},
        "body": "{\"error\":{\"message\":\"Rate limit reached for gpt-4o in organization org-x on requests per min (RPM): Limit 3, Used 3, Requested 1.\",\"type\":\"requests\",\"param\":null,\"code\":\"rate_limit_exceeded\"}}"}})
}

/// Anthropic, HTTP 401: the key is wrong (hard).
pub fn auth_failed() -> Value {
    json!({"error": {"provider": "anthropic", "status": 401,
        "body": "{\"type\":\"error\",\"error\":{\"type\":\"authentication_error\",\"message\":\"invalid x-api-key\"}}"}})
}

/// Anthropic, HTTP 400: the request itself is wrong (outside).
pub fn invalid_request() -> Value {
    json!({"error": {"provider": "anthropic", "status": 400,
        "body": "{\"type\":\"error\",\"error\":{\"type\":\"invalid_request_error\",\"message\":\"messages: roles must alternate between \\\"user\\\" and \\\"assistant\\\"\"}}"}})
}

/// An answer nobody catalogued (unknown).
pub fn unknown() -> Value {
    json!({"error": {"provider": "openai_compatible", "status": 418, "body": "I'm a teapot"}})
}

/// A reply.
pub fn reply(text: &str) -> Value {
    json!({"reply": text})
}

/// Part of an answer, then an overloaded error event mid-stream.
pub fn broken_stream(text: &str) -> Value {
    json!({"partial": text, "error": {"provider": "anthropic", "status": 200,
        "body": "{\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}"}})
}
