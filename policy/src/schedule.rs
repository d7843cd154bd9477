//! The derived retry schedule the editor shows (SPEC 3).

use serde::Serialize;

use crate::backoff::{backoff_ms, jitter_band_ms};
use crate::document::{MAX_RETRIES_BOUNDS, OnExhausted, PolicySection};

/// One retry of a [`Schedule`].
///
/// ```
/// let mut section = policy::PolicySection::transient_default();
/// let second = policy::schedule(&section).steps[1];
/// assert_eq!((second.retry_ordinal, second.delay_ms, second.total_ms), (2, 1_000, 1_500));
/// assert_eq!((second.earliest_ms, second.latest_ms), (1_000, 1_000));
/// section.retry.jitter_pct = 25;
/// let second = policy::schedule(&section).steps[1];
/// assert_eq!((second.earliest_ms, second.latest_ms), (750, 1_250));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub struct ScheduleStep {
    /// Which retry this is, from 1.
    pub retry_ordinal: u32,
    /// The backoff delay before this retry, in milliseconds, before any jitter.
    pub delay_ms: u64,
    /// The sum of the delays up to and including this retry, in milliseconds.
    pub total_ms: u64,
    /// The shortest the delay can be with the section's jitter (`delay_ms` without).
    pub earliest_ms: u64,
    /// The longest the delay can be with the section's jitter (`delay_ms` without).
    pub latest_ms: u64,
}

/// A section's retries with their delays and running totals, and what happens after.
///
/// The delays are the backoff alone: a reset hint can push a retry later (SPEC 4).
///
/// ```
/// let schedule = policy::schedule(&policy::PolicySection::transient_default());
/// assert_eq!(schedule.steps.len(), 2);
/// assert_eq!(schedule.total_ms(), 1_500);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
pub struct Schedule {
    /// One entry per retry; empty when retrying is disabled.
    pub steps: Vec<ScheduleStep>,
    /// What the section does after the last retry.
    pub on_exhausted: OnExhausted,
}

impl Schedule {
    /// The total of all delays, in milliseconds: when the section gives up.
    ///
    /// ```
    /// assert_eq!(policy::schedule(&policy::PolicySection::hard_default()).total_ms(), 0);
    /// ```
    pub fn total_ms(&self) -> u64 {
        self.steps.last().map_or(0, |step| step.total_ms)
    }

    /// The soonest the section can give up, every delay at its band's earliest,
    /// in milliseconds; [`total_ms`](Self::total_ms) without jitter.
    ///
    /// ```
    /// let mut section = policy::PolicySection::transient_default();
    /// section.retry.jitter_pct = 50;
    /// let schedule = policy::schedule(&section);
    /// assert_eq!((schedule.earliest_total_ms(), schedule.latest_total_ms()), (750, 2_250));
    /// ```
    pub fn earliest_total_ms(&self) -> u64 {
        self.steps
            .iter()
            .fold(0, |total, step| total.saturating_add(step.earliest_ms))
    }

    /// The latest the section can give up, every delay at its band's latest, in
    /// milliseconds; [`total_ms`](Self::total_ms) without jitter.
    pub fn latest_total_ms(&self) -> u64 {
        self.steps
            .iter()
            .fold(0, |total, step| total.saturating_add(step.latest_ms))
    }
}

/// The retry schedule of `section`. A section beyond the bounds (not validated) is
/// shown up to the largest allowed number of retries, 10.
///
/// ```
/// use policy::{schedule, PolicySection};
/// let mut section = PolicySection::transient_default();
/// section.retry.max_retries = 3;
/// let totals: Vec<(u64, u64)> = schedule(&section).steps.iter().map(|s| (s.delay_ms, s.total_ms)).collect();
/// assert_eq!(totals, [(500, 500), (1_000, 1_500), (2_000, 3_500)]);
/// ```
pub fn schedule(section: &PolicySection) -> Schedule {
    let retries = if section.retry.enabled {
        section.retry.max_retries.min(MAX_RETRIES_BOUNDS.max as u32)
    } else {
        0
    };
    let mut total_ms: u64 = 0;
    let steps = (1..=retries)
        .map(|retry_ordinal| {
            let initial_interval_ms = section.retry.initial_interval_ms;
            let delay_ms = backoff_ms(initial_interval_ms, retry_ordinal);
            let (earliest_ms, latest_ms) =
                jitter_band_ms(initial_interval_ms, retry_ordinal, section.retry.jitter_pct);
            total_ms = total_ms.saturating_add(delay_ms);
            ScheduleStep {
                retry_ordinal,
                delay_ms,
                total_ms,
                earliest_ms,
                latest_ms,
            }
        })
        .collect();
    Schedule {
        steps,
        on_exhausted: section.on_exhausted,
    }
}

