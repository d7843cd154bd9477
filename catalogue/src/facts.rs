//! What the rules read: the facts pulled out of one piece of evidence.
//!
//! Bodies are read through [`crate::wire`]; SSE streams give the data of their error
//! event; a message that is itself JSON (Gemini CLI) is read again, one level deep;
//! OpenRouter's `metadata.raw` is kept apart so the upstream error can be classified on
//! its own; CLI output gives its embedded JSON and the status it quotes.

use std::borrow::Cow;
use std::cell::OnceCell;
use std::sync::LazyLock;

use smallvec::SmallVec;

use crate::family::Family;
use crate::wire::{ErrorField, WireBody, WireError, parse_body};

/// A few texts of one kind, in order. The facts of one piece of evidence hold one or two
/// error types, codes and messages: kept inline, they cost no allocation.
pub(crate) type Texts<'a> = SmallVec<[Cow<'a, str>; 4]>;

/// The facts of one piece of evidence, borrowed from it where possible.
#[derive(Debug, Default)]
pub(crate) struct Facts<'a> {
    /// The HTTP status that counts: the response's, or the one the body or output quotes
    /// when the response had none or was a 200 stream.
    pub status: Option<u16>,
    /// Error types: Anthropic/OpenAI `error.type`, Gemini `error.status`, Bedrock
    /// exception names, vLLM `type`.
    pub types: Texts<'a>,
    /// Error codes: OpenAI `error.code`, Gemini `ErrorInfo.reason`, Anthropic
    /// `details.error_code`, Azure `innererror.code`, Gemini `blockReason`.
    pub codes: Texts<'a>,
    /// The provider's messages, the primary one first.
    pub messages: Texts<'a>,
    /// CLI output, as text.
    pub output: Option<&'a str>,
    /// Gemini `QuotaFailure` quota ids and metrics, lowercased, space-separated.
    pub quota: String,
    /// Gemini `RetryInfo.retryDelay`.
    pub retry_delay: Option<Cow<'a, str>>,
    /// Structured `resets_in_seconds`.
    pub resets_in_seconds: Option<Cow<'a, str>>,
    /// Structured `resets_at` (unix seconds).
    pub resets_at: Option<Cow<'a, str>>,
    /// The wait the response states before any rule is chosen (`retry-after`, or a
    /// wait in the text), set by the caller once the facts are read.
    pub stated_wait_ms: Option<u64>,
    /// The wait each text states, in [`Facts::texts`] order, set by the caller once the
    /// facts are read.
    pub text_waits: SmallVec<[Option<crate::hints::TextWait>; 2]>,
    /// An Anthropic subscription window refuses requests (its `-status` header says
    /// `rejected`), set by the caller once the facts are read.
    pub window_rejected: bool,
    /// The body was an HTML page (a proxy's error page).
    pub html_title: Option<Option<String>>,
    /// OpenRouter: the upstream provider's name and its nested error, when it is JSON.
    pub upstream: Option<Upstream>,
    /// [`Facts::texts`] as the one pass reads them, made on first use (once the facts
    /// are read: texts added later would not show in it).
    search_texts: OnceCell<SearchTexts>,
    /// The wordings, fragments and wait phrases [`Facts::search_texts`] hold, found on
    /// first use.
    scan: OnceCell<crate::scan::Scan>,
}

/// An OpenRouter upstream error.
#[derive(Debug)]
pub(crate) struct Upstream {
    /// The family `metadata.provider_name` names.
    pub family: Family,
    /// `metadata.provider_name`.
    pub provider_name: Option<String>,
    /// The nested error's facts.
    pub facts: Box<Facts<'static>>,
}

/// How deep a message that is itself JSON (or holds JSON after a wrapper's prefix) is
/// read again.
const MAX_NESTING: u8 = 4;

/// How far into a message a wrapper's prefix may run before the JSON it wraps
/// (`litellm.RateLimitError: ... - {...}`, `Error code: 429 - {...}`).
const MAX_PREFIX: usize = 300;

impl<'a> Facts<'a> {
    /// The facts of a response (status, body) and CLI output.
    #[cfg(test)]
    pub fn gather(
        status: Option<u16>,
        aws_error_type: Option<&'a str>,
        body: Option<&'a str>,
        output: Option<&'a str>,
    ) -> Self {
        let mut facts = Facts::default();
        facts.read_evidence(status, aws_error_type, body, output);
        facts
    }

    /// Reads the facts of a response (status, body) and CLI output into these (empty)
    /// facts: filled in place, the large struct is not moved out of a call.
    pub fn read_evidence(
        &mut self,
        status: Option<u16>,
        aws_error_type: Option<&'a str>,
        body: Option<&'a str>,
        output: Option<&'a str>,
    ) {
        // Bedrock: `x-amzn-ErrorType: ThrottlingException:http://internal.amazon.com/...`.
        if let Some(header) = aws_error_type {
            let name = header.split(':').next().unwrap_or(header).trim();
            if !name.is_empty() {
                self.types.push(Cow::Borrowed(name));
            }
        }
        let mut quoted_status = None;
        if let Some(body) = body {
            self.read_body(body, &mut quoted_status, 0);
        }
        if let Some(output) = output {
            self.output = Some(output);
            // A status the output quotes is read only where it is taken: beside a
            // status of 200 or none.
            let status_wanted = matches!(status, Some(200) | None);
            self.read_output(output, &mut quoted_status, status_wanted);
        }
        self.status = match status {
            Some(200) | None => quoted_status.or(status),
            some => some,
        };
    }

