//! # The simulated provider's script
//!
//! A provider of kind `simulated` sends nothing anywhere: it plays a **script**, a
//! JSON array of steps, and its outcomes travel the same path as a real provider's
//! (a [`CallOutcome`], and on failure evidence for the
//! catalogue). Scripts make demos and tests of recovery repeatable: a candidate that
//! is overloaded twice and then answers is `[{"error": ...}, {"error": ...}, {"reply": "..."}]`.
//!
//! ## Which step plays
//!
//! The engine numbers the calls of one task on one candidate from 0
//! ([`CallRequest::call_index`](crate::CallRequest::call_index)); call `n` plays step
//! `n`. Past the end of the script, the last step plays again. An empty script
//! always answers `"ok"`.
//!
//! ## The forms of a step
//!
//! Each step is an object with exactly one of `reply`, `error` or `hang`; unknown
//! keys are rejected.
//!
//! | step | outcome |
//! | --- | --- |
//! | `{"reply": "Paris."}` | answers `Paris.`, stopped at the end of its turn |
//! | `{"reply": "Par", "stop": "max_tokens"}` | answers `Par`, cut off at `max_tokens` (`"stop": "end"` is the default) |
//! | `{"error": EVIDENCE}` | fails before any output, leaving `EVIDENCE` |
//! | `{"partial": "Par", "error": EVIDENCE}` | streams `Par`, then fails (an unsafe failure: output was already seen) |
//! | `{"hang": true}` | never answers: the call waits until the engine cancels it, or until the provider's idle timeout (`timeouts.idle_ms`), when it fails with a `timeout` transport failure and no output |
//!
//! Any step may add `"delay_ms": N` (0 to 600000): the step waits that long, in real
//! time, before its outcome (for demos that show a slow provider).
//!
//! `EVIDENCE` is a SPEC 2.1 evidence object, exactly as `switchback classify` and
//! `POST /api/classify` read it, so the evidence of any catalogue fixture can be
//! pasted in. Its `provider` is required and picks the catalogue's rules, whatever
//! the simulated provider's family:
//!
//! ```json
//! [
//!   {"error": {"provider": "anthropic", "status": 529,
//!              "body": "{\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}"}},
//!   {"error": {"provider": "openai", "status": 429, "headers": {"retry-after": "2"}}, "delay_ms": 500},
//!   {"partial": "The capital of France", "error": {"provider": "anthropic", "transport": "closed_early"}},
//!   {"reply": "The capital of France is Paris."}
//! ]
//! ```
//!
//! ## Errors in a script
//!
//! [`parse_script`] reports one error per bad step, each with a path from the
//! script (`[2].error.status`); [`SimulatedStep::parse`] gives paths from the step
//! (`error.status`), and [`StepError::field_error`] puts them under any prefix
//! (`script[2].error.status`):
//!
//! ```
//! let errors = providers::parse_script(&serde_json::json!([
//!     {"reply": "ok"},
//!     {"reply": "ok", "stop": "sometimes"},
//!     {"error": {"provider": "openai", "status": 42}},
//! ])).unwrap_err();
//! let fields: Vec<String> = errors.iter().map(|error| error.field_error("script").field).collect();
//! assert_eq!(fields, ["script[1].stop", "script[2].error.status"]);
//! ```

use std::time::Duration;

use catalogue::{Evidence, EvidenceError, Transport};
use policy::{ErrorCode, FieldError, JsonInteger, describe_json, json_integer};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};

use crate::call::{CallOutcome, CallRequest, Observer, StopReason};
use crate::config::Timeouts;

/// The longest `delay_ms` a step may have, in milliseconds (ten minutes).
pub const MAX_STEP_DELAY_MS: u64 = 600_000;

/// The keys a step may have, in the order messages list them.
const STEP_KEYS: [&str; 6] = ["reply", "stop", "error", "partial", "hang", "delay_ms"];

/// One step of a simulated provider's script (see [the module](self) for the format).
///
/// ```
/// use providers::{SimulatedAction, SimulatedStep, SimulatedStop};
/// let step = SimulatedStep::parse(&serde_json::json!({"reply": "Par", "stop": "max_tokens", "delay_ms": 250})).unwrap();
/// assert_eq!(step.delay_ms, 250);
/// assert_eq!(step.action, SimulatedAction::Reply { text: "Par".into(), stop: SimulatedStop::MaxTokens });
/// assert_eq!(step.to_json(), serde_json::json!({"reply": "Par", "stop": "max_tokens", "delay_ms": 250}));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SimulatedStep {
    /// How long to wait before the outcome, in milliseconds (0: none).
    pub delay_ms: u64,
    /// What the step does.
    pub action: SimulatedAction,
}

