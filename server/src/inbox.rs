//! The catalogue's inbox (the failures it was unsure of, grouped by provider and
//! message, each ready to become a fixture) and the reclassification of stored
//! evidence by the current catalogue. Both only read.

use std::collections::HashMap;

use api::{InboxGroup, InboxView, Reclassified, ReclassifyView, Timestamp, VerdictView};
use serde_json::{Value, json};

use crate::domain::{Attempt, Verdict};
use crate::store::{Store, StoreError};

/// The most unsure attempts the inbox reads, the latest first.
pub const INBOX_ATTEMPTS: u32 = 2_000;

/// The most attempts a reclassification reads by default, the latest first.
pub const RECLASSIFY_ATTEMPTS: u32 = 10_000;

/// The most task ids a group lists.
const GROUP_TASKS: usize = 10;

/// The inbox: the latest attempts the catalogue was unsure of (`unknown`, or
/// `low` or `medium` confidence), grouped by provider and message.
pub async fn inbox(store: &dyn Store) -> Result<InboxView, StoreError> {
    let attempts = store.attempts_with_evidence(true, INBOX_ATTEMPTS).await?;
    let names = provider_names(store).await?;
    let mut groups: Vec<InboxGroup> = Vec::new();
    let mut index: HashMap<(String, String), usize> = HashMap::new();
    for attempt in &attempts {
        let Some((verdict, evidence, finished_at)) = ended(attempt) else {
            continue;
        };
        let key = message_key(&verdict.safe_cause);
        let slot = (attempt.provider_id.to_string(), key.clone());
        match index.get(&slot) {
            Some(&at) => {
                // The latest came first: later ones only count, and add their task.
                let group = &mut groups[at];
                group.count += 1;
                if group.task_ids.len() < GROUP_TASKS && !group.task_ids.contains(&attempt.task_id)
                {
                    group.task_ids.push(attempt.task_id.clone());
                }
            }
            None => {
                index.insert(slot, groups.len());
                groups.push(InboxGroup {
                    provider_id: attempt.provider_id.clone(),
                    provider: names
                        .get(attempt.provider_id.as_str())
                        .cloned()
                        .unwrap_or_else(|| attempt.provider_id.to_string()),
                    family: evidence["provider"].as_str().unwrap_or("other").to_owned(),
                    message: verdict.safe_cause.clone(),
                    key,
                    count: 1,
                    verdict: verdict_view(verdict),
                    last_seen: finished_at,
                    task_ids: vec![attempt.task_id.clone()],
                    fixture: fixture(evidence),
                });
            }
        }
    }
    // The most frequent first; among equals, the latest.
    groups.sort_by(|a, b| {
        b.count
            .cmp(&a.count)
            .then(b.last_seen.as_millis().cmp(&a.last_seen.as_millis()))
    });
    Ok(InboxView {
        groups,
        attempts_read: u32::try_from(attempts.len()).unwrap_or(u32::MAX),
    })
}

/// The latest `limit` attempts with evidence, read again by the current catalogue
/// (at the time each finished): those it reads differently now.
pub async fn reclassify(store: &dyn Store, limit: u32) -> Result<ReclassifyView, StoreError> {
    let attempts = store.attempts_with_evidence(false, limit).await?;
    let mut changes = Vec::new();
    for attempt in &attempts {
        let Some((verdict, evidence, finished_at)) = ended(attempt) else {
            continue;
        };
        let Ok(evidence) = catalogue::Evidence::from_json_value(evidence) else {
            continue;
        };
        let now = catalogue::classify(&evidence, finished_at.as_millis());
        let after = VerdictView {
            code: now.classification.code,
            class: now.classification.class,
            confidence: now.classification.confidence,
            rule: now.rule.to_owned(),
            catalogue: now.catalogue.to_owned(),
        };
        let before = verdict_view(verdict);
        if (before.code, before.confidence, before.rule.as_str())
            != (after.code, after.confidence, after.rule.as_str())
        {
            changes.push(Reclassified {
                attempt_id: attempt.id.clone(),
                task_id: attempt.task_id.clone(),
                provider_id: attempt.provider_id.clone(),
                before,
                after,
            });
        }
    }
    Ok(ReclassifyView {
        catalogue: catalogue::CATALOGUE_VERSION.to_owned(),
        checked: u32::try_from(attempts.len()).unwrap_or(u32::MAX),
        changes,
    })
}