    /// Every text the catalogue may search: messages, then output, then the title of
    /// an HTML error page ("api.anthropic.com | 524: A timeout occurred").
    pub fn texts(&self) -> impl Iterator<Item = &str> + Clone + use<'_> {
        self.messages
            .iter()
            .map(|message| message.as_ref())
            .chain(self.output)
            .chain(self.html_title.as_ref().and_then(Option::as_deref))
    }

    /// Whether the text at `index` of [`Facts::texts`] is the CLI output (which may also
    /// hold the model's own words).
    pub fn is_output(&self, index: usize) -> bool {
        self.output.is_some() && index == self.messages.len()
    }

    /// Every text of [`Facts::texts`], white space collapsed and lowercased, in one
    /// buffer: see [`SearchTexts`].
    pub fn search_texts(&self) -> &SearchTexts {
        self.search_texts
            .get_or_init(|| SearchTexts::new(self.texts()))
    }

    /// Every text of [`Facts::texts`], in the same order, with each run of white space
    /// made one space: a message wrapped across lines ("Please try again\n    in 12s",
    /// "Rate\nlimit") reads as it was written.
    pub fn plain_texts(&self) -> impl Iterator<Item = &str> + use<'_> {
        self.search_texts().plain_texts()
    }

    /// Every text of [`Facts::plain_texts`], in the same order, ASCII-lowercased (so
    /// byte offsets stay the same).
    pub fn lowercase_texts(&self) -> impl Iterator<Item = &str> + use<'_> {
        self.search_texts().lowercase_texts()
    }

    /// Every wording, fragment and wait phrase of the one pass (`scan`) these texts
    /// hold, found once.
    pub fn scan(&self) -> &crate::scan::Scan {
        self.scan
            .get_or_init(|| crate::scan::WORDINGS.scan(self.search_texts()))
    }

    fn read_body(&mut self, body: &'a str, quoted_status: &mut Option<u16>, depth: u8) {
        let trimmed = body.trim();
        if trimmed.is_empty() {
            return;
        }
        if trimmed.starts_with('<') {
            self.html_title = Some(html_title(trimmed));
            return;
        }
        let payload = sse_error_data(trimmed).unwrap_or(trimmed);
        match parse_body(payload) {
            None => self.messages.push(Cow::Borrowed(payload)),
            Some(mut wire) if wire.holds_error() => self.read_wire(&mut wire, quoted_status, depth),
            Some(_) => {}
        }
    }

    fn read_output(
        &mut self,
        output: &'a str,
        quoted_status: &mut Option<u16>,
        status_wanted: bool,
    ) {
        if status_wanted && quoted_status.is_none() {
            *quoted_status = quoted_status_in(output);
        }
        if let Some(name) = botocore_exception(output) {
            self.types.push(Cow::Borrowed(name));
        }
        // The first few objects embedded in the output that hold an error.
        let mut searched_from = 0;
        for _ in 0..4 {
            let Some(offset) = memchr::memchr(b'{', &output.as_bytes()[searched_from..]) else {
                break;
            };
            let start = searched_from + offset;
            match parse_body(&output[start..]) {
                Some(mut wire) if wire.holds_error() => {
                    let mut nested_status = None;
                    self.read_wire(&mut wire, &mut nested_status, 0);
                    if quoted_status.is_none() {
                        *quoted_status = nested_status;
                    }
                    break;
                }
                Some(_) => {
                    // A JSON object that holds no error (an agent CLI's event). Read as a
                    // repr, it would be the same object again, or nothing where it
                    // holds `true`, `false`, `null` or an exponent: no error either.
                    searched_from = start + 1;
                    continue;
                }
                None => {}
            }
            // A Python SDK's repr of the body (`Error code: 429 - {'error': {...}}`).
            if let Some(json) = python_repr_as_json(&output[start..])
                && let Some(mut wire) = parse_body(&json).filter(WireBody::holds_error)
            {
                // The repr's JSON starts with its bracket and holds no event stream:
                // read as a body, it is this one value, read once.
                let mut nested = Facts::default();
                let mut nested_status = None;
                nested.read_wire(&mut wire, &mut nested_status, 1);
                if !nested.types.is_empty()
                    || !nested.codes.is_empty()
                    || !nested.messages.is_empty()
                {
                    self.absorb(nested.into_owned());
                    if quoted_status.is_none() {
                        *quoted_status = nested_status;
                    }
                    break;
                }
            }
            searched_from = start + 1;
        }
    }

    /// Takes in a body's fields (taken out of `wire`, which is left empty).
    fn read_wire(&mut self, wire: &mut WireBody<'a>, quoted_status: &mut Option<u16>, depth: u8) {
        if let Some(kind) = wire.kind.0.take() {
            // `error`, `response.failed` and other event names are not error types.
            if kind != "error" && !kind.contains('.') {
                self.types.push(kind);
            }
        }
        if let Some(aws_type) = wire.aws_type.0.take() {
            let name = match aws_type {
                Cow::Borrowed(text) => Cow::Borrowed(after_last(text, '#')),
                Cow::Owned(text) => Cow::Owned(after_last(&text, '#').to_owned()),
            };
            self.types.push(name);
        }
        if let Some(name) = wire.name.0.take() {
            self.types.push(name);
        }
        self.read_code(wire.code.0.take(), quoted_status);
        if let Some(message) = wire.message.0.take() {
            self.messages.push(message);
        }
        if let Some(detail) = wire.detail.0.take() {
            self.messages.push(detail);
        }
        if let Some(title) = wire.title.0.take() {
            self.messages.push(title);
        }
        if let Some(status) = wire.base_resp.take()
            && status.failed()
        {
            self.read_code(status.status_code.0, quoted_status);
            if let Some(message) = status.status_msg.0 {
                self.messages.push(message);
            }
        }
        for item in std::mem::take(&mut wire.errors.0) {
            self.read_code(item.code.0, quoted_status);
            if let Some(message) = item.message.0 {
                self.messages.push(message);
            }
        }
        if let Some(resets_at) = wire.resets_at.0.take() {
            self.resets_at = Some(resets_at);
        }
        if let Some(resets_in_seconds) = wire.resets_in_seconds.0.take() {
            self.resets_in_seconds = Some(resets_in_seconds);
        }
        if let Some(feedback) = wire.prompt_feedback.take()
            && let Some(reason) = feedback.block_reason.0
        {
            self.codes.push(reason);
        }
        self.read_error_field(std::mem::take(&mut wire.error), None, quoted_status, depth);
        if let Some(response) = wire.response.take() {
            self.read_error_field(response.error, None, quoted_status, depth);
        }
        for (field, name) in [
            (
                std::mem::take(&mut wire.throttling_exception),
                "ThrottlingException",
            ),
            (
                std::mem::take(&mut wire.service_unavailable_exception),
                "ServiceUnavailableException",
            ),
            (
                std::mem::take(&mut wire.model_stream_error_exception),
                "ModelStreamErrorException",
            ),
            (
                std::mem::take(&mut wire.validation_exception),
                "ValidationException",
            ),
            (
                std::mem::take(&mut wire.internal_server_exception),
                "InternalServerException",
            ),
        ] {
            self.read_error_field(field, Some(name), quoted_status, depth);
        }
    }

    fn read_error_field(
        &mut self,
        field: ErrorField<'a>,
        exception_name: Option<&'static str>,
        quoted_status: &mut Option<u16>,
        depth: u8,
    ) {
        match field {
            ErrorField::Absent => {}
            ErrorField::Text(message) => {
                if let Some(name) = exception_name {
                    self.types.push(Cow::Borrowed(name));
                }
                self.read_message(message, quoted_status, depth);
            }
            ErrorField::Object(mut error) => {
                if let Some(name) = exception_name {
                    self.types.push(Cow::Borrowed(name));
                }
                self.read_error(&mut error, quoted_status, depth);
            }
        }
    }

    /// Takes in an `error` object's fields (taken out of `error`).
    fn read_error(
        &mut self,
        error: &mut WireError<'a>,
        quoted_status: &mut Option<u16>,
        depth: u8,
    ) {
        if let Some(kind) = error.kind.0.take() {
            self.types.push(kind);
        }
        self.read_code(error.code.0.take(), quoted_status);
        if let Some(status) = error.status.0.take() {
            match http_status(&status) {
                Some(number) => {
                    quoted_status.get_or_insert(number);
                }
                None => self.types.push(status),
            }
        }
        for detail in std::mem::take(&mut error.details.0) {
            if let Some(delay) = detail.retry_delay.0 {
                self.retry_delay = Some(delay);
            }
            for violation in detail.violations.0 {
                for part in [violation.quota_id.0, violation.quota_metric.0]
                    .into_iter()
                    .flatten()
                {
                    self.quota.push_str(&part.to_ascii_lowercase());
                    self.quota.push(' ');
                }
            }
            if let Some(reason) = detail.reason.0 {
                self.codes.push(reason);
            }
            if let Some(code) = detail.error_code.0 {
                self.codes.push(code);
            }
        }
        if let Some(inner) = error.innererror.take()
            && let Some(code) = inner.code.0
        {
            self.codes.push(code);
        }
        if let Some(resets_at) = error.resets_at.0.take() {
            self.resets_at = Some(resets_at);
        }
        if let Some(resets_in_seconds) = error.resets_in_seconds.0.take() {
            self.resets_in_seconds = Some(resets_in_seconds);
        }
        if let Some(message) = error.message.0.take() {
            self.read_message(message, quoted_status, depth);
        }
        if let Some(metadata) = error.metadata.take() {
            let provider_name = metadata.provider_name.0.map(Cow::into_owned);
            if let Some(raw) = metadata.raw.0 {
                self.read_upstream(raw, provider_name);
            }
        }
    }

    /// A message; one that is itself a JSON error (Gemini CLI) is read again, and so is
    /// the JSON (or a Python repr of it) a wrapper's prefix leads into
    /// (`OpenAIException - {"error": ...}`), at any depth up to [`MAX_NESTING`].
    fn read_message(&mut self, message: Cow<'a, str>, quoted_status: &mut Option<u16>, depth: u8) {
        let trimmed = message.trim_start();
        if depth < MAX_NESTING && (trimmed.starts_with('{') || trimmed.starts_with('[')) {
            let mut nested = Facts::default();
            nested.read_body(trimmed, quoted_status, depth + 1);
            if !nested.types.is_empty() || !nested.codes.is_empty() {
                self.absorb(nested.into_owned());
                return;
            }
        }
        if depth < MAX_NESTING
            && let Some(start) = crate::redact::prefix(trimmed, MAX_PREFIX).find('{')
            && start > 0
        {
            let wrapped = &trimmed[start..];
            let json = match parse_body(wrapped) {
                Some(_) => Some(Cow::Borrowed(wrapped)),
                None => python_repr_as_json(wrapped).map(Cow::Owned),
            };
            if let Some(json) = json {
                let mut nested = Facts::default();
                nested.read_body(&json, quoted_status, depth + 1);
                if !nested.types.is_empty() || !nested.codes.is_empty() {
                    self.absorb(nested.into_owned());
                }
            }
        }
        self.messages.push(message);
    }

    /// OpenRouter's `metadata.raw`: the upstream error as JSON, or plain text.
    fn read_upstream(&mut self, raw: Cow<'a, str>, provider_name: Option<String>) {
        let family = provider_name.as_deref().map_or(
            Family::OpenaiCompatible,
            Family::from_openrouter_provider_name,
        );
        let mut nested = Facts::default();
        let mut nested_status = None;
        nested.read_body(&raw, &mut nested_status, 1);
        if nested.types.is_empty() && nested.codes.is_empty() {
            // Plain text: it is the provider's message, and says more than OpenRouter's.
            drop(nested); // It borrows `raw`.
            self.messages.insert(0, raw);
            return;
        }
        nested.status = nested_status;
        self.upstream = Some(Upstream {
            family,
            provider_name,
            facts: Box::new(nested.into_owned()),
        });
    }

    fn read_code(&mut self, code: Option<Cow<'a, str>>, quoted_status: &mut Option<u16>) {
        if let Some(code) = code {
            match http_status(&code) {
                Some(number) => {
                    quoted_status.get_or_insert(number);
                }
                None => self.codes.push(code),
            }
        }
    }

    /// Takes in the facts of a nested error: its messages and kinds come first.
    fn absorb(&mut self, nested: Facts<'a>) {
        let Facts {
            types,
            codes,
            messages,
            quota,
            retry_delay,
            resets_in_seconds,
            resets_at,
            upstream,
            ..
        } = nested;
        self.types.insert_many(0, types);
        self.codes.insert_many(0, codes);
        self.messages.insert_many(0, messages);
        self.quota.push_str(&quota);
        self.retry_delay = retry_delay.or(self.retry_delay.take());
        self.resets_in_seconds = resets_in_seconds.or(self.resets_in_seconds.take());
        self.resets_at = resets_at.or(self.resets_at.take());
        if upstream.is_some() {
            self.upstream = upstream;
        }
    }

    fn into_owned<'b>(self) -> Facts<'b> {
        fn own<'b>(text: Cow<'_, str>) -> Cow<'b, str> {
            Cow::Owned(text.into_owned())
        }
        Facts {
            status: self.status,
            types: self.types.into_iter().map(own).collect(),
            codes: self.codes.into_iter().map(own).collect(),
            messages: self.messages.into_iter().map(own).collect(),
            output: None,
            quota: self.quota,
            retry_delay: self.retry_delay.map(own),
            resets_in_seconds: self.resets_in_seconds.map(own),
            resets_at: self.resets_at.map(own),
            stated_wait_ms: self.stated_wait_ms,
            text_waits: self.text_waits,
            window_rejected: self.window_rejected,
            html_title: self.html_title,
            upstream: self.upstream,
            search_texts: OnceCell::new(),
            scan: OnceCell::new(),
        }
    }
}

