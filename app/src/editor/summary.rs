//! Policies in words: one line per candidate for the profiles list, and the
//! schedule sentence of each section for the editor.

use policy::{OnExhausted, PolicyDocument, PolicySection, describe_schedule, format_duration_ms};

/// A section in a few words: "retry 2× from 0.5 s, wait for reset up to 1 min, then skip";
/// jitter, when set, follows the first interval ("retry 2× from 0.5 s ±20%").
///
/// ```
/// let summary = app::editor::section_summary(&policy::PolicySection::transient_default());
/// assert_eq!(summary, "retry 2× from 0.5 s, wait for reset up to 1 min, then skip");
/// ```
pub fn section_summary(section: &PolicySection) -> String {
    let mut parts = Vec::new();
    if section.retry.enabled {
        let jitter = match section.retry.jitter_pct {
            0 => String::new(),
            jitter_pct => format!(" ±{jitter_pct}%"),
        };
        parts.push(format!(
            "retry {}× from {}{jitter}",
            section.retry.max_retries,
            format_duration_ms(section.retry.initial_interval_ms)
        ));
    }
    if section.reset_wait.enabled {
        parts.push(format!(
            "wait for reset up to {}",
            format_duration_ms(section.reset_wait.max_wait_ms())
        ));
    }
    let after = match section.on_exhausted {
        OnExhausted::Skip => "skip",
        OnExhausted::Stop => "stop",
    };
    if parts.is_empty() {
        return after.to_owned();
    }
    format!("{}, then {after}", parts.join(", "))
}

/// A whole policy in one line: "transient: ...; hard: ...".
pub fn policy_summary(policy: &PolicyDocument) -> String {
    format!(
        "transient: {}; hard: {}",
        section_summary(&policy.transient),
        section_summary(&policy.hard)
    )
}

/// The editor's sentence for a section: the retries, then what follows; a
/// reset wait, when on, comes first.
pub fn schedule_sentence(section: &PolicySection, next_candidate: Option<&str>) -> String {
    let schedule = describe_schedule(section, next_candidate);
    if section.reset_wait.enabled {
        format!(
            "Waits for the provider's reset when it is at most {} away, once per episode; otherwise {schedule}.",
            format_duration_ms(section.reset_wait.max_wait_ms())
        )
    } else {
        format!("{}.", capitalize(&schedule))
    }
}

/// The schedule always opens with one of the policy crate's own words, so
/// ASCII is enough (and keeps Unicode's case tables out of the wasm).
fn capitalize(text: &str) -> String {
    let mut text = text.to_owned();
    if let Some(first) = text.get_mut(..1) {
        first.make_ascii_uppercase();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summaries() {
        let policy = PolicyDocument::default();
        assert_eq!(
            policy_summary(&policy),
            "transient: retry 2× from 0.5 s, wait for reset up to 1 min, then skip; hard: skip"
        );
        let mut section = PolicySection::hard_default();
        section.on_exhausted = OnExhausted::Stop;
        assert_eq!(section_summary(&section), "stop");
        let mut section = PolicySection::transient_default();
        section.retry.jitter_pct = 20;
        assert_eq!(
            section_summary(&section),
            "retry 2× from 0.5 s ±20%, wait for reset up to 1 min, then skip"
        );
    }

    #[test]
    fn sentences() {
        let mut section = PolicySection::transient_default();
        section.reset_wait.enabled = false;
        assert_eq!(
            schedule_sentence(&section, Some("model-beta")),
            "Retry 1 after 0.5 s, retry 2 after 1 s; gives up after 1.5 s, then skips to model-beta."
        );
        section.retry.jitter_pct = 50;
        assert_eq!(
            schedule_sentence(&section, Some("model-beta")),
            "Retry 1 after 0.25–0.75 s, retry 2 after 0.5–1.5 s; gives up after 0.75–2.25 s, then skips to model-beta."
        );
        section.retry.enabled = false;
        section.on_exhausted = OnExhausted::Stop;
        assert_eq!(schedule_sentence(&section, None), "No retries; then stops.");
        section.retry.enabled = true;
        section.reset_wait.enabled = true;
        assert!(
            schedule_sentence(&section, None)
                .starts_with("Waits for the provider's reset when it is at most 1 min away")
        );
    }
}
