//! How every server function's answer and refusal travel: JSON, read in the
//! browser from text. Leptos's own `Json` reads an answer from bytes
//! (`serde_json::from_slice`) while a resource the server rendered is read from
//! text (`from_str`); each reader compiles its own copy of every type's
//! deserializer into the wasm. One reader for both keeps one copy.

use serde::Serialize;
use serde::de::DeserializeOwned;
use server_fn::codec::Post;
use server_fn::{Bytes, ContentType, Decodes, Encodes, Format, FormatType};

/// JSON, written as bytes and read as text.
pub struct JsonText;

impl ContentType for JsonText {
    const CONTENT_TYPE: &'static str = "application/json";
}

impl FormatType for JsonText {
    const FORMAT_TYPE: Format = Format::Text;
}

impl<T: Serialize> Encodes<T> for JsonText {
    type Error = serde_json::Error;

    fn encode(output: &T) -> Result<Bytes, Self::Error> {
        serde_json::to_vec(output).map(Bytes::from)
    }
}

impl<T: DeserializeOwned> Decodes<T> for JsonText {
    type Error = serde_json::Error;

    fn decode(bytes: Bytes) -> Result<T, Self::Error> {
        // Invalid UTF-8 is a JSON syntax error either way; read as text, it
        // shares the deserializers the hydrated resources use.
        let text = std::str::from_utf8(&bytes).map_err(|_| {
            <serde_json::Error as serde::de::Error>::custom("the answer is not UTF-8")
        })?;
        serde_json::from_str(text)
    }
}

/// The answer encoding of every server function (`output = JsonAnswer`).
pub type JsonAnswer = Post<JsonText>;