/// What a step does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SimulatedAction {
    /// `{"reply": "text"}` (with `"stop": "max_tokens"`, a truncated answer).
    Reply {
        /// The answer.
        text: String,
        /// Why it stopped.
        stop: SimulatedStop,
    },
    /// `{"error": EVIDENCE}`: fails before any output.
    ///
    /// ```
    /// let step = providers::SimulatedStep::parse(&serde_json::json!(
    ///     {"error": {"provider": "anthropic", "status": 529}}
    /// )).unwrap();
    /// assert!(matches!(step.action, providers::SimulatedAction::Error { .. }));
    /// ```
    Error {
        /// What the failure leaves behind.
        evidence: SimulatedEvidence,
    },
    /// `{"partial": "text", "error": EVIDENCE}`: streams `text`, then fails (unsafe).
    ///
    /// ```
    /// let step = providers::SimulatedStep::parse(&serde_json::json!(
    ///     {"partial": "Once upon", "error": {"provider": "openai", "transport": "connection_reset"}}
    /// )).unwrap();
    /// assert!(matches!(step.action, providers::SimulatedAction::PartialThenError { .. }));
    /// ```
    PartialThenError {
        /// The text streamed before the failure.
        partial: String,
        /// What the failure leaves behind.
        evidence: SimulatedEvidence,
    },
    /// `{"hang": true}`: no answer until cancelled or until the idle timeout.
    ///
    /// ```
    /// let step = providers::SimulatedStep::parse(&serde_json::json!({"hang": true})).unwrap();
    /// assert_eq!(step.action, providers::SimulatedAction::Hang);
    /// ```
    Hang,
}

/// How a scripted reply stops: `"stop": "end"` (the default) or `"stop": "max_tokens"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum SimulatedStop {
    /// The model finished its turn.
    #[default]
    End,
    /// The answer was cut off at `max_tokens`.
    MaxTokens,
}

impl SimulatedStop {
    /// The name in a script.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::End => "end",
            Self::MaxTokens => "max_tokens",
        }
    }

    fn stop_reason(self) -> StopReason {
        match self {
            Self::End => StopReason::End,
            Self::MaxTokens => StopReason::MaxTokens,
        }
    }
}

/// A step's evidence: the object as the script gave it (so a script serializes back
/// to what was written) and as the catalogue reads it.
///
/// ```
/// let value = serde_json::json!({"provider": "openai", "status": "429"});
/// let evidence = providers::SimulatedEvidence::from_json_value(&value).unwrap();
/// assert_eq!(evidence.evidence().status, Some(429));
/// assert_eq!(evidence.json(), &value);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SimulatedEvidence {
    json: Value,
    evidence: Evidence,
}

impl SimulatedEvidence {
    /// Reads a SPEC 2.1 evidence object, as [`Evidence::from_json_value`] does.
    pub fn from_json_value(value: &Value) -> Result<Self, EvidenceError> {
        Ok(Self {
            evidence: Evidence::from_json_value(value)?,
            json: value.clone(),
        })
    }

    /// The evidence as the catalogue reads it.
    pub fn evidence(&self) -> &Evidence {
        &self.evidence
    }

    /// The object as the script gave it.
    pub fn json(&self) -> &Value {
        &self.json
    }
}

/// Why a step could not be read: where (a path from the step, such as `error.status`
/// or `stop`; empty for the step itself) and why.
///
/// ```
/// let error = providers::SimulatedStep::parse(&serde_json::json!({"reply": 7})).unwrap_err();
/// assert_eq!(error.path, "reply");
/// assert_eq!(error.code, policy::ErrorCode::Type);
/// assert_eq!(error.to_string(), "reply: must be a string, not a number");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}", join_path(.path, .message))]
pub struct StepError {
    /// Where the error is, from the step (or, from [`parse_script`], from the script).
    pub path: String,
    /// What kind of error it is.
    pub code: ErrorCode,
    /// A sentence fragment for people, e.g. `must be a string, not a number`.
    pub message: String,
}

