//! A fast reader for the plain error bodies most providers send (Anthropic, OpenAI and
//! its imitators, Ollama, Bedrock, OpenRouter): one pass over the bytes, no serde
//! machinery, strings borrowed unless they hold escapes.
//!
//! It never decides alone that a body is unreadable. It reads the subset of JSON it can
//! read exactly as the serde reader in [`super`] would (same fields, same values, same
//! strictness), and says [`Unsure`] for anything else: `\\u` escapes, fractional or
//! negative numbers, Gemini's `details` lists, a struct given as an array, a field given
//! twice, deep nesting, anything that is not JSON. The caller then runs the serde
//! reader, which stays the reference.

use std::borrow::Cow;

use super::{
    Details, ErrorField, Scalar, WireBody, WireError, WireInnerError, WireMetadata,
    WirePromptFeedback, WireResponse,
};

/// The fast reader cannot vouch for its answer; the serde reader must decide.
#[derive(Debug)]
pub(super) struct Unsure;

type Fast<T> = Result<T, Unsure>;

/// How deep a skipped value may nest before the fast reader gives up (serde's limit is
/// 128, so everything accepted here is within it).
const MAX_DEPTH: u8 = 32;

/// Reads `text` (starting with `{`; what follows the object is not read) into `body`,
/// which starts as the default. On [`Unsure`], `body` may be partly filled.
pub(super) fn parse_plain_body<'a>(text: &'a str, body: &mut WireBody<'a>) -> Fast<()> {
    let mut reader = Reader { text, at: 0 };
    let mut seen = Seen::default();
    reader.object(|reader, key| {
        // Field names and aliases as `WireBody` declares them.
        match key.as_ref() {
            "type" => {
                seen.first(0)?;
                body.kind = reader.scalar()?;
            }
            "error" => {
                seen.first(1)?;
                body.error = reader.error_field()?;
            }
            "message" | "Message" | "errorMessage" => {
                seen.first(2)?;
                body.message = reader.scalar()?;
            }
            "__type" => {
                seen.first(3)?;
                body.aws_type = reader.scalar()?;
            }
            "name" => {
                seen.first(4)?;
                body.name = reader.scalar()?;
            }
            "code" => {
                seen.first(5)?;
                body.code = reader.scalar()?;
            }
            "detail" => {
                seen.first(6)?;
                body.detail = reader.scalar()?;
            }
            "response" => {
                seen.first(7)?;
                body.response = reader.optional_struct(|reader| {
                    let mut response = WireResponse::default();
                    let mut seen = Seen::default();
                    reader.object(|reader, key| {
                        match key.as_ref() {
                            "error" => {
                                seen.first(0)?;
                                response.error = reader.error_field()?;
                            }
                            _ => reader.skip_value(2)?,
                        }
                        Ok(())
                    })?;
                    Ok(response)
                })?;
            }
            "resets_at" => {
                seen.first(8)?;
                body.resets_at = reader.scalar()?;
            }
            "resets_in_seconds" => {
                seen.first(9)?;
                body.resets_in_seconds = reader.scalar()?;
            }
            "promptFeedback" => {
                seen.first(10)?;
                body.prompt_feedback = reader.optional_struct(|reader| {
                    let mut feedback = WirePromptFeedback::default();
                    let mut seen = Seen::default();
                    reader.object(|reader, key| {
                        match key.as_ref() {
                            "blockReason" => {
                                seen.first(0)?;
                                feedback.block_reason = reader.scalar()?;
                            }
                            _ => reader.skip_value(2)?,
                        }
                        Ok(())
                    })?;
                    Ok(feedback)
                })?;
            }
            "throttlingException" => {
                seen.first(11)?;
                body.throttling_exception = reader.error_field()?;
            }
            "serviceUnavailableException" => {
                seen.first(12)?;
                body.service_unavailable_exception = reader.error_field()?;
            }
            "modelStreamErrorException" => {
                seen.first(13)?;
                body.model_stream_error_exception = reader.error_field()?;
            }
            "validationException" => {
                seen.first(14)?;
                body.validation_exception = reader.error_field()?;
            }
            "internalServerException" => {
                seen.first(15)?;
                body.internal_server_exception = reader.error_field()?;
            }
            _ => reader.skip_value(1)?,
        }
        Ok(())
    })
}

/// Which fields were read already: serde refuses a body that gives one twice.
#[derive(Default)]
struct Seen(u16);