/// The Python repr of a dict or list at the start of `text` (`{'error': {'code': 429,
/// 'message': "It's over"}, 'ok': False}`) as JSON text: quotes made double, `True`,
/// `False` and `None` made JSON's. `None` when `text` starts with no such repr, or one
/// longer than 64 KiB or not closed.
fn python_repr_as_json(text: &str) -> Option<String> {
    const MAX_REPR_BYTES: usize = 64 * 1024;
    let text = crate::redact::prefix(text, MAX_REPR_BYTES);
    let first = text.trim_start_matches(['{', '[', ' ']);
    if !(text.starts_with('{') || text.starts_with('['))
        || !first.starts_with(['\'', '"', '}', ']'])
    {
        return None;
    }
    // Every byte the conversion acts on is ASCII: the rest is copied in whole runs, cut
    // only where an ASCII byte stands, so always on a character boundary.
    let bytes = text.as_bytes();
    let mut json = String::with_capacity(text.len() + 16);
    let mut depth = 0_usize;
    let mut at = 0;
    while at < bytes.len() {
        match bytes[at] {
            open @ (b'{' | b'[') => {
                depth += 1;
                json.push(char::from(open));
                at += 1;
            }
            close @ (b'}' | b']') => {
                depth = depth.checked_sub(1)?;
                json.push(char::from(close));
                if depth == 0 {
                    return Some(json);
                }
                at += 1;
            }
            quote @ (b'\'' | b'"') => at = repr_string_as_json(text, at + 1, quote, &mut json)?,
            letter if letter.is_ascii_alphabetic() => {
                let rest = &text[at..];
                let word_end = rest
                    .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                    .unwrap_or(rest.len());
                json.push_str(match &rest[..word_end] {
                    "True" => "true",
                    "False" => "false",
                    "None" => "null",
                    _ => return None,
                });
                at += word_end;
            }
            _ => {
                // Numbers, white space, commas and colons, as they are.
                let run = bytes[at..]
                    .iter()
                    .position(|byte| {
                        matches!(byte, b'{' | b'[' | b'}' | b']' | b'\'' | b'"')
                            || byte.is_ascii_alphabetic()
                    })
                    .map_or(bytes.len(), |length| at + length);
                json.push_str(&text[at..run]);
                at = run;
            }
        }
    }
    None
}