impl StepError {
    fn new(path: &str, code: ErrorCode, message: impl Into<String>) -> Self {
        Self {
            path: path.to_owned(),
            code,
            message: message.into(),
        }
    }

    /// The path under `prefix`: `"script[2]"` and `"error.status"` make
    /// `"script[2].error.status"`; an index joins without a dot.
    ///
    /// ```
    /// let error = providers::parse_script(&serde_json::json!([{"hang": false}])).unwrap_err().remove(0);
    /// assert_eq!(error.path, "[0].hang");
    /// assert_eq!(error.path_under("candidates[1].script"), "candidates[1].script[0].hang");
    /// ```
    pub fn path_under(&self, prefix: &str) -> String {
        if prefix.is_empty() || self.path.is_empty() || self.path.starts_with('[') {
            format!("{prefix}{}", self.path)
        } else {
            format!("{prefix}.{}", self.path)
        }
    }

    /// The error as the policy crate's field error (the API's error shape), under `prefix`.
    pub fn field_error(&self, prefix: &str) -> FieldError {
        FieldError {
            field: self.path_under(prefix),
            code: self.code,
            message: self.message.clone(),
        }
    }
}

fn join_path(path: &str, message: &str) -> String {
    if path.is_empty() {
        message.to_owned()
    } else {
        format!("{path}: {message}")
    }
}

impl SimulatedStep {
    /// A reply that ends normally.
    pub fn reply(text: &str) -> Self {
        Self {
            delay_ms: 0,
            action: SimulatedAction::Reply {
                text: text.to_owned(),
                stop: SimulatedStop::End,
            },
        }
    }

    /// A step that hangs.
    pub fn hang() -> Self {
        Self {
            delay_ms: 0,
            action: SimulatedAction::Hang,
        }
    }

    /// Reads one step; the error's path is from the step (`error.status`).
    pub fn parse(value: &Value) -> Result<Self, StepError> {
        let Value::Object(object) = value else {
            return Err(StepError::new(
                "",
                ErrorCode::Type,
                format!(
                    "a step must be an object such as {{\"reply\": \"ok\"}}, not {}",
                    describe_json(value)
                ),
            ));
        };
        if let Some(unknown) = object.keys().find(|key| !STEP_KEYS.contains(&key.as_str())) {
            return Err(StepError::new(
                unknown,
                ErrorCode::UnknownField,
                format!("is not a step key (one of {})", STEP_KEYS.join(", ")),
            ));
        }
        let delay_ms = read_delay_ms(object)?;
        let forms: Vec<&str> = ["reply", "error", "hang"]
            .into_iter()
            .filter(|key| object.contains_key(*key))
            .collect();
        let action = match forms.as_slice() {
            [form] => match *form {
                "reply" => read_reply(object)?,
                "error" => read_error(object)?,
                _ => read_hang(object)?,
            },
            [] if object.contains_key("partial") => {
                return Err(StepError::new(
                    "error",
                    ErrorCode::Required,
                    "is required with partial: the evidence of the failure after the partial text",
                ));
            }
            [] => {
                return Err(StepError::new(
                    "",
                    ErrorCode::Required,
                    "a step needs one of reply, error or hang",
                ));
            }
            [first, second, ..] => {
                return Err(StepError::new(
                    second,
                    ErrorCode::Conflict,
                    format!(
                        "cannot be in the same step as {first}: a step has one of reply, error or hang"
                    ),
                ));
            }
        };
        Ok(Self { delay_ms, action })
    }

    /// The step as script JSON; [`SimulatedStep::parse`] reads it back unchanged.
    pub fn to_json(&self) -> Value {
        let mut object = Map::new();
        match &self.action {
            SimulatedAction::Reply { text, stop } => {
                object.insert("reply".into(), Value::String(text.clone()));
                if *stop != SimulatedStop::End {
                    object.insert("stop".into(), Value::String(stop.as_str().into()));
                }
            }
            SimulatedAction::Error { evidence } => {
                object.insert("error".into(), evidence.json.clone());
            }
            SimulatedAction::PartialThenError { partial, evidence } => {
                object.insert("partial".into(), Value::String(partial.clone()));
                object.insert("error".into(), evidence.json.clone());
            }
            SimulatedAction::Hang => {
                object.insert("hang".into(), Value::Bool(true));
            }
        }
        if self.delay_ms > 0 {
            object.insert("delay_ms".into(), Value::from(self.delay_ms));
        }
        Value::Object(object)
    }

