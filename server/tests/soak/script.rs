//! What each task's provider does, by the task's index (its prompt is
//! `soak task N`), and what that implies for the task's route: the attempts it
//! records and the state it ends in. Every script runs on one profile of two
//! candidates whose policy makes each outcome certain: transient failures are
//! retried twice (100 ms, then 200 ms) and then stop the route, a hard failure
//! skips to the next candidate, and no answer carries a reset still ahead, so no
//! circuit ever opens and no task waits on another's failures.

use std::collections::HashMap;

use serde_json::{Value, json};

/// The first candidate's model.
pub const FIRST_MODEL: &str = "soak-first";
/// The second candidate's model.
pub const SECOND_MODEL: &str = "soak-second";

/// The one policy both candidates carry.
pub fn policy() -> Value {
    json!({"version": 2,
        "transient": {"retry": {"enabled": true, "max_retries": 2, "initial_interval_ms": 100},
                      "reset_wait": {"enabled": true, "max_wait_s": 60}, "on_exhausted": "stop"},
        "hard": {"retry": {"enabled": false, "max_retries": 1, "initial_interval_ms": 100},
                 "reset_wait": {"enabled": false, "max_wait_s": 60}, "on_exhausted": "skip"}})
}

/// The prompt of the task with this index.
pub fn prompt(index: usize) -> String {
    format!("soak task {index}")
}

/// The index in a prompt made by [`prompt`].
pub fn index_of(prompt: &str) -> Option<usize> {
    prompt.strip_prefix("soak task ")?.parse().ok()
}

/// What the provider answers one request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reply {
    /// A complete streamed answer, "Hello".
    Answer,
    /// 429 with `retry-after: 0`: throttled, nothing to wait for.
    Throttled,
    /// 529: overloaded.
    Overloaded,
    /// 500: the provider failed.
    ServerError,
    /// 401: the key is refused (hard).
    Unauthorized,
    /// 200 and part of an answer, then the body ends without a finish: output was
    /// streamed before the failure, so the attempt is unsafe to repeat.
    BrokenStream,
    /// 400: the request itself is refused (outside).
    InvalidRequest,
}

impl Reply {
    /// The attempt's outcome, and the semantic code the catalogue gives it.
    fn recorded(self) -> (&'static str, Option<&'static str>) {
        match self {
            Self::Answer => ("answered", None),
            Self::Throttled => ("failed", Some("rate_limited")),
            Self::Overloaded => ("failed", Some("overloaded")),
            Self::ServerError => ("failed", Some("server_error")),
            Self::Unauthorized => ("failed", Some("auth_failed")),
            Self::BrokenStream => ("failed", Some("network")),
            Self::InvalidRequest => ("failed", Some("invalid_request")),
        }
    }
}

/// One request of a script: the model it is sent to, and the answer it gets.
#[derive(Debug, Clone, Copy)]
pub struct Step {
    /// The candidate's model.
    pub model: &'static str,
    /// What the provider answers.
    pub reply: Reply,
}