/// The schedule in words, for the editor. `next_candidate` names the candidate a skip
/// goes to; `None` means there is none, so a skip stops. With jitter each delay,
/// and when the section gives up, is a band ([`format_band_ms`]).
///
/// ```
/// use policy::{describe_schedule, OnExhausted, PolicySection};
/// let mut section = PolicySection::transient_default();
/// assert_eq!(
///     describe_schedule(&section, Some("gpt-4o")),
///     "retry 1 after 0.5 s, retry 2 after 1 s; gives up after 1.5 s, then skips to gpt-4o",
/// );
/// section.on_exhausted = OnExhausted::Stop;
/// assert_eq!(describe_schedule(&section, Some("gpt-4o")), "retry 1 after 0.5 s, retry 2 after 1 s; gives up after 1.5 s, then stops");
/// assert_eq!(
///     describe_schedule(&PolicySection::hard_default(), None),
///     "no retries; then stops, as no candidate follows",
/// );
/// section.retry.jitter_pct = 50;
/// assert_eq!(
///     describe_schedule(&section, None),
///     "retry 1 after 0.25–0.75 s, retry 2 after 0.5–1.5 s; gives up after 0.75–2.25 s, then stops",
/// );
/// ```
pub fn describe_schedule(section: &PolicySection, next_candidate: Option<&str>) -> String {
    let plan = schedule(section);
    let after = match (plan.on_exhausted, next_candidate) {
        (OnExhausted::Skip, Some(name)) => format!("skips to {name}"),
        (OnExhausted::Skip, None) => "stops, as no candidate follows".to_owned(),
        (OnExhausted::Stop, _) => "stops".to_owned(),
    };
    if plan.steps.is_empty() {
        return format!("no retries; then {after}");
    }
    let retries: Vec<String> = plan
        .steps
        .iter()
        .map(|step| {
            format!(
                "retry {} after {}",
                step.retry_ordinal,
                format_band_ms(step.earliest_ms, step.latest_ms)
            )
        })
        .collect();
    format!(
        "{}; gives up after {}, then {after}",
        retries.join(", "),
        format_band_ms(plan.earliest_total_ms(), plan.latest_total_ms())
    )
}

/// A band of durations for people, short enough for a phone: one duration when
/// both ends are equal, one unit for two amounts of seconds (`0.75–1.25 s`), else
/// both in full (`50 min – 1 h`).
///
/// ```
/// use policy::format_band_ms;
/// assert_eq!(format_band_ms(1_000, 1_000), "1 s");
/// assert_eq!(format_band_ms(750, 1_250), "0.75–1.25 s");
/// assert_eq!(format_band_ms(45_000, 75_000), "45 s – 1 min 15 s");
/// assert_eq!(format_band_ms(3_000_000, 3_600_000), "50 min – 1 h");
/// ```
pub fn format_band_ms(earliest_ms: u64, latest_ms: u64) -> String {
    if earliest_ms == latest_ms {
        return format_duration_ms(earliest_ms);
    }
    let earliest = format_duration_ms(earliest_ms);
    let latest = format_duration_ms(latest_ms);
    if earliest_ms < 60_000 && latest_ms < 60_000 {
        let amount = earliest.trim_end_matches(" s");
        format!("{amount}–{latest}")
    } else {
        format!("{earliest} – {latest}")
    }
}