    /// Plays the step: waits its delay, then gives its outcome (a hang waits for the
    /// idle timeout, unless the future is dropped first).
    pub(crate) async fn play(
        &self,
        family: &str,
        timeouts: &Timeouts,
        observer: &dyn Observer,
    ) -> CallOutcome {
        if self.delay_ms > 0 {
            tokio::time::sleep(Duration::from_millis(self.delay_ms)).await;
        }
        let streamed = |text: &str| {
            if !text.is_empty() {
                observer.text(text);
            }
        };
        match &self.action {
            SimulatedAction::Reply { text, stop } => {
                streamed(text);
                CallOutcome::Answered {
                    text: text.clone(),
                    stop: stop.stop_reason(),
                    tool_calls: Vec::new(),
                }
            }
            SimulatedAction::Error { evidence } => CallOutcome::failed(evidence.evidence.clone()),
            SimulatedAction::PartialThenError { partial, evidence } => {
                streamed(partial);
                CallOutcome::Failed {
                    evidence: evidence.evidence.clone(),
                    partial_output: partial.clone(),
                }
            }
            SimulatedAction::Hang => {
                tokio::time::sleep(timeouts.idle()).await;
                CallOutcome::failed(Evidence::new(family).with_transport(Transport::Timeout))
            }
        }
    }
}

/// The step call `call_index` plays: that step, the last past the end, `None` for an
/// empty script.
pub(crate) fn step_for_call(script: &[SimulatedStep], call_index: u32) -> Option<&SimulatedStep> {
    usize::try_from(call_index)
        .ok()
        .and_then(|index| script.get(index))
        .or_else(|| script.last())
}

/// Plays the step for `request` (an empty script answers `"ok"`).
pub(crate) async fn play_script(
    script: &[SimulatedStep],
    family: &str,
    timeouts: &Timeouts,
    request: &CallRequest,
    observer: &dyn Observer,
) -> CallOutcome {
    match step_for_call(script, request.call_index) {
        Some(step) => step.play(family, timeouts, observer).await,
        None => {
            observer.text("ok");
            CallOutcome::Answered {
                text: "ok".to_owned(),
                stop: StopReason::End,
                tool_calls: Vec::new(),
            }
        }
    }
}

/// Reads a whole script: every bad step's error, with paths from the script (`[2].reply`).
///
/// ```
/// let script = providers::parse_script(&serde_json::json!([{"reply": "ok"}, {"hang": true}])).unwrap();
/// assert_eq!(script.len(), 2);
/// let errors = providers::parse_script(&serde_json::json!({"reply": "ok"})).unwrap_err();
/// assert_eq!(errors[0].to_string(), "a script must be an array of steps, not an object");
/// ```
pub fn parse_script(value: &Value) -> Result<Vec<SimulatedStep>, Vec<StepError>> {
    let Value::Array(steps) = value else {
        return Err(vec![StepError::new(
            "",
            ErrorCode::Type,
            format!(
                "a script must be an array of steps, not {}",
                describe_json(value)
            ),
        )]);
    };
    let mut script = Vec::with_capacity(steps.len());
    let mut errors = Vec::new();
    for (index, step) in steps.iter().enumerate() {
        match SimulatedStep::parse(step) {
            Ok(step) => script.push(step),
            Err(error) => errors.push(StepError {
                path: error.path_under(&format!("[{index}]")),
                ..error
            }),
        }
    }
    if errors.is_empty() {
        Ok(script)
    } else {
        Err(errors)
    }
}

fn read_delay_ms(object: &Map<String, Value>) -> Result<u64, StepError> {
    let Some(value) = object.get("delay_ms") else {
        return Ok(0);
    };
    let range = || {
        StepError::new(
            "delay_ms",
            ErrorCode::Range,
            format!("must be between 0 and {MAX_STEP_DELAY_MS}"),
        )
    };
    match json_integer(value) {
        JsonInteger::Integer(delay_ms) => u64::try_from(delay_ms)
            .ok()
            .filter(|delay_ms| *delay_ms <= MAX_STEP_DELAY_MS)
            .ok_or_else(range),
        JsonInteger::OutOfRange => Err(range()),
        JsonInteger::Fraction | JsonInteger::NotANumber => Err(StepError::new(
            "delay_ms",
            ErrorCode::Type,
            format!(
                "must be a whole number of milliseconds, not {}",
                describe_json(value)
            ),
        )),
    }
}

