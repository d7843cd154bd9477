//! A route in words: what the task list and the route view say, the same on
//! the server and in the browser. Pure, so it is tested here.

use api::{AttemptView, RouteView, TaskCandidateView, Timestamp};
use policy::OnExhausted;
use policy::route::{ManualAction, RouteState};

/// The state as a badge says it.
pub fn state_label(state: RouteState) -> &'static str {
    match state {
        RouteState::Queued => "Queued",
        RouteState::Running => "Running",
        RouteState::RetryWait => "Waiting to retry",
        RouteState::WaitingForReset => "Waiting for reset",
        RouteState::Retrying => "Retrying",
        RouteState::Held => "Held for a person",
        RouteState::Completed => "Completed",
        RouteState::Stopped => "Stopped",
    }
}

/// What an action's button says (the accessible names of SPEC 6).
pub fn action_label(action: ManualAction) -> &'static str {
    match action {
        ManualAction::RetryNow => "Retry now",
        ManualAction::SkipNow => "Skip now",
        ManualAction::CancelWait => "Cancel wait",
        ManualAction::Stop => "Stop",
    }
}

/// `Candidate N: MODEL`, N from 1.
pub fn candidate_label(index: u32, model: &str) -> String {
    format!("Candidate {}: {model}", index + 1)
}

/// The next enabled candidate after `index`, labelled.
pub fn next_candidate(candidates: &[TaskCandidateView], index: u32) -> Option<String> {
    candidates
        .iter()
        .enumerate()
        .skip(index as usize + 1)
        .find(|(_, candidate)| candidate.enabled)
        .map(|(position, candidate)| candidate_label(position as u32, &candidate.model))
}

/// What an action will do, said beside its button.
pub fn action_hint(
    action: ManualAction,
    route: &RouteView,
    candidates: &[TaskCandidateView],
) -> String {
    let current = candidate_label(route.candidate_index, &route.model);
    match action {
        ManualAction::RetryNow => format!("Sends to {current} now."),
        ManualAction::SkipNow => match next_candidate(candidates, route.candidate_index) {
            Some(next) => format!("Moves to {next}."),
            None => "No enabled candidate is left: the route stops.".to_owned(),
        },
        ManualAction::CancelWait => "Cancels the wait and holds the route for a person.".to_owned(),
        ManualAction::Stop => "Ends the route; a call in flight is cancelled.".to_owned(),
    }
}

/// "retry 2 of 3", when a retry is pending or dispatching.
pub fn retry_line(route: &RouteView) -> Option<String> {
    let ordinal = route.retry_ordinal?;
    Some(match route.max_retries {
        Some(max) => format!("retry {ordinal} of {max}"),
        None => format!("retry {ordinal}"),
    })
}

/// What happens when the policy is exhausted: "then: skip to MODEL" or "then: stop".
pub fn then_line(route: &RouteView, candidates: &[TaskCandidateView]) -> Option<String> {
    // A held route waits for a person, and an ended one for nothing.
    if matches!(
        route.state,
        RouteState::Held | RouteState::Completed | RouteState::Stopped
    ) {
        return None;
    }
    match route.pending_outcome? {
        OnExhausted::Skip => Some(match next_candidate(candidates, route.candidate_index) {
            Some(next) => format!("then: skip to {next}"),
            None => "then: stop (no candidate left to skip to)".to_owned(),
        }),
        OnExhausted::Stop => Some("then: stop".to_owned()),
    }
}

/// How far `at` is from `now`: "in 3 min 12 s", "2 min ago", "now". Never a
/// negative number.
pub fn relative(at: Timestamp, now: Timestamp) -> String {
    let delta_ms = at.as_millis() - now.as_millis();
    if delta_ms.abs() < 1_000 {
        return "now".to_owned();
    }
    let span = span(delta_ms.unsigned_abs().div_ceil(1_000));
    if delta_ms > 0 {
        format!("in {span}")
    } else {
        format!("{span} ago")
    }
}

/// A countdown to `deadline`: "in 3 min 12 s", or "due now" once it passed.
pub fn countdown(deadline: Timestamp, now: Timestamp) -> String {
    if deadline.as_millis() <= now.as_millis() {
        "due now".to_owned()
    } else {
        relative(deadline, now)
    }
}

