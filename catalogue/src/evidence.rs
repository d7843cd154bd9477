//! The evidence a failed attempt leaves behind (SPEC 2.1), read leniently from JSON.

use policy::evidence::{BodyText, HeaderValue, HttpStatus, LenientJson, PROVIDER_MAX_CHARS};
use std::borrow::Cow;
use std::fmt;

use serde::Deserialize;
use serde::de::{self, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

/// What a failed attempt left behind: the input of the catalogue (SPEC 2.1).
///
/// Every field but `provider` is optional. Build one with [`Evidence::from_json_line`]
/// (the wire form) or with [`Evidence::new`] and the `with_*` methods (in code and tests).
///
/// ```
/// use catalogue::{Evidence, Transport};
/// let evidence = Evidence::from_json_line(
///     r#"{"provider": "openai", "status": "429", "headers": {"Retry-After": "20"}, "extra": true}"#,
/// ).unwrap();
/// assert_eq!(evidence.status, Some(429));
/// assert_eq!(evidence.headers.get("retry-after"), Some("20"));
///
/// let reset = Evidence::new("openai").with_transport(Transport::ConnectionReset);
/// assert_eq!(reset.transport, Some(Transport::ConnectionReset));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Evidence {
    /// The provider family or agent CLI whose errors to expect (`anthropic`, `codex`, ...).
    pub provider: String,
    /// The HTTP status, when there was a response.
    pub status: Option<u16>,
    /// The response headers; names are matched case-insensitively.
    pub headers: Headers,
    /// The raw response body, or the data of an SSE `error` event.
    pub body: Option<String>,
    /// The stdout/stderr text of an agent CLI.
    pub output: Option<String>,
    /// How the connection failed, when it did.
    pub transport: Option<Transport>,
    /// When the evidence was observed, in unix milliseconds (default: the caller's now).
    pub observed_at_ms: Option<i64>,
    /// The IANA time zone of the process that printed `output`, for wall-clock resets
    /// it prints without a zone ("resets 3pm").
    pub time_zone: Option<String>,
}

/// HTTP headers with case-insensitive names, in the order given.
///
/// ```
/// let mut headers = catalogue::Headers::default();
/// headers.insert("Retry-After", "20");
/// assert_eq!(headers.get("RETRY-after"), Some("20"));
/// assert_eq!(headers.len(), 1);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Headers {
    /// `(lowercased name, value)` pairs.
    entries: Vec<(String, String)>,
}

impl Headers {
    /// Adds a header; the name is stored lowercased.
    pub fn insert(&mut self, name: &str, value: &str) {
        self.entries
            .push((name.to_ascii_lowercase(), value.to_owned()));
    }

    /// The first value of a header, whatever the case of `name`.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.entries
            .iter()
            .find(|(key, _)| key.eq_ignore_ascii_case(name))
            .map(|(_, value)| value.as_str())
    }

    /// Every `(lowercased name, value)` pair, in the order given.
    ///
    /// ```
    /// let mut headers = catalogue::Headers::default();
    /// headers.insert("X-A", "1");
    /// assert_eq!(headers.iter().collect::<Vec<_>>(), vec![("x-a", "1")]);
    /// ```
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        self.entries
            .iter()
            .map(|(name, value)| (name.as_str(), value.as_str()))
    }

    /// How many headers there are.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether there are no headers.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

/// How a connection failed without an HTTP answer (SPEC 2.1 `transport`).
///
/// ```
/// use catalogue::Transport;
/// assert_eq!(Transport::from_name("connection_refused"), Transport::ConnectionRefused);
/// assert_eq!(Transport::from_name("carrier_pigeon"), Transport::Other("carrier_pigeon".into()));
/// assert_eq!(Transport::Tls.as_str(), "tls");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Transport {
    /// The connection was refused (nothing listening).
    ConnectionRefused,
    /// The connection was reset by the peer.
    ConnectionReset,
    /// The connection or the answer took too long.
    Timeout,
    /// The host name did not resolve.
    Dns,
    /// The TLS handshake failed (a certificate problem, not a network blip).
    Tls,
    /// The connection closed before the answer was complete.
    ClosedEarly,
    /// A name the catalogue does not know; classified `unknown`.
    Other(String),
}