/// Where a script leaves its route.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum End {
    /// Completed by the candidate at this index.
    Completed(u64),
    /// Held for a person, with this cause.
    Held(&'static str),
    /// Stopped, with this cause.
    Stopped(&'static str),
}

/// A task's script: its requests in order, and where they leave the route.
#[derive(Debug)]
pub struct Script {
    /// What it is, in words (the run's summary counts by it).
    pub name: &'static str,
    /// The requests, in the order the route sends them.
    pub steps: &'static [Step],
    /// The route's end.
    pub end: End,
}

const fn first(reply: Reply) -> Step {
    Step {
        model: FIRST_MODEL,
        reply,
    }
}

const fn second(reply: Reply) -> Step {
    Step {
        model: SECOND_MODEL,
        reply,
    }
}

/// Every script; the task with index N runs `SCRIPTS[N % SCRIPTS.len()]`.
pub const SCRIPTS: [Script; 8] = [
    Script {
        name: "answered at once",
        steps: &[first(Reply::Answer)],
        end: End::Completed(0),
    },
    Script {
        name: "throttled with retry-after 0, then answered",
        steps: &[first(Reply::Throttled), first(Reply::Answer)],
        end: End::Completed(0),
    },
    Script {
        name: "overloaded, then answered",
        steps: &[first(Reply::Overloaded), first(Reply::Answer)],
        end: End::Completed(0),
    },
    Script {
        name: "two server errors, then answered",
        steps: &[
            first(Reply::ServerError),
            first(Reply::ServerError),
            first(Reply::Answer),
        ],
        end: End::Completed(0),
    },
    Script {
        name: "refused key on the first candidate, answered by the second",
        steps: &[first(Reply::Unauthorized), second(Reply::Answer)],
        end: End::Completed(1),
    },
    Script {
        name: "stream broken after some output",
        steps: &[first(Reply::BrokenStream)],
        end: End::Held("unsafe_effect"),
    },
    Script {
        name: "server errors past the retries",
        steps: &[
            first(Reply::ServerError),
            first(Reply::ServerError),
            first(Reply::ServerError),
        ],
        end: End::Stopped("exhausted"),
    },
    Script {
        name: "invalid request",
        steps: &[first(Reply::InvalidRequest)],
        end: End::Stopped("unrecoverable"),
    },
];

/// The script of the task with this index.
pub fn script_of(index: usize) -> &'static Script {
    &SCRIPTS[index % SCRIPTS.len()]
}

/// How a task ended, as the checks found it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Ending {
    /// As its script says.
    AsScripted,
    /// Held as interrupted: a kill caught an attempt started and not finished
    /// (sent or not), and the restart left it to a person rather than send it
    /// again. The attempt is the `n`th of the script (from 1).
    Interrupted(usize),
}

impl Script {
    /// What the provider answers the `nth` request (from 1) for `model`; `None`
    /// when the script has no such request, so it would be a request sent twice.
    pub fn reply(&self, model: &str, nth: usize) -> Option<Reply> {
        self.steps
            .iter()
            .filter(|step| step.model == model)
            .nth(nth.checked_sub(1)?)
            .map(|step| step.reply)
    }