/// A countdown as a screen reader hears it: whole minutes, so it changes (and is
/// announced) once a minute, not every second.
pub fn countdown_spoken(deadline: Timestamp, now: Timestamp) -> String {
    let left_ms = deadline.as_millis() - now.as_millis();
    match left_ms {
        ..=0 => "due now".to_owned(),
        1..60_000 => "in less than a minute".to_owned(),
        _ => match (left_ms + 59_999) / 60_000 {
            1 => "in 1 minute".to_owned(),
            minutes => format!("in {minutes} minutes"),
        },
    }
}

/// A duration in words, from whole seconds: "45 s", "3 min 12 s", "2 h 5 min".
pub fn span(seconds: u64) -> String {
    match seconds {
        0..60 => format!("{seconds} s"),
        60..3_600 => match seconds % 60 {
            0 => format!("{} min", seconds / 60),
            rest => format!("{} min {rest} s", seconds / 60),
        },
        _ => match (seconds % 3_600) / 60 {
            0 => format!("{} h", seconds / 3_600),
            rest => format!("{} h {rest} min", seconds / 3_600),
        },
    }
}

/// A duration in milliseconds, short: "850 ms", "2.4 s", then as [`span`].
pub fn duration(ms: i64) -> String {
    let ms = ms.max(0);
    if ms < 1_000 {
        format!("{ms} ms")
    } else if ms < 59_950 {
        // Tenths of a second, rounded half up, in integers: formatting a
        // float would bring the float printer into the browser bundle.
        let tenths = (ms + 50) / 100;
        format!("{}.{} s", tenths / 10, tenths % 10)
    } else {
        span((ms as u64).div_ceil(1_000))
    }
}

/// The time of day of `at`, UTC: "14:05:20 UTC".
pub fn clock_time(at: Timestamp) -> String {
    let text = at.to_string();
    match text.get(11..19) {
        Some(time) => format!("{time} UTC"),
        None => text,
    }
}

/// Whose circuit a route waits on, by the code that opened it: a usage, quota or
/// credits failure closes the provider, a rate limit or overload its model.
pub fn circuit_owner(route: &RouteView) -> &'static str {
    match route.code.and_then(policy::circuit::CircuitScope::of) {
        Some(policy::circuit::CircuitScope::Model) => "model's",
        _ => "provider's",
    }
}

/// What an attempt's failure was read as: "insufficient_credits (hard)", with
/// how sure the catalogue was when it was not sure ("read from its words alone"
/// for medium, "its rules disagreed" for low).
pub fn failure_words(attempt: &AttemptView) -> Option<String> {
    let (code, class) = (attempt.code?, attempt.class?);
    let sureness = match attempt.confidence {
        Some(policy::Confidence::Medium) => ", read from its words alone",
        Some(policy::Confidence::Low) => ", its rules disagreed",
        _ => "",
    };
    Some(format!("{} ({}){sureness}", code.as_str(), class.as_str()))
}

/// What a pending wait is called before its time: the usage window or quota
/// the failure named, by its provider ("Claude Code usage window resets at "),
/// a shared circuit ("Anthropic's circuit reopens at "), else the route's own
/// deadline. `provider` is the current candidate's provider's name.
pub fn deadline_words(route: &RouteView, provider: Option<&str>) -> String {
    use policy::SemanticCode::{QuotaExhausted, UsageLimited};
    let for_reset = route.state == RouteState::WaitingForReset;
    match (route.code, provider) {
        (Some(UsageLimited), Some(provider)) if for_reset => {
            format!("{provider} usage window resets at ")
        }
        (Some(QuotaExhausted), Some(provider)) if for_reset => {
            format!("{provider} quota resets at ")
        }
        _ if route.circuit_wait => match (circuit_owner(route), provider) {
            ("provider's", Some(provider)) => format!("{provider}'s circuit reopens at "),
            (owner, _) => format!("The {owner} circuit reopens at "),
        },
        _ => "Deadline ".to_owned(),
    }
}