impl Seen {
    /// Marks field `index` as read; [`Unsure`] when it was already.
    fn first(&mut self, index: u8) -> Fast<()> {
        let bit = 1 << index;
        if self.0 & bit != 0 {
            return Err(Unsure);
        }
        self.0 |= bit;
        Ok(())
    }
}

/// The offset of the first `"`, `\\` or control character in `bytes`: where a JSON
/// string ends, or stops being plain. Eight bytes at a time (the word-at-a-time test
/// serde_json uses too); most strings here are short, too short for SIMD to pay off.
fn special_byte(bytes: &[u8]) -> Option<usize> {
    const ONES: u64 = u64::MAX / 255;
    const HIGHS: u64 = ONES << 7;
    let mut chunks = bytes.chunks_exact(8);
    let mut offset = 0;
    for chunk in &mut chunks {
        let word = u64::from_le_bytes(chunk.try_into().expect("eight bytes"));
        // A byte below 0x20, or equal to `"` or `\\` (x ^ byte is zero there), sets
        // its high bit; the lowest such byte is always a true one.
        let control = word.wrapping_sub(ONES * 0x20) & !word;
        let quote = word ^ (ONES * u64::from(b'"'));
        let quote = quote.wrapping_sub(ONES) & !quote;
        let backslash = word ^ (ONES * u64::from(b'\\'));
        let backslash = backslash.wrapping_sub(ONES) & !backslash;
        let found = (control | quote | backslash) & HIGHS;
        if found != 0 {
            return Some(offset + found.trailing_zeros() as usize / 8);
        }
        offset += 8;
    }
    chunks
        .remainder()
        .iter()
        .position(|byte| matches!(byte, b'"' | b'\\') || *byte < 0x20)
        .map(|position| offset + position)
}

/// A position in the text being read.
struct Reader<'a> {
    text: &'a str,
    at: usize,
}