    /// Check `task` (the API's view) against the script, and `requests` (what the
    /// provider received for this task, by model) against the attempts the task
    /// recorded: each finished attempt was one request, and an interrupted one
    /// at most one. Answers how it ended, or what is wrong.
    pub fn check(&self, task: &Value, requests: &HashMap<String, usize>) -> Result<Ending, String> {
        let attempts = task["attempts"]
            .as_array()
            .ok_or("the task has no attempts list")?;
        let route = &task["route"];
        let interrupted = route["state"] == "held" && route["cause"] == "interrupted";
        let finished = if interrupted {
            attempts
                .len()
                .checked_sub(1)
                .ok_or("interrupted with no attempt")?
        } else {
            attempts.len()
        };
        if attempts.len() > self.steps.len() || (!interrupted && attempts.len() != self.steps.len())
        {
            return Err(format!(
                "{} attempts where the script has {}",
                attempts.len(),
                self.steps.len()
            ));
        }
        for (position, (attempt, step)) in attempts.iter().zip(self.steps).enumerate() {
            let (outcome, code) = if position < finished {
                step.reply.recorded()
            } else {
                ("interrupted", None)
            };
            if attempt["model"] != step.model || attempt["outcome"] != outcome {
                return Err(format!(
                    "attempt {} is {} on {}, where the script has {outcome} on {}",
                    position + 1,
                    attempt["outcome"],
                    attempt["model"],
                    step.model
                ));
            }
            if let Some(code) = code
                && attempt["code"] != code
            {
                return Err(format!(
                    "attempt {} has code {}, where the script has {code}",
                    position + 1,
                    attempt["code"]
                ));
            }
            if attempt["finished_at"].is_null() {
                return Err(format!("attempt {} never finished", position + 1));
            }
        }
        // Each finished attempt is exactly one request; an interrupted one may or
        // may not have been sent before the kill, and nothing after it was.
        for model in [FIRST_MODEL, SECOND_MODEL] {
            let recorded = attempts[..finished]
                .iter()
                .filter(|attempt| attempt["model"] == model)
                .count();
            let in_doubt = attempts[finished..]
                .iter()
                .filter(|attempt| attempt["model"] == model)
                .count();
            let received = requests.get(model).copied().unwrap_or(0);
            if received < recorded || received > recorded + in_doubt {
                return Err(format!(
                    "{received} requests to {model} for {recorded} finished attempts and {in_doubt} interrupted"
                ));
            }
        }
        if interrupted {
            return Ok(Ending::Interrupted(attempts.len()));
        }
        let (state, cause) = match self.end {
            End::Completed(candidate_index) => {
                let turn = &task["turns"][0];
                if turn["answer"] != "Hello" || turn["candidate_index"] != candidate_index {
                    return Err(format!("the turn is {turn}"));
                }
                if route["candidate_index"] != candidate_index {
                    return Err(format!(
                        "the route is on candidate {}",
                        route["candidate_index"]
                    ));
                }
                ("completed", Value::Null)
            }
            End::Held(cause) => ("held", json!(cause)),
            End::Stopped(cause) => ("stopped", json!(cause)),
        };
        if route["state"] != state || route["cause"] != cause {
            return Err(format!(
                "the route is {} ({}), where the script ends {state} ({cause})",
                route["state"], route["cause"]
            ));
        }
        if !route["deadline"].is_null() {
            return Err(format!(
                "the route at rest has a deadline {}",
                route["deadline"]
            ));
        }
        Ok(Ending::AsScripted)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A task's view with these attempts (model, outcome, code) and this route.
    fn view(state: &str, cause: Option<&str>, attempts: &[(&str, &str, Option<&str>)]) -> Value {
        let attempts: Vec<Value> = attempts
            .iter()
            .map(|(model, outcome, code)| {
                json!({"model": model, "outcome": outcome, "code": code,
                       "finished_at": "2026-12-01T00:00:00Z"})
            })
            .collect();
        json!({"route": {"state": state, "cause": cause, "candidate_index": 0, "deadline": null},
               "attempts": attempts,
               "turns": [{"answer": "Hello", "candidate_index": 0}]})
    }

    fn requests(first: usize) -> HashMap<String, usize> {
        HashMap::from([(FIRST_MODEL.to_owned(), first)])
    }

    /// The checks the soak relies on can fail: a resend, an attempt recorded and
    /// never received, a request after an interrupted attempt, a wrong end and a
    /// request beyond the script are each refused.
    #[test]
    fn the_checks_refuse_a_resend_a_lost_request_and_a_wrong_end() {
        let script = &SCRIPTS[3];
        assert_eq!(script.name, "two server errors, then answered");
        let failed = (FIRST_MODEL, "failed", Some("server_error"));
        let answered = (FIRST_MODEL, "answered", None);
        let interrupted = (FIRST_MODEL, "interrupted", None);
        let completed = view("completed", None, &[failed, failed, answered]);
        let held = view("held", Some("interrupted"), &[failed, interrupted]);
        // (the task, the requests the provider received, the check's verdict)
        let table: [(&Value, usize, Result<Ending, ()>); 8] = [
            (&completed, 3, Ok(Ending::AsScripted)),
            (&completed, 4, Err(())),
            (&completed, 2, Err(())),
            (&held, 1, Ok(Ending::Interrupted(2))),
            (&held, 2, Ok(Ending::Interrupted(2))),
            (&held, 3, Err(())),
            (
                &view("stopped", Some("exhausted"), &[failed, failed, answered]),
                3,
                Err(()),
            ),
            (&view("completed", None, &[failed, answered]), 2, Err(())),
        ];
        for (row, (task, received, expected)) in table.into_iter().enumerate() {
            let verdict = script.check(task, &requests(received)).map_err(|_| ());
            assert_eq!(
                verdict, expected,
                "row {row}: {task} with {received} requests"
            );
        }
        assert_eq!(script.reply(FIRST_MODEL, 3), Some(Reply::Answer));
        assert_eq!(script.reply(FIRST_MODEL, 4), None);
        assert_eq!(script.reply(SECOND_MODEL, 1), None);
        assert_eq!(SCRIPTS[4].reply(SECOND_MODEL, 1), Some(Reply::Answer));
    }
}