/// The time of day of `at` in the IANA zone `zone`, with the zone's short
/// name, as the browser's own time-zone data gives it ("15:00 CEST"). `None`
/// off the browser, or for a zone the browser does not know: then the page
/// shows [`clock_time`].
pub fn zoned_time(at: Timestamp, zone: &str) -> Option<String> {
    #[cfg(feature = "hydrate")]
    {
        use wasm_bindgen::{JsCast, JsValue};
        let date = js_sys::Date::new(&JsValue::from_f64(at.as_millis() as f64));
        let options = js_sys::Object::new();
        for (key, value) in [
            ("timeZone", zone),
            ("hour", "2-digit"),
            ("minute", "2-digit"),
            ("hourCycle", "h23"),
            ("timeZoneName", "short"),
        ] {
            js_sys::Reflect::set(&options, &key.into(), &value.into()).ok()?;
        }
        // Through `apply`, so a zone the browser lacks (a RangeError) is an
        // error here rather than a trap.
        let format = js_sys::Reflect::get(&date, &"toLocaleTimeString".into()).ok()?;
        let arguments = js_sys::Array::of2(&"en-GB".into(), &options);
        js_sys::Reflect::apply(format.dyn_ref::<js_sys::Function>()?, &date, &arguments)
            .ok()?
            .as_string()
    }
    #[cfg(not(feature = "hydrate"))]
    {
        let _ = (at, zone);
        None
    }
}

/// What the time before an attempt was, in the order it happened: the wait the
/// attempt before it (`None`: the task's start) decided on, a circuit's wait, a
/// move to another candidate, a probe of the circuit, or the next turn. `None`
/// when there is nothing to name (the route went straight on).
pub fn gap_words(before: Option<&AttemptView>, after: &AttemptView) -> Option<String> {
    if before.is_some_and(|before| before.turn != after.turn) {
        return Some("next turn asked".to_owned());
    }
    let decided = before.and_then(|before| before.decision.as_deref());
    let mut parts: Vec<&str> = match decided {
        Some("retry") => vec!["backoff wait"],
        Some("wait_for_reset") => vec!["reset wait"],
        Some("skip") => vec!["skipped to the next candidate"],
        Some("hold") => vec!["held for a person"],
        _ => Vec::new(),
    };
    if after.after_circuit_wait {
        parts.push("circuit wait");
    }
    if before.is_some_and(|before| before.candidate_index != after.candidate_index)
        && decided != Some("skip")
    {
        parts.push("moved to the next candidate");
    }
    if after.probe {
        parts.push("this attempt probed the circuit");
    }
    (!parts.is_empty()).then(|| parts.join(", then "))
}

#[cfg(test)]
mod tests {
    use super::*;
    use api::{AttemptId, CandidateId, Generation, ProviderId, TaskId};

    fn route(state: RouteState) -> RouteView {
        RouteView {
            task_id: TaskId::new("t"),
            state,
            generation: Generation::new(3),
            candidate_index: 0,
            candidate_id: CandidateId::new("c1"),
            model: "claude-haiku".to_owned(),
            deadline: None,
            circuit_wait: false,
            class: None,
            code: None,
            catalogue: None,
            safe_cause: None,
            retry_ordinal: Some(2),
            max_retries: Some(3),
            pending_outcome: Some(OnExhausted::Skip),
            decision: None,
            cause: None,
            turn: 1,
            actions: state.actions().to_vec(),
            updated_at: Timestamp::from_millis(0),
        }
    }

    fn candidate(id: &str, model: &str, enabled: bool) -> TaskCandidateView {
        TaskCandidateView {
            id: CandidateId::new(id),
            provider_id: ProviderId::new("p"),
            provider: "Anthropic".to_owned(),
            time_zone: None,
            model: model.to_owned(),
            enabled,
        }
    }