/// A duration for people: `0.5 s`, `1 min 30 s`, `8 h 10 min`.
///
/// ```
/// use policy::format_duration_ms;
/// assert_eq!(format_duration_ms(0), "0 s");
/// assert_eq!(format_duration_ms(1_250), "1.25 s");
/// assert_eq!(format_duration_ms(90_500), "1 min 30.5 s");
/// assert_eq!(format_duration_ms(3_600_000), "1 h");
/// ```
pub fn format_duration_ms(duration_ms: u64) -> String {
    let hours = duration_ms / 3_600_000;
    let minutes = duration_ms % 3_600_000 / 60_000;
    let rest_ms = duration_ms % 60_000;
    let mut parts = Vec::new();
    if hours > 0 {
        parts.push(format!("{hours} h"));
    }
    if minutes > 0 {
        parts.push(format!("{minutes} min"));
    }
    if rest_ms > 0 || parts.is_empty() {
        let fraction = format!("{:03}", rest_ms % 1_000);
        let fraction = fraction.trim_end_matches('0');
        let seconds = rest_ms / 1_000;
        parts.push(if fraction.is_empty() {
            format!("{seconds} s")
        } else {
            format!("{seconds}.{fraction} s")
        });
    }
    parts.join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_in_words() {
        let table = [
            (0, "0 s"),
            (1, "0.001 s"),
            (100, "0.1 s"),
            (500, "0.5 s"),
            (1_000, "1 s"),
            (59_999, "59.999 s"),
            (60_000, "1 min"),
            (600_000, "10 min"),
            (3_599_000, "59 min 59 s"),
            (3_600_000, "1 h"),
            (29_400_000, "8 h 10 min"),
            (3_600_001, "1 h 0.001 s"),
        ];
        for (duration_ms, expected) in table {
            assert_eq!(format_duration_ms(duration_ms), expected, "{duration_ms}");
        }
    }

    #[test]
    fn schedules_double_and_cap() {
        let mut section = PolicySection::transient_default();
        section.retry.max_retries = 10;
        section.retry.initial_interval_ms = 600_000;
        let delays: Vec<u64> = schedule(&section)
            .steps
            .iter()
            .map(|step| step.delay_ms)
            .collect();
        assert_eq!(
            delays,
            [
                600_000, 1_200_000, 2_400_000, 3_600_000, 3_600_000, 3_600_000, 3_600_000,
                3_600_000, 3_600_000, 3_600_000
            ]
        );
        assert_eq!(schedule(&section).total_ms(), 29_400_000);

        section.retry.enabled = false;
        assert!(schedule(&section).steps.is_empty());

        // An unvalidated section cannot make the schedule huge.
        section.retry.enabled = true;
        section.retry.max_retries = u32::MAX;
        assert_eq!(schedule(&section).steps.len(), 10);
    }

    #[test]
    fn descriptions() {
        let mut section = PolicySection::transient_default();
        section.retry.max_retries = 1;
        section.retry.initial_interval_ms = 100;
        let table = [
            (
                OnExhausted::Skip,
                Some("claude-sonnet"),
                "retry 1 after 0.1 s; gives up after 0.1 s, then skips to claude-sonnet",
            ),
            (
                OnExhausted::Skip,
                None,
                "retry 1 after 0.1 s; gives up after 0.1 s, then stops, as no candidate follows",
            ),
            (
                OnExhausted::Stop,
                Some("claude-sonnet"),
                "retry 1 after 0.1 s; gives up after 0.1 s, then stops",
            ),
            (
                OnExhausted::Stop,
                None,
                "retry 1 after 0.1 s; gives up after 0.1 s, then stops",
            ),
        ];
        for (on_exhausted, next, expected) in table {
            section.on_exhausted = on_exhausted;
            assert_eq!(describe_schedule(&section, next), expected);
        }
    }

    #[test]
    fn jittered_schedules_show_their_bands() {
        let mut section = PolicySection::transient_default();
        section.retry.max_retries = 4;
        section.retry.initial_interval_ms = 600_000;
        section.retry.jitter_pct = 10;
        assert_eq!(
            describe_schedule(&section, None),
            "retry 1 after 9 min – 11 min, retry 2 after 18 min – 22 min, \
             retry 3 after 36 min – 44 min, retry 4 after 54 min – 1 h; \
             gives up after 1 h 57 min – 2 h 17 min, then stops, as no candidate follows"
        );
        // The nominal schedule is unchanged by jitter.
        let plan = schedule(&section);
        assert_eq!(plan.total_ms(), 7_800_000);
        assert_eq!(plan.steps[3].delay_ms, 3_600_000);
    }

    #[test]
    fn bands_in_words() {
        let table = [
            (500, 500, "0.5 s"),
            (250, 750, "0.25–0.75 s"),
            (0, 1_000, "0–1 s"),
            (59_000, 59_999, "59–59.999 s"),
            (30_000, 60_000, "30 s – 1 min"),
            (3_240_000, 3_600_000, "54 min – 1 h"),
        ];
        for (earliest_ms, latest_ms, expected) in table {
            assert_eq!(format_band_ms(earliest_ms, latest_ms), expected);
        }
    }
}