/// Appends the repr string that starts at byte `at` of `text` (just after its opening
/// `quote`) to `json` as a JSON string, and answers where the repr goes on after its
/// closing quote; `None` when it is not closed. Escapes JSON knows are kept, `\'`
/// loses its backslash, an escape JSON does not know is its character, a double quote
/// is escaped and a control character is a space.
fn repr_string_as_json(text: &str, mut at: usize, quote: u8, json: &mut String) -> Option<usize> {
    let bytes = text.as_bytes();
    json.push('"');
    loop {
        // What needs no change is copied in one run: up to a backslash, a quote or a
        // byte that may start a control character (C1 controls start with 0xC2).
        let run = repr_string_run_end(bytes, at)?;
        json.push_str(&text[at..run]);
        at = run;
        let character = text[at..].chars().next()?;
        at += character.len_utf8();
        match character {
            '\\' => {
                let escaped = text[at..].chars().next()?;
                at += escaped.len_utf8();
                match escaped {
                    '\'' => json.push('\''),
                    '"' => json.push_str("\\\""),
                    'n' | 't' | 'r' | '\\' | '/' | 'b' | 'f' | 'u' => {
                        json.push('\\');
                        json.push(escaped);
                    }
                    other => json.push(other),
                }
            }
            c if c == char::from(quote) => break,
            '"' => json.push_str("\\\""),
            c if c.is_control() => json.push(' '),
            c => json.push(c),
        }
    }
    json.push('"');
    Some(at)
}

/// Whether a byte of a repr string needs a change, or ends it: a backslash, a quote,
/// a control character's byte (C1 controls start with 0xC2) or DEL.
fn repr_string_special(byte: u8) -> bool {
    matches!(byte, b'\\' | b'\'' | b'"' | 0xC2) || byte < 0x20 || byte == 0x7f
}

/// The offset of the first byte of `bytes` at or after `at` that
/// [`repr_string_special`] accepts; `None` where there is none.
///
/// A repr's strings are most of it, and a test per byte costs more than testing eight
/// at once in one machine word: each of the five bytes where `word ^ byte` has a zero
/// byte, a control where the byte is below 0x20 with its high bit clear. Each test is
/// exact per byte, so the lowest byte found is the first.
fn repr_string_run_end(bytes: &[u8], mut at: usize) -> Option<usize> {
    const LOW: u64 = 0x7f7f_7f7f_7f7f_7f7f;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    const fn repeat(byte: u8) -> u64 {
        u64::from_le_bytes([byte; 8])
    }
    // The high bit of each zero byte of `word` (exact: the low seven bits plus 0x7f
    // carry into the high bit, never into the next byte).
    let zero_bytes = |word: u64| !(((word & LOW) + LOW) | word) & HIGH;
    while let Some(window) = bytes.get(at..at + 8) {
        let word = u64::from_le_bytes(window.try_into().expect("eight bytes"));
        let special = zero_bytes(word ^ repeat(b'\\'))
            | zero_bytes(word ^ repeat(b'\''))
            | zero_bytes(word ^ repeat(b'"'))
            | zero_bytes(word ^ repeat(0xc2))
            | zero_bytes(word ^ repeat(0x7f))
            | (!((word & LOW) + repeat(0x80 - b' ')) & !word & HIGH);
        if special != 0 {
            return Some(at + (special.trailing_zeros() / 8) as usize);
        }
        at += 8;
    }
    bytes[at..]
        .iter()
        .position(|byte| repr_string_special(*byte))
        .map(|length| at + length)
}