    #[test]
    fn the_next_candidate_is_the_next_enabled_one() {
        let candidates = [
            candidate("c1", "claude-haiku", true),
            candidate("c2", "gpt-4o-mini", false),
            candidate("c3", "gpt-4o", true),
        ];
        let waiting = route(RouteState::RetryWait);
        assert_eq!(retry_line(&waiting).as_deref(), Some("retry 2 of 3"));
        assert_eq!(
            then_line(&waiting, &candidates).as_deref(),
            Some("then: skip to Candidate 3: gpt-4o")
        );
        assert_eq!(
            action_hint(ManualAction::SkipNow, &waiting, &candidates),
            "Moves to Candidate 3: gpt-4o."
        );
        assert_eq!(
            then_line(&waiting, &candidates[..2]).as_deref(),
            Some("then: stop (no candidate left to skip to)")
        );
        let mut stopping = waiting.clone();
        stopping.pending_outcome = Some(OnExhausted::Stop);
        assert_eq!(
            then_line(&stopping, &candidates).as_deref(),
            Some("then: stop")
        );
        assert_eq!(then_line(&route(RouteState::Completed), &candidates), None);
    }

    #[test]
    fn times_read_as_people_say_them_and_never_go_negative() {
        let now = Timestamp::from_millis(1_796_004_020_000);
        assert_eq!(relative(now.plus_millis(192_000), now), "in 3 min 12 s");
        assert_eq!(relative(now.plus_millis(-120_000), now), "2 min ago");
        assert_eq!(relative(now.plus_millis(400), now), "now");
        assert_eq!(countdown(now.plus_millis(-5_000), now), "due now");
        assert_eq!(countdown(now.plus_millis(1_500), now), "in 2 s");
        assert_eq!(
            countdown_spoken(now.plus_millis(540_500), now),
            "in 10 minutes"
        );
        assert_eq!(
            countdown_spoken(now.plus_millis(60_000), now),
            "in 1 minute"
        );
        assert_eq!(
            countdown_spoken(now.plus_millis(59_000), now),
            "in less than a minute"
        );
        assert_eq!(countdown_spoken(now, now), "due now");
        assert_eq!(span(7_500), "2 h 5 min");
        assert_eq!(span(3_600), "1 h");
        assert_eq!(duration(850), "850 ms");
        assert_eq!(duration(1_000), "1.0 s");
        assert_eq!(duration(1_249), "1.2 s");
        assert_eq!(duration(1_250), "1.3 s");
        assert_eq!(duration(59_949), "59.9 s");
        assert_eq!(duration(59_950), "1 min");
        assert_eq!(duration(2_400), "2.4 s");
        assert_eq!(duration(-3), "0 ms");
        assert_eq!(clock_time(now), "02:00:20 UTC");
    }

    fn attempt(candidate_index: u32, decision: Option<&str>) -> AttemptView {
        AttemptView {
            id: AttemptId::new("a"),
            turn: 1,
            candidate_index,
            candidate_id: CandidateId::new("c1"),
            model: "claude-haiku".to_owned(),
            ordinal: None,
            max_tokens: 1024,
            probe: false,
            after_circuit_wait: false,
            started_at: Timestamp::from_millis(0),
            finished_at: Some(Timestamp::from_millis(1_000)),
            outcome: Some("failed".to_owned()),
            class: None,
            code: None,
            confidence: None,
            catalogue: None,
            safe_cause: None,
            reset_at: None,
            decision: decision.map(str::to_owned),
        }
    }

    #[test]
    fn a_circuit_is_the_models_or_the_providers_by_its_code() {
        let waiting = |code| RouteView {
            circuit_wait: true,
            code: Some(code),
            ..route(RouteState::WaitingForReset)
        };
        assert_eq!(
            circuit_owner(&waiting(policy::SemanticCode::RateLimited)),
            "model's"
        );
        assert_eq!(
            circuit_owner(&waiting(policy::SemanticCode::Overloaded)),
            "model's"
        );
        assert_eq!(
            circuit_owner(&waiting(policy::SemanticCode::UsageLimited)),
            "provider's"
        );
        assert_eq!(
            circuit_owner(&waiting(policy::SemanticCode::InsufficientCredits)),
            "provider's"
        );
    }

