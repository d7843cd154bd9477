use leptos::prelude::*;
use policy::{SectionClass, schedule};

use super::context::EditorContext;
use super::summary::schedule_sentence;

/// A section's derived schedule, from the policy crate on every keystroke:
/// a sentence, and a timeline with a mark per retry.
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
    // Each retry's running total as a share of the whole, for the timeline.
    let marks = move || {
        section
            .get()
            .map(|section| {
                let plan = schedule(&section);
                let total = plan.total_ms().max(1);
                plan.steps
                    .iter()
                    .map(|step| {
                        (
                            step.retry_ordinal,
                            hundredths_of_percent(step.total_ms, total),
                        )
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
                        .map(|(ordinal, at)| {
                            view! {
                                <span
                                    class="schedule-line-mark retry"
                                    style=format!("left: {}.{:02}%", at / 100, at % 100)
                                    title=format!("retry {ordinal}")
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

/// `part` of `total` in hundredths of a percent, rounded down (`2_500` is
/// 25.00%), in integers: formatting a float would bring the float printer
/// into the browser bundle.
fn hundredths_of_percent(part: u64, total: u64) -> u64 {
    (part.saturating_mul(10_000) / total).min(10_000)
}

#[cfg(test)]
mod tests {
    use super::hundredths_of_percent;

    #[test]
    fn shares_are_hundredths_of_a_percent_rounded_down() {
        assert_eq!(hundredths_of_percent(500, 3_500), 1_428);
        assert_eq!(hundredths_of_percent(3_500, 3_500), 10_000);
        assert_eq!(hundredths_of_percent(1, 3), 3_333);
    }
}