/// A finished attempt's verdict, evidence and end.
fn ended(attempt: &Attempt) -> Option<(&Verdict, &Value, Timestamp)> {
    let end = attempt.end.as_ref()?;
    Some((
        end.verdict.as_ref()?,
        end.evidence.as_ref()?,
        end.finished_at,
    ))
}

fn verdict_view(verdict: &Verdict) -> VerdictView {
    VerdictView {
        code: verdict.code,
        class: verdict.class,
        confidence: verdict.confidence,
        rule: verdict.rule.clone(),
        catalogue: verdict.catalogue.clone(),
    }
}

async fn provider_names(store: &dyn Store) -> Result<HashMap<String, String>, StoreError> {
    Ok(store
        .list_providers()
        .await?
        .into_iter()
        .map(|provider| (provider.id.to_string(), provider.name))
        .collect())
}

/// A message as the inbox groups it: lowercase, white space collapsed, every run
/// of digits and every word holding a digit (ids, amounts, times) as `#`, at most
/// 160 characters.
///
/// ```
/// assert_eq!(
///     server::inbox::message_key("Request req_8f3a2 failed: limit 1500000,  used 1526210"),
///     "request # failed: limit # used #"
/// );
/// ```
pub fn message_key(message: &str) -> String {
    let mut words: Vec<String> = Vec::new();
    for word in message.split_whitespace() {
        let trimmed = word.trim_matches(|c: char| !c.is_alphanumeric());
        if trimmed.chars().any(|c| c.is_ascii_digit()) {
            if words.last().is_none_or(|last| last != "#") {
                words.push("#".to_owned());
            }
        } else {
            words.push(word.to_lowercase());
        }
    }
    words.join(" ").chars().take(160).collect()
}

/// Headers a fixture never carries: they hold credentials, never a failure's
/// meaning.
const CREDENTIAL_HEADERS: [&str; 5] = [
    "authorization",
    "proxy-authorization",
    "cookie",
    "set-cookie",
    "x-api-key",
];

/// A fixture file for the catalogue's tests from stored evidence: its texts and
/// header values with every secret the catalogue recognises removed, headers that
/// carry credentials left out, `source` and the expected verdict left for a person
/// to fill in.
fn fixture(evidence: &Value) -> Value {
    let mut evidence = evidence.clone();
    if let Some(fields) = evidence.as_object_mut() {
        for field in ["body", "output"] {
            if let Some(Value::String(text)) = fields.get_mut(field) {
                *text = catalogue::redact_secrets(text);
            }
        }
        if let Some(Value::Object(headers)) = fields.get_mut("headers") {
            headers.retain(|name, _| {
                !CREDENTIAL_HEADERS.contains(&name.to_ascii_lowercase().as_str())
            });
            for value in headers.values_mut() {
                if let Value::String(text) = value {
                    *text = catalogue::redact_secrets(text);
                }
            }
        }
    }
    json!({
        "source": "",
        "evidence": evidence,
        "expected": {"code": "", "class": ""},
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    #[test]
    fn a_fixture_carries_no_secret_and_no_credential_header() {
        let key = "sk-proj-abcdefghijklmnopqrstuvwxyz012345";
        let stored = json!({
            "provider": "other", "status": 401,
            "headers": {"Set-Cookie": "session=abc", "x-request-id": format!("req {key}"), "retry-after": "20"},
            "body": format!("{{\"error\": \"Incorrect API key provided: {key}\"}}"),
            "output": format!("curl -H 'Authorization: Bearer {key}'"),
            "observed_at": "2026-11-30T02:00:00Z",
        });
        let fixture = super::fixture(&stored);
        assert!(!fixture.to_string().contains(key), "{fixture}");
        assert!(
            !fixture.to_string().to_lowercase().contains("session=abc"),
            "{fixture}"
        );
        assert_eq!(fixture["evidence"]["headers"]["retry-after"], "20");
        assert_eq!(fixture["evidence"]["observed_at"], "2026-11-30T02:00:00Z");
        assert_eq!(fixture["source"], "");
    }
}