    #[test]
    fn a_failure_says_how_sure_the_catalogue_was() {
        let read = |confidence| {
            failure_words(&AttemptView {
                code: Some(policy::SemanticCode::InsufficientCredits),
                class: Some(policy::Class::Hard),
                confidence,
                ..attempt(0, None)
            })
        };
        assert_eq!(
            read(Some(policy::Confidence::High)).as_deref(),
            Some("insufficient_credits (hard)")
        );
        assert_eq!(
            read(Some(policy::Confidence::Medium)).as_deref(),
            Some("insufficient_credits (hard), read from its words alone")
        );
        assert_eq!(
            read(Some(policy::Confidence::Low)).as_deref(),
            Some("insufficient_credits (hard), its rules disagreed")
        );
        assert_eq!(failure_words(&attempt(0, None)), None, "no failure");
    }

    #[test]
    fn a_wait_is_named_by_the_window_quota_or_circuit_it_waits_for() {
        let waiting = |code, circuit_wait| RouteView {
            circuit_wait,
            code: Some(code),
            ..route(RouteState::WaitingForReset)
        };
        use policy::SemanticCode::{
            InsufficientCredits, QuotaExhausted, RateLimited, UsageLimited,
        };
        let cases = [
            (
                waiting(UsageLimited, false),
                Some("Claude Code"),
                "Claude Code usage window resets at ",
            ),
            (
                waiting(UsageLimited, true),
                Some("Claude Code"),
                "Claude Code usage window resets at ",
            ),
            (
                waiting(QuotaExhausted, true),
                Some("Gemini"),
                "Gemini quota resets at ",
            ),
            (
                waiting(InsufficientCredits, true),
                Some("OpenAI"),
                "OpenAI's circuit reopens at ",
            ),
            (
                waiting(RateLimited, true),
                Some("OpenAI"),
                "The model's circuit reopens at ",
            ),
            (
                waiting(UsageLimited, true),
                None,
                "The provider's circuit reopens at ",
            ),
            (
                RouteView {
                    code: Some(RateLimited),
                    ..route(RouteState::RetryWait)
                },
                Some("OpenAI"),
                "Deadline ",
            ),
        ];
        for (route, provider, words) in cases {
            assert_eq!(deadline_words(&route, provider), words, "{route:?}");
        }
        assert_eq!(
            zoned_time(Timestamp::from_millis(0), "Europe/Berlin"),
            None,
            "off the browser the page shows UTC"
        );
    }

    #[test]
    fn a_gap_is_named_by_what_happened_in_it_in_order() {
        let retried = attempt(0, Some("retry"));
        assert_eq!(
            gap_words(Some(&retried), &attempt(0, None)).as_deref(),
            Some("backoff wait")
        );
        // A backoff that ran into another route's open circuit, then the probe.
        let probed = AttemptView {
            after_circuit_wait: true,
            probe: true,
            ..attempt(0, None)
        };
        assert_eq!(
            gap_words(Some(&retried), &probed).as_deref(),
            Some("backoff wait, then circuit wait, then this attempt probed the circuit")
        );
        // A first attempt that waited for another route's circuit first.
        assert_eq!(
            gap_words(None, &probed).as_deref(),
            Some("circuit wait, then this attempt probed the circuit")
        );
        assert_eq!(gap_words(None, &attempt(0, None)), None);
        // A circuit whose reset lay beyond the wait: the route moved on without
        // an attempt of its own.
        let elsewhere = AttemptView {
            after_circuit_wait: true,
            ..attempt(1, None)
        };
        assert_eq!(
            gap_words(Some(&attempt(0, Some("wait_for_reset"))), &elsewhere).as_deref(),
            Some("reset wait, then circuit wait, then moved to the next candidate")
        );
        assert_eq!(
            gap_words(Some(&attempt(0, Some("skip"))), &attempt(1, None)).as_deref(),
            Some("skipped to the next candidate")
        );
        assert_eq!(
            gap_words(Some(&attempt(0, Some("hold"))), &attempt(1, None)).as_deref(),
            Some("held for a person, then moved to the next candidate")
        );
        assert_eq!(gap_words(Some(&attempt(0, None)), &attempt(0, None)), None);
        let next_turn = AttemptView {
            turn: 2,
            ..attempt(0, None)
        };
        assert_eq!(
            gap_words(Some(&retried), &next_turn).as_deref(),
            Some("next turn asked")
        );
    }
}