/// The texts of one piece of evidence as the one pass reads them, made once: each
/// text's runs of white space made one space where it has any other than single spaces
/// (a message wrapped across lines, "Please try again\n    in 12s", reads as it was
/// written), then the texts joined, each followed by [`SEPARATOR`], and the whole
/// ASCII-lowercased (byte offsets stay the same). Wordings, fragments and phrases are
/// lowercase: the pass reads the lowercased copy case-sensitively, all texts at once.
#[derive(Debug, Default)]
pub(crate) struct SearchTexts {
    /// The collapsed texts, each followed by [`SEPARATOR`], then the same again,
    /// ASCII-lowercased, from `lower_from`: one allocation for both.
    buffer: String,
    /// Where the lowercased copy starts in `buffer`.
    lower_from: usize,
    /// Where each text ends in either copy, from the copy's start (its separator
    /// follows).
    ends: SmallVec<[usize; 4]>,
}

/// What follows each text in [`SearchTexts`]: no collapsed text holds it, and no
/// fragment, wording or phrase the catalogue searches for does (their compilers check),
/// so no match runs across two texts, and each text's matches are what searching it
/// alone would find.
pub(crate) const SEPARATOR: char = '\n';

impl SearchTexts {
    pub fn new<'t>(texts: impl Iterator<Item = &'t str> + Clone) -> Self {
        let length: usize = texts.clone().map(|text| text.len() + 1).sum();
        let mut buffer = String::with_capacity(2 * length);
        let mut ends = SmallVec::new();
        for text in texts {
            if needs_collapsing(text) {
                collapse_white_space_into(text, &mut buffer);
            } else {
                buffer.push_str(text);
            }
            ends.push(buffer.len());
            buffer.push(SEPARATOR);
        }
        let lower_from = buffer.len();
        buffer.extend_from_within(..lower_from);
        buffer[lower_from..].make_ascii_lowercase();
        Self {
            buffer,
            lower_from,
            ends,
        }
    }

    /// Every text, lowercased, joined: search this once for all texts, then find a
    /// match's text with [`SearchTexts::text_at`].
    pub fn joined(&self) -> &str {
        &self.buffer[self.lower_from..]
    }

    /// How many texts there are.
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    /// The byte range of text `index` in [`SearchTexts::joined`].
    pub fn range(&self, index: usize) -> std::ops::Range<usize> {
        let start = match index {
            0 => 0,
            _ => self.ends[index - 1] + SEPARATOR.len_utf8(),
        };
        start..self.ends[index]
    }

    /// The index of the text that holds byte `offset` of [`SearchTexts::joined`] (or
    /// the separator after it).
    pub fn text_at(&self, offset: usize) -> usize {
        self.ends.partition_point(|end| *end < offset)
    }

    /// Text `index`, lowercased.
    pub fn lower(&self, index: usize) -> &str {
        &self.joined()[self.range(index)]
    }

    /// Text `index`, collapsed, in its own case.
    pub fn plain(&self, index: usize) -> &str {
        &self.buffer[self.range(index)]
    }

    /// Every text, lowercased, in order.
    pub fn lowercase_texts(&self) -> impl Iterator<Item = &str> + '_ {
        (0..self.len()).map(|index| self.lower(index))
    }

    /// Every text, collapsed, in its own case, in order.
    pub fn plain_texts(&self) -> impl Iterator<Item = &str> + '_ {
        (0..self.len()).map(|index| self.plain(index))
    }
}

/// Whether `text` has white space other than single spaces.
fn needs_collapsing(text: &str) -> bool {
    // One searcher built once: building one per text costs more than the search.
    static DOUBLE_SPACE: LazyLock<memchr::memmem::Finder<'static>> =
        LazyLock::new(|| memchr::memmem::Finder::new("  "));
    let bytes = text.as_bytes();
    memchr::memchr3(b'\n', b'\r', b'\t', bytes).is_some() || DOUBLE_SPACE.find(bytes).is_some()
}

/// Appends `text` with every run of ASCII white space made one space, and none at
/// either end. White space is ASCII, so the bytes are read without decoding
/// characters, and what lies between runs other than a single space is copied whole
/// (a line, not a word at a time).
fn collapse_white_space_into(text: &str, into: &mut String) {
    let bytes = text.as_bytes();
    let mut at = bytes
        .iter()
        .position(|byte| !byte.is_ascii_whitespace())
        .unwrap_or(bytes.len());
    // The start of what is yet to be copied.
    let mut from = at;
    while at < bytes.len() {
        at = next_white_space_to_collapse(bytes, at);
        if at == bytes.len() {
            break;
        }
        let run = at;
        while at < bytes.len() && bytes[at].is_ascii_whitespace() {
            at += 1;
        }
        into.push_str(&text[from..run]);
        if at == bytes.len() {
            // White space at the end goes.
            return;
        }
        into.push(' ');
        from = at;
    }
    into.push_str(&text[from..]);
}

