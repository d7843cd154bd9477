use leptos::prelude::*;
use policy::{JITTER_PCT_BOUNDS, MAX_RETRIES_BOUNDS, PolicySection, describe_schedule};

/// What a person typed into [`BackoffPreview`]: owned by the page rather than by
/// the preview, so that the preview drawn again (the home page's data read again
/// when its live stream opens, which draws its section anew) shows what they typed,
/// not the defaults.
#[derive(Debug, Clone, Copy)]
pub struct BackoffInputs {
    initial_interval_ms: RwSignal<u64>,
    max_retries: RwSignal<u32>,
    jitter_pct: RwSignal<u32>,
}

impl Default for BackoffInputs {
    /// A first interval of 500 ms, three retries, no jitter.
    fn default() -> Self {
        Self {
            initial_interval_ms: RwSignal::new(500),
            max_retries: RwSignal::new(3),
            jitter_pct: RwSignal::new(0),
        }
    }
}

/// A small explainer: type a first interval, a retry count and a jitter, and
/// read the delays a transient section would use (with jitter, the band each
/// can fall in). The words come from the policy crate, the same code the
/// server runs, so they update in the browser on every keystroke.
#[component]
pub fn BackoffPreview(inputs: BackoffInputs) -> impl IntoView {
    let (initial_interval_ms, set_initial_interval_ms) = inputs.initial_interval_ms.split();
    let (max_retries, set_max_retries) = inputs.max_retries.split();
    let (jitter_pct, set_jitter_pct) = inputs.jitter_pct.split();
    let schedule = Memo::new(move |_| {
        describe(
            initial_interval_ms.get(),
            max_retries.get(),
            jitter_pct.get(),
        )
    });

    view! {
        <section class="card" aria-labelledby="backoff-heading">
            <h2 id="backoff-heading">"Backoff at a glance"</h2>
            <div class="field-row">
                <label>
                    "Initial interval (ms)"
                    <input
                        type="number"
                        min="100"
                        max="600000"
                        prop:value=move || initial_interval_ms.get().to_string()
                        on:input=move |ev| {
                            if let Ok(value) = event_target_value(&ev).parse() {
                                set_initial_interval_ms.set(value);
                            }
                        }
                    />
                </label>
                <label>
                    "Max retries"
                    <input
                        type="number"
                        min="1"
                        max="10"
                        prop:value=move || max_retries.get().to_string()
                        on:input=move |ev| {
                            if let Ok(value) = event_target_value(&ev).parse() {
                                set_max_retries.set(value);
                            }
                        }
                    />
                </label>
                <label>
                    "Jitter (%)"
                    <input
                        type="number"
                        min=JITTER_PCT_BOUNDS.min
                        max=JITTER_PCT_BOUNDS.max
                        prop:value=move || jitter_pct.get().to_string()
                        on:input=move |ev| {
                            if let Ok(value) = event_target_value(&ev).parse() {
                                set_jitter_pct.set(value);
                            }
                        }
                    />
                </label>
            </div>
            <p role="status" class="schedule">{move || schedule.get()}</p>
        </section>
    }
}

/// The transient section's schedule with these three numbers, in words.
fn describe(initial_interval_ms: u64, max_retries: u32, jitter_pct: u32) -> String {
    let mut section = PolicySection::transient_default();
    section.retry.initial_interval_ms = initial_interval_ms;
    section.retry.max_retries =
        max_retries.min(u32::try_from(MAX_RETRIES_BOUNDS.max).unwrap_or(u32::MAX));
    section.retry.jitter_pct =
        jitter_pct.min(u32::try_from(JITTER_PCT_BOUNDS.max).unwrap_or(u32::MAX));
    describe_schedule(&section, Some("the next candidate"))
}

#[cfg(test)]
mod tests {
    #[test]
    fn describes_the_schedule() {
        assert_eq!(
            super::describe(500, 2, 0),
            "retry 1 after 0.5 s, retry 2 after 1 s; gives up after 1.5 s, then skips to the next candidate"
        );
        assert_eq!(
            super::describe(1_000, 2, 25),
            "retry 1 after 0.75–1.25 s, retry 2 after 1.5–2.5 s; gives up after 2.25–3.75 s, then skips to the next candidate"
        );
        assert_eq!(
            super::describe(1_000, 1, 90),
            super::describe(1_000, 1, 50),
            "at most 50% jitter"
        );
        assert_eq!(
            super::describe(100, 99, 0).matches("retry").count(),
            10,
            "at most 10 retries"
        );
    }
}