impl Transport {
    /// Reads a SPEC 2.1 transport name; anything else is [`Transport::Other`].
    pub fn from_name(name: &str) -> Self {
        match name.trim().to_ascii_lowercase().as_str() {
            "connection_refused" => Self::ConnectionRefused,
            "connection_reset" => Self::ConnectionReset,
            "timeout" => Self::Timeout,
            "dns" => Self::Dns,
            "tls" => Self::Tls,
            "closed_early" => Self::ClosedEarly,
            _ => Self::Other(name.to_owned()),
        }
    }

    /// The SPEC 2.1 name.
    pub fn as_str(&self) -> &str {
        match self {
            Self::ConnectionRefused => "connection_refused",
            Self::ConnectionReset => "connection_reset",
            Self::Timeout => "timeout",
            Self::Dns => "dns",
            Self::Tls => "tls",
            Self::ClosedEarly => "closed_early",
            Self::Other(name) => name,
        }
    }
}

/// Why a line of evidence could not be read (an input error, SPEC 2.1).
///
/// ```
/// use catalogue::{Evidence, EvidenceError};
/// assert_eq!(Evidence::from_json_line("[1, 2]"), Err(EvidenceError::NotAnObject));
/// assert_eq!(Evidence::from_json_line("{}"), Err(EvidenceError::MissingProvider));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EvidenceError {
    /// The line is not JSON at all.
    #[error("not JSON: {0}")]
    NotJson(String),
    /// The line is JSON but not an object.
    #[error("evidence must be a JSON object")]
    NotAnObject,
    /// `provider` is missing or empty.
    #[error("`provider` is required")]
    MissingProvider,
    /// A field has a JSON type the catalogue cannot read.
    #[error("`{field}` must be {expected}")]
    WrongType {
        /// The field's name.
        field: &'static str,
        /// What it should have been.
        expected: &'static str,
    },
    /// `status` is not an HTTP status (100..=999).
    #[error("`status` must be an HTTP status between 100 and 999")]
    StatusOutOfRange,
    /// `observed_at` is not an RFC 3339 timestamp.
    #[error("`observed_at` must be an RFC 3339 timestamp: {0}")]
    ObservedAt(String),
    /// `time_zone` names no zone of the time-zone database.
    #[error("`time_zone` must be an IANA time zone name such as Europe/Berlin: {0}")]
    TimeZone(String),
}

impl Evidence {
    /// Evidence from `provider` with nothing else yet.
    pub fn new(provider: &str) -> Self {
        Self {
            provider: provider.to_owned(),
            ..Self::default()
        }
    }

    /// With an HTTP status.
    pub fn with_status(mut self, status: u16) -> Self {
        self.status = Some(status);
        self
    }

    /// With one more header.
    pub fn with_header(mut self, name: &str, value: &str) -> Self {
        self.headers.insert(name, value);
        self
    }

    /// With a response body (or an SSE `error` event's data).
    pub fn with_body(mut self, body: &str) -> Self {
        self.body = Some(body.to_owned());
        self
    }

    /// With CLI output.
    pub fn with_output(mut self, output: &str) -> Self {
        self.output = Some(output.to_owned());
        self
    }

    /// With a transport failure.
    pub fn with_transport(mut self, transport: Transport) -> Self {
        self.transport = Some(transport);
        self
    }

    /// Observed at `observed_at_ms` (unix milliseconds).
    pub fn with_observed_at_ms(mut self, observed_at_ms: i64) -> Self {
        self.observed_at_ms = Some(observed_at_ms);
        self
    }

    /// Sets the zone of the process that printed the output (an IANA name).
    pub fn with_time_zone(mut self, time_zone: &str) -> Self {
        self.time_zone = Some(time_zone.to_owned());
        self
    }