/// The offset of the first white space in `bytes`, at or after `at`, that collapsing
/// changes (white space other than a single space between two words), or the length
/// of `bytes` where there is none.
///
/// Words are short, and a test per byte, or a stop at every single space, costs more
/// than testing eight offsets at once in one machine word: a byte is a candidate where
/// it is at most a space (its high bit clear) and either is not a space or the next
/// byte is at most a space too. That finds every such white space, and a few control
/// bytes besides, which the exact test then passes over.
fn next_white_space_to_collapse(bytes: &[u8], mut at: usize) -> usize {
    const LOW: u64 = 0x7f7f_7f7f_7f7f_7f7f;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    const fn repeat(byte: u8) -> u64 {
        u64::from_le_bytes([byte; 8])
    }
    // The high bit of each byte of `word` that is at most a space (exact: the low
    // seven bits plus 0x5f carry into the high bit, never into the next byte).
    let blank = |word: u64| !((word & LOW) + repeat(0x80 - b'!')) & !word & HIGH;
    let spaces = |word: u64| {
        let differs = word ^ repeat(b' ');
        !(((differs & LOW) + LOW) | differs) & HIGH
    };
    let to_collapse = |at: usize| {
        let byte = bytes[at];
        byte.is_ascii_whitespace()
            && (byte != b' ' || bytes.get(at + 1).is_none_or(u8::is_ascii_whitespace))
    };
    while let Some(window) = bytes.get(at..at + 9) {
        let word = u64::from_le_bytes(window[..8].try_into().expect("eight bytes"));
        let next = u64::from_le_bytes(window[1..].try_into().expect("eight bytes"));
        let mut candidates = blank(word) & (!spaces(word) | blank(next));
        while candidates != 0 {
            let found = at + (candidates.trailing_zeros() / 8) as usize;
            if to_collapse(found) {
                return found;
            }
            candidates &= candidates - 1;
        }
        at += 8;
    }
    (at..bytes.len())
        .find(|at| to_collapse(*at))
        .unwrap_or(bytes.len())
}

/// A 3-digit HTTP error status written as text (`"429"`, `"400"`): 400 to 599. Other
/// numbers where a status could be are something else (`delayed connect error: 111`
/// is an errno).
fn http_status(text: &str) -> Option<u16> {
    let text = text.trim();
    if text.len() != 3 || !text.bytes().all(|byte| byte.is_ascii_digit()) {
        return None;
    }
    text.parse()
        .ok()
        .filter(|status| (400..=599).contains(status))
}

fn after_last(text: &str, separator: char) -> &str {
    text.rsplit(separator).next().unwrap_or(text)
}

/// The data of an SSE stream's error event (`event: error` or `response.failed`), or of
/// its last `data:` line that holds an error.
fn sse_error_data(text: &str) -> Option<&str> {
    // One searcher built once: most bodies are plain JSON and pass this test quickly.
    static DATA_LINE: LazyLock<memchr::memmem::Finder<'static>> =
        LazyLock::new(|| memchr::memmem::Finder::new("\ndata:"));
    let stream = text.starts_with("event:")
        || text.starts_with("data:")
        || DATA_LINE.find(text.as_bytes()).is_some();
    if !stream {
        return None;
    }
    let mut in_error_event = false;
    let mut fallback = None;
    for line in text.lines() {
        let line = line.trim_end();
        if let Some(event) = line.strip_prefix("event:") {
            let event = event.trim();
            in_error_event =
                event == "error" || event.ends_with(".failed") || event.ends_with("error");
        } else if let Some(data) = line.strip_prefix("data:") {
            let data = data.trim();
            if in_error_event {
                return Some(data);
            }
            if data.contains("\"error\"") || data.contains("response.failed") {
                fallback = Some(data);
            }
        }
    }
    fallback
}

/// The `<title>` of an HTML page, if any.
fn html_title(html: &str) -> Option<String> {
    let lower = crate::redact::prefix(html, 4096).to_ascii_lowercase();
    let start = lower.find("<title>")? + "<title>".len();
    let end = start + lower[start..].find("</title>")?;
    let title = html.get(start..end)?.trim();
    (!title.is_empty()).then(|| title.to_owned())
}

/// The HTTP status a CLI quotes: `API Error: 529`, `got status: 429`, `Error: 400 {`,
/// `last status: 429`, `unexpected status 401`, `Error code: 429`.
///
/// The first place (in text order) where one of the markers, in any ASCII case, is
/// directly followed by a 3-digit status that no further digit follows. Every marker
/// ends with a space, so the scan visits the spaces a digit follows and checks the cheap
/// digits before the marker: no lowercased copy and no automaton for what is usually a
/// short line.
fn quoted_status_in(output: &str) -> Option<u16> {
    /// The markers, lowercased. `api error: ` and `error code: ` end with `error: ` and
    /// `code: `, so these cover them.
    const MARKERS: [&[u8]; 5] = [
        b"error: ",
        b"code: ",
        b"got status: ",
        b"last status: ",
        b"unexpected status ",
    ];
    let haystack = crate::redact::prefix(output, 4096);
    let bytes = haystack.as_bytes();
    find_space_before_digit(bytes, |space| {
        let digits_start = space + 1;
        let digits = bytes.get(digits_start..digits_start + 3)?;
        if !digits.iter().all(u8::is_ascii_digit)
            || bytes.get(digits_start + 3).is_some_and(u8::is_ascii_digit)
        {
            return None;
        }
        let before = &bytes[..digits_start];
        MARKERS
            .iter()
            .any(|marker| {
                before.len() >= marker.len()
                    && before[before.len() - marker.len()..].eq_ignore_ascii_case(marker)
            })
            .then(|| http_status(&haystack[digits_start..digits_start + 3]))
            .flatten()
    })
}

