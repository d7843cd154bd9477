//! `switchback classify`'s stream semantics (SPEC 2.5): one output line per input
//! line, in order; a bad line gets `{"error": "..."}` and the rest go on.

use std::io::{BufRead, Write};

use crate::catalogue::Catalogue;
use crate::evidence::Evidence;

/// How many lines [`classify_lines`] classified and how many were input errors.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct LineCounts {
    /// Lines that gave a classification.
    pub classified: usize,
    /// Lines that gave `{"error": ...}`.
    pub errors: usize,
}

/// Why the stream stopped: only reading the input or writing the output can fail.
#[derive(Debug, thiserror::Error)]
pub enum ClassifyLinesError {
    /// The input could not be read (the CLI exits non-zero).
    #[error("could not read evidence: {0}")]
    Read(#[source] std::io::Error),
    /// The output could not be written.
    #[error("could not write classifications: {0}")]
    Write(#[source] std::io::Error),
}

/// Reads evidence JSON lines from `reader` and writes one JSON line per input line to
/// `writer`, in order: the classification, or `{"error": "..."}` for a line that is not
/// valid evidence (including a blank line or invalid UTF-8). `now_ms` is asked once per
/// line and stands in for a missing `observed_at`.
///
/// ```
/// let input = "{\"provider\": \"openai\", \"transport\": \"timeout\"}\nnot json\n";
/// let mut output = Vec::new();
/// let counts = catalogue::classify_lines(input.as_bytes(), &mut output, || 0).unwrap();
/// assert_eq!((counts.classified, counts.errors), (1, 1));
/// let lines: Vec<serde_json::Value> = String::from_utf8(output).unwrap()
///     .lines().map(|line| serde_json::from_str(line).unwrap()).collect();
/// assert_eq!(lines[0]["code"], "timeout");
/// assert!(lines[1]["error"].as_str().unwrap().starts_with("not JSON"));
/// ```
pub fn classify_lines<R: BufRead, W: Write>(
    mut reader: R,
    mut writer: W,
    mut now_ms: impl FnMut() -> i64,
) -> Result<LineCounts, ClassifyLinesError> {
    let catalogue = Catalogue::shared();
    let mut counts = LineCounts::default();
    let mut line = Vec::new();
    loop {
        line.clear();
        let read = reader
            .read_until(b'\n', &mut line)
            .map_err(ClassifyLinesError::Read)?;
        if read == 0 {
            break;
        }
        let text = std::str::from_utf8(&line)
            .map(|text| text.trim_end_matches(['\n', '\r']))
            .map_err(|_| "evidence must be UTF-8 text".to_owned());
        let result =
            text.and_then(|text| Evidence::from_json_line(text).map_err(|error| error.to_string()));
        let json = match result {
            Ok(evidence) => {
                counts.classified += 1;
                serde_json::to_string(&catalogue.classify(&evidence, now_ms()))
            }
            Err(message) => {
                counts.errors += 1;
                serde_json::to_string(&serde_json::json!({ "error": message }))
            }
        }
        .expect("classifications always serialize");
        writeln!(writer, "{json}").map_err(ClassifyLinesError::Write)?;
    }
    writer.flush().map_err(ClassifyLinesError::Write)?;
    Ok(counts)
}

#[cfg(test)]
mod tests {
    use super::classify_lines;

    #[test]
    fn one_line_out_per_line_in_and_bad_lines_do_not_stop_the_rest() {
        let input = b"{\"provider\":\"openai\",\"status\":503}\n\n[1]\n\xff\xfe\n{\"provider\":\"x\",\"status\":418}\r\n{\"provider\":\"openai\",\"status\":401}";
        let mut output = Vec::new();
        let counts = classify_lines(&input[..], &mut output, || 0).unwrap();
        let text = String::from_utf8(output).unwrap();
        let lines: Vec<serde_json::Value> = text
            .lines()
            .map(|line| serde_json::from_str(line).unwrap())
            .collect();
        let summary: Vec<String> = lines
            .iter()
            .map(|line| match line.get("code") {
                Some(code) => code.as_str().unwrap().to_owned(),
                None => "error".to_owned(),
            })
            .collect();
        assert_eq!(
            summary,
            [
                "overloaded",
                "error",
                "error",
                "error",
                "unknown",
                "auth_failed"
            ]
        );
        assert_eq!((counts.classified, counts.errors), (3, 3));
    }
}
