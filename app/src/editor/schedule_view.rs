use leptos::prelude::*;
use policy::{SectionClass, schedule};

use super::context::EditorContext;
use super::summary::schedule_sentence;

/// A section's derived schedule, from the policy crate on every keystroke:
/// a sentence, and a timeline with a mark per retry (and, with jitter, the
/// band each retry can fall in, drawn behind its mark).
#[component]
pub fn ScheduleView(key: u32, class: SectionClass) -> impl IntoView {
    let context = EditorContext::get();
    let section = Memo::new(move |_| {
        context.form.with(|form| {
            form.candidate(key)
                .and_then(|candidate| candidate.section(class).parsed())
        })
    });
    let next_model = Memo::new(move |_| context.form.with(|form| form.next_enabled_model(key)));
    let sentence = move || match section.get() {
        Some(section) => schedule_sentence(&section, next_model.get().as_deref()),
        None => "Fix the numbers above to see the schedule.".to_owned(),
    };
    // Each retry's running total as a share of the latest the section can give
    // up (the total itself without jitter), with the band of that running total.
    let marks = move || {
        section
            .get()
            .map(|section| {
                let plan = schedule(&section);
                let total = plan.latest_total_ms().max(1);
                let (mut earliest_ms, mut latest_ms) = (0u64, 0u64);
                plan.steps
                    .iter()
                    .map(|step| {
                        earliest_ms = earliest_ms.saturating_add(step.earliest_ms);
                        latest_ms = latest_ms.saturating_add(step.latest_ms);
                        Mark {
                            retry_ordinal: step.retry_ordinal,
                            at: hundredths_of_percent(step.total_ms, total),
                            band_from: hundredths_of_percent(earliest_ms, total),
                            band_to: hundredths_of_percent(latest_ms, total),
                        }
                    })
                    .collect::<Vec<_>>()
            })
            .unwrap_or_default()
    };
    view! {
        <div class="schedule-view">
            <p class="schedule" role="status">{sentence}</p>
            <div class="schedule-line" aria-hidden="true">
                <span class="schedule-line-axis"></span>
                <span class="schedule-line-mark start" style="left: 0%"></span>
                {move || {
                    marks()
                        .into_iter()
                        .map(|mark| {
                            let band = (mark.band_to > mark.band_from)
                                .then(|| {
                                    view! {
                                        <span
                                            class="schedule-line-band"
                                            style=format!(
                                                "left: {}; width: {}",
                                                percent(mark.band_from),
                                                percent(mark.band_to - mark.band_from),
                                            )
                                        ></span>
                                    }
                                });
                            view! {
                                {band}
                                <span
                                    class="schedule-line-mark retry"
                                    style=format!("left: {}", percent(mark.at))
                                    title=format!("retry {}", mark.retry_ordinal)
                                ></span>
                            }
                        })
                        .collect_view()
                }}
            </div>
        </div>
    }
    .into_any()
}

/// One retry on the timeline, in hundredths of a percent of its width.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Mark {
    retry_ordinal: u32,
    /// Where the retry falls without jitter.
    at: u64,
    /// The earliest and latest it can fall with jitter.
    band_from: u64,
    band_to: u64,
}

/// Hundredths of a percent as CSS: `2_500` is `25.00%`.
fn percent(hundredths: u64) -> String {
    format!("{}.{:02}%", hundredths / 100, hundredths % 100)
}

/// `part` of `total` in hundredths of a percent, rounded down (`2_500` is
/// 25.00%), in integers: formatting a float would bring the float printer
/// into the browser bundle.
fn hundredths_of_percent(part: u64, total: u64) -> u64 {
    (part.saturating_mul(10_000) / total).min(10_000)
}

#[cfg(test)]
mod tests {
    use super::{hundredths_of_percent, percent};

    #[test]
    fn shares_are_hundredths_of_a_percent_rounded_down() {
        assert_eq!(hundredths_of_percent(500, 3_500), 1_428);
        assert_eq!(hundredths_of_percent(3_500, 3_500), 10_000);
        assert_eq!(hundredths_of_percent(1, 3), 3_333);
        assert_eq!(percent(1_428), "14.28%");
        assert_eq!(percent(5), "0.05%");
    }
}