fn read_string(object: &Map<String, Value>, key: &str) -> Result<String, StepError> {
    match object.get(key) {
        Some(Value::String(text)) => Ok(text.clone()),
        Some(other) => Err(StepError::new(
            key,
            ErrorCode::Type,
            format!("must be a string, not {}", describe_json(other)),
        )),
        None => Err(StepError::new(key, ErrorCode::Required, "is required")),
    }
}

fn read_reply(object: &Map<String, Value>) -> Result<SimulatedAction, StepError> {
    if object.contains_key("partial") {
        return Err(StepError::new(
            "partial",
            ErrorCode::Conflict,
            "goes only with error (a reply is never partial)",
        ));
    }
    let text = read_string(object, "reply")?;
    let stop = match object.get("stop") {
        None => SimulatedStop::End,
        Some(Value::String(name)) if name == "end" => SimulatedStop::End,
        Some(Value::String(name)) if name == "max_tokens" => SimulatedStop::MaxTokens,
        Some(_) => {
            return Err(StepError::new(
                "stop",
                ErrorCode::Enum,
                "must be \"end\" or \"max_tokens\"",
            ));
        }
    };
    Ok(SimulatedAction::Reply { text, stop })
}

fn read_error(object: &Map<String, Value>) -> Result<SimulatedAction, StepError> {
    if object.contains_key("stop") {
        return Err(StepError::new(
            "stop",
            ErrorCode::Conflict,
            "goes only with reply",
        ));
    }
    let partial = match object.get("partial") {
        Some(_) => Some(read_string(object, "partial")?),
        None => None,
    };
    let value = object.get("error").unwrap_or(&Value::Null);
    let evidence = SimulatedEvidence::from_json_value(value).map_err(|error| {
        let (field, code) = evidence_error_field(&error);
        StepError::new(&field, code, evidence_error_message(&error, value))
    })?;
    Ok(match partial {
        Some(partial) => SimulatedAction::PartialThenError { partial, evidence },
        None => SimulatedAction::Error { evidence },
    })
}

fn read_hang(object: &Map<String, Value>) -> Result<SimulatedAction, StepError> {
    for key in ["stop", "partial"] {
        if object.contains_key(key) {
            return Err(StepError::new(
                key,
                ErrorCode::Conflict,
                "cannot be in a hang step",
            ));
        }
    }
    match object.get("hang") {
        Some(Value::Bool(true)) => Ok(SimulatedAction::Hang),
        Some(Value::Bool(false)) => Err(StepError::new(
            "hang",
            ErrorCode::Enum,
            "must be true (leave it out for a step that does not hang)",
        )),
        Some(other) => Err(StepError::new(
            "hang",
            ErrorCode::Type,
            format!("must be true, not {}", describe_json(other)),
        )),
        None => unreachable!("read_hang is called for steps with hang"),
    }
}

/// Where an evidence error points, from the step, and its kind.
fn evidence_error_field(error: &EvidenceError) -> (String, ErrorCode) {
    match error {
        EvidenceError::NotJson(_) | EvidenceError::NotAnObject => ("error".into(), ErrorCode::Type),
        EvidenceError::MissingProvider => ("error.provider".into(), ErrorCode::Required),
        EvidenceError::WrongType { field, .. } => (format!("error.{field}"), ErrorCode::Type),
        EvidenceError::StatusOutOfRange => ("error.status".into(), ErrorCode::Range),
        EvidenceError::ObservedAt(_) => ("error.observed_at".into(), ErrorCode::Type),
        EvidenceError::TimeZone(_) => ("error.time_zone".into(), ErrorCode::Enum),
    }
}

fn evidence_error_message(error: &EvidenceError, value: &Value) -> String {
    match error {
        EvidenceError::NotJson(_) | EvidenceError::NotAnObject => format!(
            "must be an evidence object such as {{\"provider\": \"openai\", \"status\": 429}}, not {}",
            describe_json(value)
        ),
        other => other.to_string(),
    }
}

impl Serialize for SimulatedStep {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.to_json().serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for SimulatedStep {
    /// Reads a step as [`SimulatedStep::parse`] does; the error's text starts with its path.
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = Value::deserialize(deserializer)?;
        Self::parse(&value).map_err(serde::de::Error::custom)
    }
}