    /// Reads one line of evidence JSON (SPEC 2.1). Lenient: unknown fields are ignored,
    /// `status` may be a number or a numeric string, header values may be numbers, and a
    /// `body` given as a JSON object is kept as its JSON text.
    ///
    /// ```
    /// let evidence = catalogue::Evidence::from_json_line(
    ///     r#"{"provider": "anthropic", "body": {"type": "error"}, "observed_at": "2026-11-30T02:00:00Z"}"#,
    /// ).unwrap();
    /// assert_eq!(evidence.body.as_deref(), Some(r#"{"type":"error"}"#));
    /// assert_eq!(evidence.observed_at_ms, Some(1_796_004_000_000));
    /// ```
    pub fn from_json_line(line: &str) -> Result<Self, EvidenceError> {
        let line: Line = serde_json::from_str(line)
            .map_err(|error| EvidenceError::NotJson(error.to_string()))?;
        // The parsed fields are ours: their texts move into the evidence uncopied.
        Self::from_fields(line.0.ok_or(EvidenceError::NotAnObject)?)
    }

    /// Reads evidence from an already parsed JSON value (e.g. a request body).
    ///
    /// ```
    /// let value = serde_json::json!({"provider": "openai", "transport": "timeout"});
    /// let evidence = catalogue::Evidence::from_json_value(&value).unwrap();
    /// assert_eq!(evidence.transport, Some(catalogue::Transport::Timeout));
    /// ```
    pub fn from_json_value(value: &Value) -> Result<Self, EvidenceError> {
        let object = value.as_object().ok_or(EvidenceError::NotAnObject)?;
        Self::from_fields(Fields::of(object))
    }

    /// Reads the fields in SPEC 2.1's order, so the first error is the same
    /// whichever way the object came.
    fn from_fields(fields: Fields) -> Result<Self, EvidenceError> {
        let provider = match &fields.provider {
            Some(Value::String(name)) if name.chars().count() > PROVIDER_MAX_CHARS => {
                return Err(EvidenceError::WrongType {
                    field: "provider",
                    expected: "at most 100 characters",
                });
            }
            Some(Value::String(name)) if !name.trim().is_empty() => name.trim().to_owned(),
            Some(Value::String(_)) | Some(Value::Null) | None => {
                return Err(EvidenceError::MissingProvider);
            }
            Some(_) => {
                return Err(EvidenceError::WrongType {
                    field: "provider",
                    expected: "a string",
                });
            }
        };
        let status = read_status(fields.status)?;
        let headers = read_headers(fields.headers)?;
        let body = read_body(fields.body)?;
        let output = take_text(fields.output, "output")?;
        let transport =
            take_text(fields.transport, "transport")?.map(|name| Transport::from_name(&name));
        let time_zone = take_text(fields.time_zone, "time_zone")?
            .map(|name| match crate::wall_clock::time_zone(&name) {
                Some(_) => Ok(name.trim().to_owned()),
                None => Err(EvidenceError::TimeZone(crate::redact::safe_text(&name, 64))),
            })
            .transpose()?;
        Ok(Self {
            provider,
            status,
            headers,
            body,
            output,
            transport,
            observed_at_ms: read_observed_at(fields.observed_at.as_ref())?,
            time_zone,
        })
    }
}

// The readers of `status`, `headers`, `body` and `observed_at` below are the policy
// crate's, which the API's `EvidenceRequest` reads with too, so a line of
// `switchback classify` and a `POST /api/classify` body read alike.

/// `status`: an integer, or digits as text, within 100..=999.
fn read_status(value: Option<Value>) -> Result<Option<u16>, EvidenceError> {
    let status = match value {
        None | Some(Value::Null) => return Ok(None),
        Some(value) => HttpStatus::from_json(value).map_err(|_| EvidenceError::WrongType {
            field: "status",
            expected: "an integer",
        })?,
    };
    match u16::try_from(status.get()) {
        Ok(status) if (100..=999).contains(&status) => Ok(Some(status)),
        _ => Err(EvidenceError::StatusOutOfRange),
    }
}