/// The first answer `check` gives for a space of `bytes` that a digit follows, asked
/// for each such space (its offset) in order.
///
/// Most spaces of an output are followed by a word, and a search per space costs more
/// than reading the bytes: eight offsets are tested at a time, in the bytes of one
/// word (a space where `word ^ 0x2020..` has a zero byte, a digit where the byte is at
/// least `0` and below `:` with its high bit clear), and only the hits are checked.
fn find_space_before_digit<T>(
    bytes: &[u8],
    mut check: impl FnMut(usize) -> Option<T>,
) -> Option<T> {
    const LOW: u64 = 0x7f7f_7f7f_7f7f_7f7f;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    const fn repeat(byte: u8) -> u64 {
        u64::from_le_bytes([byte; 8])
    }
    // The high bit of each zero byte of `word` (exact: the low seven bits plus 0x7f
    // carry into the high bit, never into the next byte).
    let zero_bytes = |word: u64| !(((word & LOW) + LOW) | word) & HIGH;
    let digits = |word: u64| {
        let low = word & LOW;
        let at_least_zero = low + repeat(0x80 - b'0');
        let at_least_colon = low + repeat(0x80 - b':');
        at_least_zero & !at_least_colon & !word & HIGH
    };
    // Past the end, the bytes read as zeros: neither spaces nor digits.
    let word_at = |at: usize| -> u64 {
        let mut word = [0; 8];
        let available = bytes.len().saturating_sub(at).min(8);
        word[..available].copy_from_slice(&bytes[at..at + available]);
        u64::from_le_bytes(word)
    };
    // The last byte has no byte after it.
    let offsets = bytes.len().saturating_sub(1);
    let mut start = 0;
    while start < offsets {
        let (spaces, next) = match bytes.get(start..start + 9) {
            Some(window) => (
                u64::from_le_bytes(window[..8].try_into().expect("eight bytes")),
                u64::from_le_bytes(window[1..].try_into().expect("eight bytes")),
            ),
            None => (word_at(start), word_at(start + 1)),
        };
        let mut hits = zero_bytes(spaces ^ repeat(b' ')) & digits(next);
        while hits != 0 {
            let found = check(start + hits.trailing_zeros() as usize / 8);
            if found.is_some() {
                return found;
            }
            hits &= hits - 1;
        }
        start += 8;
    }
    None
}

/// botocore's `An error occurred (ThrottlingException) when calling ...`.
fn botocore_exception(output: &str) -> Option<&str> {
    static MARKER: LazyLock<memchr::memmem::Finder<'static>> =
        LazyLock::new(|| memchr::memmem::Finder::new("An error occurred ("));
    let start = MARKER.find(output.as_bytes())? + MARKER.needle().len();
    let end = start + output[start..].find(')')?;
    let name = &output[start..end];
    (!name.is_empty() && name.len() < 64 && name.bytes().all(|byte| byte.is_ascii_alphanumeric()))
        .then_some(name)
}

#[cfg(test)]
mod tests {
    use super::Facts;

    #[test]
    fn sse_stream_inside_a_200_gives_its_error_event() {
        let body = "event: message_start\ndata: {\"type\":\"message_start\"}\n\nevent: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n";
        let facts = Facts::gather(Some(200), None, Some(body), None);
        assert_eq!(facts.types.iter().collect::<Vec<_>>(), ["overloaded_error"]);
        assert_eq!(facts.messages.iter().collect::<Vec<_>>(), ["Overloaded"]);
    }

    #[test]
    fn gemini_cli_message_that_is_json_is_read_again() {
        let output = r#"[API Error: got status: 429 Too Many Requests. {"error":{"message":"{\n  \"error\": {\n    \"code\": 429,\n    \"message\": \"Resource has been exhausted (e.g. check quota).\",\n    \"status\": \"RESOURCE_EXHAUSTED\"\n  }\n}\n","code":429,"status":"Too Many Requests"}}]"#;
        let facts = Facts::gather(None, None, None, Some(output));
        assert_eq!(facts.status, Some(429));
        assert_eq!(facts.types.first().unwrap(), "RESOURCE_EXHAUSTED");
        assert_eq!(
            facts.messages.first().unwrap(),
            "Resource has been exhausted (e.g. check quota)."
        );
    }