impl<'a> Reader<'a> {
    fn bytes(&self) -> &'a [u8] {
        self.text.as_bytes()
    }

    fn peek(&self) -> Fast<u8> {
        self.bytes().get(self.at).copied().ok_or(Unsure)
    }

    /// JSON whitespace, as serde_json reads it.
    fn skip_whitespace(&mut self) {
        while let Some(b' ' | b'\n' | b'\t' | b'\r') = self.bytes().get(self.at) {
            self.at += 1;
        }
    }

    fn expect(&mut self, byte: u8) -> Fast<()> {
        if self.peek()? != byte {
            return Err(Unsure);
        }
        self.at += 1;
        Ok(())
    }

    /// An object's members, each handed to `member` with the reader at its value.
    fn object(&mut self, mut member: impl FnMut(&mut Self, Cow<'a, str>) -> Fast<()>) -> Fast<()> {
        self.expect(b'{')?;
        self.skip_whitespace();
        if self.peek()? == b'}' {
            self.at += 1;
            return Ok(());
        }
        loop {
            self.skip_whitespace();
            let key = self.string()?;
            self.skip_whitespace();
            self.expect(b':')?;
            self.skip_whitespace();
            member(self, key)?;
            self.skip_whitespace();
            match self.peek()? {
                b',' => self.at += 1,
                b'}' => {
                    self.at += 1;
                    return Ok(());
                }
                _ => return Err(Unsure),
            }
        }
    }

    /// A string: borrowed when plain, decoded when it holds the short escapes (`\\n`,
    /// `\\"`, ...). `\\u` escapes and control characters are left to serde.
    fn string(&mut self) -> Fast<Cow<'a, str>> {
        self.expect(b'"')?;
        let start = self.at;
        let mut end = start + special_byte(&self.bytes()[start..]).ok_or(Unsure)?;
        if self.bytes()[end] == b'"' {
            self.at = end + 1;
            return Ok(Cow::Borrowed(&self.text[start..end]));
        }
        let mut decoded = String::with_capacity(end - start + 16);
        decoded.push_str(&self.text[start..end]);
        loop {
            match self.bytes()[end] {
                b'"' => {
                    self.at = end + 1;
                    return Ok(Cow::Owned(decoded));
                }
                b'\\' => {
                    decoded.push(match self.bytes().get(end + 1) {
                        Some(b'"') => '"',
                        Some(b'\\') => '\\',
                        Some(b'/') => '/',
                        Some(b'b') => '\u{8}',
                        Some(b'f') => '\u{c}',
                        Some(b'n') => '\n',
                        Some(b'r') => '\r',
                        Some(b't') => '\t',
                        _ => return Err(Unsure),
                    });
                    end += 2;
                }
                _ => return Err(Unsure),
            }
            let from = end;
            end = from + special_byte(&self.bytes()[from..]).ok_or(Unsure)?;
            decoded.push_str(&self.text[from..end]);
        }
    }

    /// A non-negative integer that fits a `u64` for sure, as its text (which is what
    /// serde's reader makes of it: no leading zeros, no sign, no exponent).
    fn integer(&mut self) -> Fast<&'a str> {
        let start = self.at;
        let digits = self.bytes()[start..]
            .iter()
            .take_while(|byte| byte.is_ascii_digit())
            .count();
        let leading_zero = digits > 1 && self.bytes()[start] == b'0';
        if digits == 0 || digits > 18 || leading_zero {
            return Err(Unsure);
        }
        self.at += digits;
        if let Some(b'.' | b'e' | b'E') = self.bytes().get(self.at) {
            return Err(Unsure);
        }
        Ok(&self.text[start..self.at])
    }

    /// `true`, `false` or `null`.
    fn literal(&mut self) -> Fast<()> {
        let rest = &self.bytes()[self.at..];
        let length = [&b"true"[..], b"false", b"null"]
            .into_iter()
            .find(|literal| rest.starts_with(literal))
            .ok_or(Unsure)?
            .len();
        self.at += length;
        Ok(())
    }

    /// A string or number kept as text; other values read as absent.
    fn scalar(&mut self) -> Fast<Scalar<'a>> {
        match self.peek()? {
            b'"' => Ok(Scalar(Some(self.string()?))),
            b'0'..=b'9' => Ok(Scalar(Some(Cow::Owned(self.integer()?.to_owned())))),
            b't' | b'f' | b'n' => self.literal().map(|()| Scalar(None)),
            b'{' | b'[' => self.skip_value(1).map(|()| Scalar(None)),
            _ => Err(Unsure),
        }
    }

    /// `error` (or a Bedrock exception): an object, a bare message, or anything else
    /// (absent).
    fn error_field(&mut self) -> Fast<ErrorField<'a>> {
        match self.peek()? {
            b'"' => Ok(ErrorField::Text(self.string()?)),
            b'{' => {
                // Filled in its box: no copy of the struct.
                let mut error = Box::<WireError>::default();
                self.error_object(&mut error)?;
                Ok(ErrorField::Object(error))
            }
            b'0'..=b'9' => self.integer().map(|_| ErrorField::Absent),
            b't' | b'f' | b'n' => self.literal().map(|()| ErrorField::Absent),
            b'[' => self.skip_value(1).map(|()| ErrorField::Absent),
            _ => Err(Unsure),
        }
    }

    /// `null`, or a struct given as an object and read by `read`. serde reads a struct
    /// given as an array by position; that, and anything else, is left to it.
    fn optional_struct<T>(&mut self, read: impl FnOnce(&mut Self) -> Fast<T>) -> Fast<Option<T>> {
        match self.peek()? {
            b'n' => self.literal().map(|()| None),
            b'{' => read(self).map(Some),
            _ => Err(Unsure),
        }
    }

    /// An `error` object, read into `error` (which starts as the default).
    fn error_object(&mut self, error: &mut WireError<'a>) -> Fast<()> {
        let mut seen = Seen::default();
        self.object(|reader, key| {
            // Field names and aliases as `WireError` declares them.
            match key.as_ref() {
                "type" => {
                    seen.first(0)?;
                    error.kind = reader.scalar()?;
                }
                "code" => {
                    seen.first(1)?;
                    error.code = reader.scalar()?;
                }
                "message" | "Message" => {
                    seen.first(2)?;
                    error.message = reader.scalar()?;
                }
                "status" => {
                    seen.first(3)?;
                    error.status = reader.scalar()?;
                }
                "details" => {
                    seen.first(4)?;
                    error.details = reader.no_details()?;
                }
                "metadata" => {
                    seen.first(5)?;
                    error.metadata = reader.optional_struct(Self::metadata)?;
                }
                "innererror" => {
                    seen.first(6)?;
                    error.innererror = reader.optional_struct(|reader| {
                        let mut inner = WireInnerError::default();
                        let mut seen = Seen::default();
                        reader.object(|reader, key| {
                            match key.as_ref() {
                                "code" => {
                                    seen.first(0)?;
                                    inner.code = reader.scalar()?;
                                }
                                _ => reader.skip_value(3)?,
                            }
                            Ok(())
                        })?;
                        Ok(inner)
                    })?;
                }
                "resets_at" => {
                    seen.first(7)?;
                    error.resets_at = reader.scalar()?;
                }
                "resets_in_seconds" => {
                    seen.first(8)?;
                    error.resets_in_seconds = reader.scalar()?;
                }
                _ => reader.skip_value(2)?,
            }
            Ok(())
        })
    }

    /// `details` that hold nothing (`null`, a string, a number): Gemini's lists and
    /// Anthropic's object are left to serde.
    fn no_details(&mut self) -> Fast<Details<'a>> {
        match self.peek()? {
            b'"' | b'0'..=b'9' | b't' | b'f' | b'n' => {
                self.scalar()?;
                Ok(Details::default())
            }
            _ => Err(Unsure),
        }
    }

    /// OpenRouter's `error.metadata`.
    fn metadata(&mut self) -> Fast<WireMetadata<'a>> {
        let mut metadata = WireMetadata::default();
        let mut seen = Seen::default();
        self.object(|reader, key| {
            match key.as_ref() {
                "raw" => {
                    seen.first(0)?;
                    metadata.raw = reader.scalar()?;
                }
                "provider_name" => {
                    seen.first(1)?;
                    metadata.provider_name = reader.scalar()?;
                }
                _ => reader.skip_value(3)?,
            }
            Ok(())
        })?;
        Ok(metadata)
    }

    /// Skips one value, checking it as strictly as serde's reader would.
    fn skip_value(&mut self, depth: u8) -> Fast<()> {
        if depth > MAX_DEPTH {
            return Err(Unsure);
        }
        match self.peek()? {
            b'"' => self.string().map(|_| ()),
            b'0'..=b'9' => self.integer().map(|_| ()),
            b't' | b'f' | b'n' => self.literal(),
            b'{' => self.object(|reader, _| reader.skip_value(depth + 1)),
            b'[' => {
                self.at += 1;
                self.skip_whitespace();
                if self.peek()? == b']' {
                    self.at += 1;
                    return Ok(());
                }
                loop {
                    self.skip_whitespace();
                    self.skip_value(depth + 1)?;
                    self.skip_whitespace();
                    match self.peek()? {
                        b',' => self.at += 1,
                        b']' => {
                            self.at += 1;
                            return Ok(());
                        }
                        _ => return Err(Unsure),
                    }
                }
            }
            _ => Err(Unsure),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::parse_plain_body;

    /// What the serde reader makes of `text`, for comparison.
    fn by_serde(text: &str) -> String {
        format!("{:?}", super::super::serde_object(text))
    }

    /// Whenever the fast reader answers, its answer is serde's.
    fn agrees(text: &str) -> bool {
        let mut body = super::WireBody::default();
        match parse_plain_body(text, &mut body) {
            Ok(()) => {
                assert_eq!(format!("{:?}", Some(body)), by_serde(text), "{text}");
                true
            }
            Err(_) => false,
        }
    }

    /// Every JSON object in the fixtures' bodies and CLI outputs.
    fn fixture_objects() -> Vec<String> {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/providers");
        let mut objects = Vec::new();
        for family in std::fs::read_dir(root).unwrap() {
            for file in std::fs::read_dir(family.unwrap().path()).unwrap() {
                let text = std::fs::read_to_string(file.unwrap().path()).unwrap();
                let fixture: serde_json::Value = serde_json::from_str(&text).unwrap();
                for field in ["body", "output"] {
                    let text = match &fixture["evidence"][field] {
                        serde_json::Value::String(text) => text.clone(),
                        serde_json::Value::Null => continue,
                        other => other.to_string(),
                    };
                    for (start, _) in text.match_indices('{') {
                        objects.push(text[start..].to_owned());
                    }
                }
            }
        }
        objects
    }

    #[test]
    fn plain_fixture_bodies_are_read_fast_and_alike() {
        let objects = fixture_objects();
        let fast = objects.iter().filter(|text| agrees(text)).count();
        // Most fixture bodies are plain: the fast reader must take a good share of them.
        assert!(fast * 3 >= objects.len(), "{fast} of {}", objects.len());
    }

    /// Fixture bodies with random edits (JSON punctuation, escapes, digits, control
    /// characters, cuts): wherever the fast reader answers, serde answers the same.
    #[test]
    fn edited_bodies_agree_with_serde() {
        const PIECES: [&str; 36] = [
            "{",
            "}",
            "[",
            "]",
            "\"",
            "\\",
            ",",
            ":",
            " ",
            "\n",
            "\u{1}",
            "0",
            "7",
            "-",
            ".",
            "e",
            "true",
            "null",
            "fals",
            "\"type\":",
            "\"message\":\"m\",",
            "\"error\":",
            "\"code\":01,",
            "é",
            "\\n",
            "\\\"",
            "\\u00e9",
            "\\x",
            "\"details\":null,",
            "\"details\":[{}],",
            "\"metadata\":{\"raw\":\"r\"},",
            "\"response\":[1],",
            "\"innererror\":{\"code\":\"c\"},",
            "\"promptFeedback\":",
            "\"error\":[],",
            "\"throttlingException\":{",
        ];
        let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut random = |below: usize| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state % below as u64) as usize
        };
        let mut answered = 0;
        for object in fixture_objects() {
            for _ in 0..200 {
                let mut text = object.clone();
                for _ in 0..1 + random(3) {
                    let mut at = random(text.len() + 1);
                    while !text.is_char_boundary(at) {
                        at -= 1;
                    }
                    match random(3) {
                        0 => text.insert_str(at, PIECES[random(PIECES.len())]),
                        1 => {
                            let mut end = (at + 1 + random(4)).min(text.len());
                            while !text.is_char_boundary(end) {
                                end += 1;
                            }
                            text.replace_range(at..end, "");
                        }
                        _ => text.truncate(at.max(1)),
                    }
                }
                if text.starts_with('{') && agrees(&text) {
                    answered += 1;
                }
            }
        }
        assert!(answered > 5_000, "only {answered} edited bodies read fast");
    }

    #[test]
    fn special_bytes_are_found_first() {
        for (text, expected) in [
            ("", None),
            ("plain", None),
            ("plain text, longer than eight", None),
            ("ab\"", Some(2)),
            ("abcdefgh\\", Some(8)),
            ("abcdefghij\u{1f}\"", Some(10)),
            ("é\u{7f}x\"", Some(4)),
        ] {
            assert_eq!(super::special_byte(text.as_bytes()), expected, "{text:?}");
        }
    }

    #[test]
    fn edge_cases_agree_with_serde() {
        let cases = [
            r#"{}"#,
            r#"{} trailing"#,
            r#"{"type":"error","type":"again"}"#,
            r#"{"message":"a","Message":"b"}"#,
            r#"{"error":{"message":"a","Message":"b"}}"#,
            r#"{"code":429,"x":[1,2,{"y":null}],"z":true}"#,
            r#"{"code":0}"#,
            r#"{"code":00}"#,
            r#"{"code":-0}"#,
            r#"{"code":1.5}"#,
            r#"{"code":1e3}"#,
            r#"{"code":12345678901234567890}"#,
            r#"{"code":"x",}"#,
            r#"{,"code":"x"}"#,
            r#"{"code" : "x" , "error" : "y" }"#,
            r#"{"error":null,"message":false}"#,
            r#"{"error":[1],"message":"m"}"#,
            r#"{"error":{"details":[]}}"#,
            "{\"message\":\"a\u{1}b\"}",
            r#"{"message":"a\"b"}"#,
            r#"{"message":"a","x":"\u00e9"}"#,
            r#"{"message":{"nested":{"deeper":[[[]]]}}}"#,
            r#"{"message":"m","x":[1,]}"#,
            r#"{"message":"m","x":tru}"#,
            r#"{"message":"m","x":nulls}"#,
            r#"{"message":"m"  "#,
            r#"{"resets_at":1796022000,"resets_in_seconds":"20"}"#,
            r#"{"message":"a\nb\"c\\d\/e\tf"}"#,
            r#"{"message":"a\u00e9"}"#,
            r#"{"message":"a\q"}"#,
            r#"{"mess\u0061ge":"m"}"#,
            r#"{"mess\nage":"m"}"#,
            r#"{"error":{"details":null,"type":"overloaded_error"}}"#,
            r#"{"error":{"details":"x","details":"y"}}"#,
            r#"{"error":{"metadata":{"raw":"{\"a\":1}","provider_name":"P"}}}"#,
            r#"{"error":{"metadata":["raw"]}}"#,
            r#"{"error":{"metadata":"raw"}}"#,
            r#"{"error":{"innererror":null,"code":"c"}}"#,
            r#"{"response":{"error":{"code":"x"}},"type":"response.failed"}"#,
            r#"{"response":null}"#,
            r#"{"response":[{"code":"x"}]}"#,
            r#"{"promptFeedback":{"blockReason":"SAFETY","blockReason":"X"}}"#,
            r#"{"throttlingException":{"message":"slow"},"validationException":"v"}"#,
            r#"{"error":[{"x":1}],"message":"m"}"#,
        ];
        for case in cases {
            agrees(case);
        }
        let deep = format!("{{\"x\":{}{}}}", "[".repeat(40), "]".repeat(40));
        agrees(&deep);
    }
}