/// `headers`: an object of header values; a `null` value counts as absent.
fn read_headers(value: Option<Value>) -> Result<Headers, EvidenceError> {
    let mut headers = Headers::default();
    match value {
        None | Some(Value::Null) => {}
        Some(Value::Object(entries)) => {
            for (name, value) in entries {
                let value =
                    HeaderValue::from_json(value).map_err(|_| EvidenceError::WrongType {
                        field: "headers",
                        expected: "an object of strings",
                    })?;
                if let Some(text) = value.as_str() {
                    headers.insert(&name, text);
                }
            }
        }
        Some(_) => {
            return Err(EvidenceError::WrongType {
                field: "headers",
                expected: "an object",
            });
        }
    }
    Ok(headers)
}

/// The body as text; JSON (an object or array) is kept as its JSON text.
fn read_body(value: Option<Value>) -> Result<Option<String>, EvidenceError> {
    match value {
        None | Some(Value::Null) => Ok(None),
        Some(value) => BodyText::from_json(value)
            .map(|body| Some(body.into_text()))
            .map_err(|_| EvidenceError::WrongType {
                field: "body",
                expected: "a string, or a JSON object or array",
            }),
    }
}

/// A text field, moved out of the evidence's fields.
fn take_text(value: Option<Value>, field: &'static str) -> Result<Option<String>, EvidenceError> {
    match value {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(text)) => Ok(Some(text)),
        Some(_) => Err(EvidenceError::WrongType {
            field,
            expected: "a string",
        }),
    }
}

/// `observed_at`: an RFC 3339 time, as unix milliseconds.
fn read_observed_at(value: Option<&Value>) -> Result<Option<i64>, EvidenceError> {
    match value {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(text)) => policy::rfc3339::read_millis(text)
            .map(Some)
            .ok_or_else(|| EvidenceError::ObservedAt(text.clone())),
        Some(_) => Err(EvidenceError::WrongType {
            field: "observed_at",
            expected: "an RFC 3339 string",
        }),
    }
}

/// The fields of an evidence object the catalogue reads, each as given (absent when
/// the object has no such key). What else the object holds is never kept.
#[derive(Default)]
struct Fields {
    provider: Option<Value>,
    status: Option<Value>,
    headers: Option<Value>,
    body: Option<Value>,
    output: Option<Value>,
    transport: Option<Value>,
    time_zone: Option<Value>,
    observed_at: Option<Value>,
}

impl Fields {
    /// The fields of a parsed object (copies of them: the object stays the caller's).
    fn of(object: &Map<String, Value>) -> Self {
        let field = |name: &str| object.get(name).cloned();
        Self {
            provider: field("provider"),
            status: field("status"),
            headers: field("headers"),
            body: field("body"),
            output: field("output"),
            transport: field("transport"),
            time_zone: field("time_zone"),
            observed_at: field("observed_at"),
        }
    }

    /// Where the value of the key `name` goes, or `None` for a key the catalogue does
    /// not read.
    fn slot(&mut self, name: &str) -> Option<&mut Option<Value>> {
        Some(match name {
            "provider" => &mut self.provider,
            "status" => &mut self.status,
            "headers" => &mut self.headers,
            "body" => &mut self.body,
            "output" => &mut self.output,
            "transport" => &mut self.transport,
            "time_zone" => &mut self.time_zone,
            "observed_at" => &mut self.observed_at,
            _ => return None,
        })
    }
}

/// One evidence line, parsed straight into its [`Fields`] (`None` when the line is
/// JSON but no object), with no map built for the object and no value kept of a key
/// the catalogue does not read. Every value is still parsed as `serde_json::Value`
/// parses it (numbers to their range, strings to their escapes), so a line that is
/// not JSON fails with the same message, and a key given twice counts its last value,
/// as in a parsed map.
struct Line(Option<Fields>);

impl<'de> Deserialize<'de> for Line {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(LineVisitor)
    }
}

struct LineVisitor;

impl<'de> Visitor<'de> for LineVisitor {
    type Value = Line;

    fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
        formatter.write_str("any JSON value")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Line, A::Error> {
        let mut fields = Fields::default();
        while let Some(Key(name)) = map.next_key::<Key>()? {
            match fields.slot(&name) {
                Some(slot) => *slot = Some(map.next_value()?),
                None => map.next_value::<Skipped>().map(drop)?,
            }
        }
        Ok(Line(Some(fields)))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Line, A::Error> {
        while seq.next_element::<Skipped>()?.is_some() {}
        Ok(Line(None))
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Line, E> {
        Ok(Line(None))
    }

    fn visit_i64<E: de::Error>(self, _: i64) -> Result<Line, E> {
        Ok(Line(None))
    }

    fn visit_u64<E: de::Error>(self, _: u64) -> Result<Line, E> {
        Ok(Line(None))
    }

    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Line, E> {
        Ok(Line(None))
    }

    fn visit_str<E: de::Error>(self, _: &str) -> Result<Line, E> {
        Ok(Line(None))
    }

    fn visit_unit<E: de::Error>(self) -> Result<Line, E> {
        Ok(Line(None))
    }
}

/// A key of the evidence object, borrowed from the line unless it holds escapes.
struct Key<'de>(Cow<'de, str>);

impl<'de> Deserialize<'de> for Key<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_str(KeyVisitor)
    }
}

struct KeyVisitor;

impl<'de> Visitor<'de> for KeyVisitor {
    type Value = Key<'de>;

    fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
        formatter.write_str("a key")
    }

    fn visit_borrowed_str<E: de::Error>(self, key: &'de str) -> Result<Key<'de>, E> {
        Ok(Key(Cow::Borrowed(key)))
    }

    fn visit_str<E: de::Error>(self, key: &str) -> Result<Key<'de>, E> {
        Ok(Key(Cow::Owned(key.to_owned())))
    }
}

/// A value the catalogue does not read: parsed as a `Value` would be, and dropped as
/// it is read.
struct Skipped;

impl<'de> Deserialize<'de> for Skipped {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(SkippedVisitor)
    }
}

struct SkippedVisitor;

impl<'de> Visitor<'de> for SkippedVisitor {
    type Value = Skipped;

    fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
        formatter.write_str("any JSON value")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Skipped, A::Error> {
        while map.next_entry::<Key, Skipped>()?.is_some() {}
        Ok(Skipped)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Skipped, A::Error> {
        while seq.next_element::<Skipped>()?.is_some() {}
        Ok(Skipped)
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Skipped, E> {
        Ok(Skipped)
    }

    fn visit_i64<E: de::Error>(self, _: i64) -> Result<Skipped, E> {
        Ok(Skipped)
    }

    fn visit_u64<E: de::Error>(self, _: u64) -> Result<Skipped, E> {
        Ok(Skipped)
    }

    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Skipped, E> {
        Ok(Skipped)
    }

    fn visit_str<E: de::Error>(self, _: &str) -> Result<Skipped, E> {
        Ok(Skipped)
    }

    fn visit_unit<E: de::Error>(self) -> Result<Skipped, E> {
        Ok(Skipped)
    }
}

#[cfg(test)]
mod tests {
    use super::{Evidence, EvidenceError, Transport};

    /// The line reader skips what it does not read, yet answers as reading the line
    /// into a `serde_json::Value` first would: the same errors, with the same messages,
    /// for what is not JSON (a number out of range in an unknown field too), the last
    /// value of a key given twice, and keys written with escapes.
    #[test]
    fn lines_read_as_a_parsed_value_reads() {
        let through_value = |line: &str| -> Result<Evidence, EvidenceError> {
            let value: serde_json::Value = serde_json::from_str(line)
                .map_err(|error| EvidenceError::NotJson(error.to_string()))?;
            Evidence::from_json_value(&value)
        };
        let deep = format!("{}{}", "[".repeat(200), "]".repeat(200));
        let lines = [
            r#"{"provider":"openai","status":429}"#,
            r#"{"provider":"openai","status":429,"status":"503"}"#,
            r#"{"provider":"openai","provider":7}"#,
            r#"{"pro\u0076ider":"openai","body":{"error":{"message":"x"}},"extra":[1,{"a":null}]}"#,
            r#"{"provider":"openai","extra":1e400}"#,
            r#"{"provider":"openai","extra":"\ud800"}"#,
            r#"{"provider":"openai","extra":{"k":[1,2,}}"#,
            r#"{"provider":"openai"} trailing"#,
            r#"{"provider":"openai""#,
            r#"[1,2,3]"#,
            r#"[1,2,"#,
            r#""text""#,
            r#"12"#,
            r#"null"#,
            r#""#,
            r#"{"provider":"anthropic","headers":{"Retry-After":20,"x":null},"output":"o","transport":"tls","time_zone":"Europe/Berlin","observed_at":"2026-11-30T02:00:00Z"}"#,
            r#"{"provider":"anthropic","observed_at":5}"#,
            &deep,
        ];
        for line in lines {
            assert_eq!(
                Evidence::from_json_line(line),
                through_value(line),
                "{line}"
            );
        }
    }

    /// (line, expected result) rows: the lenient reader and its input errors.
    #[test]
    fn lines_read_leniently() {
        let cases: Vec<(&str, Result<Evidence, EvidenceError>)> = vec![
            (
                r#"{"provider":"openai","status":429}"#,
                Ok(Evidence::new("openai").with_status(429)),
            ),
            (
                r#"{"provider":"openai","status":" 503 ","unknown":{"deep":[1]}}"#,
                Ok(Evidence::new("openai").with_status(503)),
            ),
            (
                r#"{"provider":"codex","output":"x","transport":"dns"}"#,
                Ok(Evidence::new("codex")
                    .with_output("x")
                    .with_transport(Transport::Dns)),
            ),
            (
                r#"{"provider":"a","headers":{"Retry-After":20,"X-List":["a","b"],"X-Null":null}}"#,
                Ok(Evidence::new("a")
                    .with_header("retry-after", "20")
                    .with_header("x-list", "a, b")),
            ),
            ("not json", Err(EvidenceError::NotJson(String::new()))),
            ("42", Err(EvidenceError::NotAnObject)),
            ("\"text\"", Err(EvidenceError::NotAnObject)),
            (r#"{"status":429}"#, Err(EvidenceError::MissingProvider)),
            (r#"{"provider":"  "}"#, Err(EvidenceError::MissingProvider)),
            (
                r#"{"provider":7}"#,
                Err(EvidenceError::WrongType {
                    field: "provider",
                    expected: "a string",
                }),
            ),
            (
                r#"{"provider":"a","status":4.5}"#,
                Err(EvidenceError::WrongType {
                    field: "status",
                    expected: "an integer",
                }),
            ),
            (
                r#"{"provider":"a","status":42}"#,
                Err(EvidenceError::StatusOutOfRange),
            ),
            (
                r#"{"provider":"a","observed_at":"yesterday"}"#,
                Err(EvidenceError::ObservedAt("yesterday".into())),
            ),
            (
                r#"{"provider":"a","output":{"x":1}}"#,
                Err(EvidenceError::WrongType {
                    field: "output",
                    expected: "a string",
                }),
            ),
            (
                r#"{"provider":"claude_code","time_zone":" America/New_York "}"#,
                Ok(Evidence::new("claude_code").with_time_zone("America/New_York")),
            ),
            (
                r#"{"provider":"a","time_zone":"Mars/Olympus_Mons"}"#,
                Err(EvidenceError::TimeZone("Mars/Olympus_Mons".into())),
            ),
            (
                r#"{"provider":"a","time_zone":"/etc/localtime"}"#,
                Err(EvidenceError::TimeZone("/etc/localtime".into())),
            ),
            (
                r#"{"provider":"a","time_zone":3}"#,
                Err(EvidenceError::WrongType {
                    field: "time_zone",
                    expected: "a string",
                }),
            ),
        ];
        for (line, expected) in cases {
            let got = Evidence::from_json_line(line);
            match (&got, &expected) {
                (Err(EvidenceError::NotJson(_)), Err(EvidenceError::NotJson(_))) => {}
                _ => assert_eq!(got, expected, "{line}"),
            }
        }
    }
}