    #[test]
    fn a_python_repr_in_output_is_read_as_its_json() {
        let output = r#"openai.RateLimitError: Error code: 429 - {'error': {'message': "You exceeded your current quota, it's \"billing\"", 'type': 'insufficient_quota', 'param': None, 'code': 'insufficient_quota'}}"#;
        let facts = Facts::gather(None, None, None, Some(output));
        assert_eq!(facts.status, Some(429));
        assert_eq!(facts.codes.first().unwrap(), "insufficient_quota");
        assert_eq!(
            facts.messages.first().unwrap(),
            r#"You exceeded your current quota, it's "billing""#
        );
        assert_eq!(super::python_repr_as_json("{'a': Nonsense}"), None);
        assert_eq!(
            super::python_repr_as_json("[{'ok': True, 'n': 1.5}] trailing").as_deref(),
            Some(r#"[{"ok": true, "n": 1.5}]"#)
        );
    }

    #[test]
    fn json_behind_a_wrappers_prefix_in_a_message_is_read() {
        let body = r#"{"error": {"message": "litellm.RateLimitError: OpenAIException - {\"error\": {\"code\": \"insufficient_quota\", \"message\": \"Quota exceeded\"}}"}}"#;
        let facts = Facts::gather(Some(429), None, Some(body), None);
        assert_eq!(facts.codes.first().unwrap(), "insufficient_quota");
        assert!(
            facts
                .messages
                .iter()
                .any(|message| message == "Quota exceeded")
        );
        assert!(
            facts
                .messages
                .iter()
                .any(|message| message.starts_with("litellm.RateLimitError"))
        );
    }

    /// Collapsing copies what lies between runs whole: the same text as joining the
    /// words with single spaces.
    #[test]
    fn white_space_collapses_to_single_spaces() {
        for text in [
            "",
            "   ",
            "a",
            " a ",
            "\n\tRate\nlimit  reached,\r\n  try again\x0c in 12s \t",
            "one two  three\u{a0}four\n",
            "é\n\né é",
        ] {
            let words: Vec<&str> = text.split_ascii_whitespace().collect();
            let mut collapsed = String::new();
            super::collapse_white_space_into(text, &mut collapsed);
            assert_eq!(collapsed, words.join(" "), "{text:?}");
        }
    }

    /// The white space found to collapse eight bytes at a time is the first that
    /// collapsing changes: each kind of ASCII white space, alone, in pairs and at the
    /// end, beside bytes that are not white space (a vertical tab, a byte with the high
    /// bit set, other control bytes, `!`), at every offset of a word and across two.
    #[test]
    fn white_space_to_collapse_found_eight_bytes_at_a_time_is_the_first() {
        let blanks = [b' ', b'\t', b'\n', b'\x0c', b'\r'];
        let others = [b'a', 0x0b, 0xa0, 0x80, 0x08, 0x0e, 0x1f, b'!', 0x00, 0xff];
        let reference = |bytes: &[u8], from: usize| {
            (from..bytes.len())
                .find(|at| {
                    bytes[*at].is_ascii_whitespace()
                        && (bytes[*at] != b' '
                            || bytes.get(at + 1).is_none_or(u8::is_ascii_whitespace))
                })
                .unwrap_or(bytes.len())
        };
        for length in 0..20 {
            for other in others {
                for at in 0..length {
                    for first in blanks {
                        for second in blanks.into_iter().chain([other]) {
                            let mut bytes = vec![other; length];
                            bytes[at] = first;
                            if let Some(next) = bytes.get_mut(at + 1) {
                                *next = second;
                            }
                            for from in 0..=length {
                                assert_eq!(
                                    super::next_white_space_to_collapse(&bytes, from),
                                    reference(&bytes, from),
                                    "{bytes:?} from {from}"
                                );
                            }
                        }
                    }
                }
            }
        }
    }

    /// The end of a repr string's plain run found eight bytes at a time is the first
    /// byte that needs a change: each such byte, and bytes beside it that need none
    /// (a space, `&`, `[`, `]`, 0xC3, 0xA2, 0x80, 0xFF, `~`), at every offset of a word
    /// and across two.
    #[test]
    fn repr_string_runs_found_eight_bytes_at_a_time_end_at_the_first_special_byte() {
        let specials = [b'\\', b'\'', b'"', 0xc2, 0x00, 0x1f, b'\n', 0x7f];
        let others = [b' ', b'&', b'[', b']', 0xc3, 0xa2, 0x80, 0xff, b'~', b'a'];
        for length in 0..20 {
            for other in others {
                assert_eq!(super::repr_string_run_end(&vec![other; length], 0), None);
                for at in 0..length {
                    for special in specials {
                        let mut bytes = vec![other; length];
                        bytes[at] = special;
                        for from in 0..=length {
                            let expected = bytes[from..]
                                .iter()
                                .position(|byte| super::repr_string_special(*byte))
                                .map(|offset| from + offset);
                            assert_eq!(
                                super::repr_string_run_end(&bytes, from),
                                expected,
                                "{bytes:?} from {from}"
                            );
                        }
                    }
                }
            }
        }
    }

    /// A safe cause cut from a text as the search texts collapsed it is the one cut
    /// from the raw text: blanks other than ASCII white space (a vertical tab, a form
    /// feed where no other white space is, U+0085, U+00A0, U+2028, C1 controls), runs at
    /// either end, long texts, texts past the 2 KiB read and texts with secrets.
    #[test]
    fn safe_causes_cut_from_the_collapsed_text_are_those_of_the_raw_text() {
        let pieces = [
            "Rate limit",
            " ",
            "  ",
            "\n",
            "\r\n",
            "\t",
            "\x0b",
            "\x0c",
            "\u{85}",
            "\u{a0}",
            "\u{2028}",
            "\u{9f}",
            "\x7f",
            "é",
            "日本語",
            "’",
            "key=",
            "abcdefgh12",
            "sk-proj-abcdefghijklmnop",
            "a@b.io",
            "https://x.io/?q=1",
            "word.",
        ];
        let mut texts: Vec<String> = Vec::new();
        for first in pieces {
            for second in pieces {
                for third in pieces {
                    texts.push(format!("{first}{second}x{third}"));
                    texts.push(format!("{second}{}{third}", first.repeat(40)));
                }
            }
        }
        texts.push("word ".repeat(500));
        texts.push(format!("{}\n{}", "word ".repeat(409), "sk-abcdefghijkl"));
        texts.push("a\u{a0}".repeat(400));
        texts.push(format!("{}{}", " \n".repeat(1000), "word ".repeat(100)));
        // Read whole at 2 KiB exactly; one byte more, and the last word is dropped.
        for last in ["abc", "abcd"] {
            let text = format!("{}{}{last}", " \n".repeat(1000), "word ".repeat(9));
            assert_eq!(text.len(), 2045 + last.len());
            texts.push(text);
        }
        for text in &texts {
            let search_texts = super::SearchTexts::new(std::iter::once(text.as_str()));
            assert_eq!(
                crate::redact::safe_cause_of_collapsed(text, search_texts.plain(0)),
                crate::redact::safe_cause(text),
                "{text:?}"
            );
        }
    }

    #[test]
    fn cli_status_markers() {
        let cases = [
            ("API Error: 529 Overloaded.", Some(529)),
            (
                "stream error: exceeded retry limit, last status: 429 Too Many Requests",
                Some(429),
            ),
            ("unexpected status 401 Unauthorized: {}", Some(401)),
            ("Error: 4000 things", None),
            ("nothing here", None),
            (
                "a line of more than sixteen bytes, then error: 200 ok, then Error: 503",
                Some(503),
            ),
        ];
        for (output, expected) in cases {
            assert_eq!(super::quoted_status_in(output), expected, "{output}");
        }
    }

    /// The spaces a digit follows, read eight bytes at a time, are those a byte at a
    /// time finds, at every length and wherever a word ends; bytes next to digits and
    /// spaces (`/`, `:`, and the same with the high bit set) are neither.
    #[test]
    fn spaces_before_digits_are_found_in_every_word() {
        let pattern = b" 1a 22  3 x4 5 / :9 \xb0 \xb9\xa0 0\xa07\x00 9";
        for length in 0..80 {
            for shift in 0..pattern.len() {
                let bytes: Vec<u8> = (0..length)
                    .map(|index| pattern[(index + shift) % pattern.len()])
                    .collect();
                let expected: Vec<usize> = (0..length.saturating_sub(1))
                    .filter(|at| bytes[*at] == b' ' && bytes[*at + 1].is_ascii_digit())
                    .collect();
                let mut found = Vec::new();
                super::find_space_before_digit(&bytes, |space| {
                    found.push(space);
                    None::<()>
                });
                assert_eq!(found, expected, "{:?}", String::from_utf8_lossy(&bytes));
            }
        }
    }
}
