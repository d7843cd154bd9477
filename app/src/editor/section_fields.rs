use leptos::prelude::*;
use policy::{
    INITIAL_INTERVAL_MS_BOUNDS, JITTER_PCT_BOUNDS, MAX_RETRIES_BOUNDS, MAX_WAIT_S_BOUNDS,
    SectionClass,
};

use super::context::EditorContext;
use super::form::{SectionForm, section_path};
use super::schedule_view::ScheduleView;
use crate::components::{CheckField, FieldMessage, NumberField};

/// One policy section of a candidate (`Transient errors` or `Hard errors`):
/// which errors it covers, in words, then its retry, reset wait and
/// exhausted outcome, then the schedule they make.
#[component]
pub fn SectionFields(key: u32, class: SectionClass) -> impl IntoView {
    let context = EditorContext::get();
    let form = context.form;
    let position = Memo::new(move |_| form.with(|form| form.position(key).unwrap_or(0)));
    let path = move |field: &'static str| {
        Signal::derive(move || section_path(position.get(), class, field))
    };
    let read = move |pick: fn(&SectionForm) -> String| {
        Signal::derive(move || {
            form.with(|form| {
                form.candidate(key)
                    .map(|c| pick(c.section(class)))
                    .unwrap_or_default()
            })
        })
    };
    let read_flag = move |pick: fn(&SectionForm) -> bool| {
        Signal::derive(move || {
            form.with(|form| form.candidate(key).is_some_and(|c| pick(c.section(class))))
        })
    };
    let write = move |apply: fn(&mut SectionForm, String)| {
        Callback::new(move |value: String| {
            form.update(|form| {
                if let Some(candidate) = form.candidate_mut(key) {
                    apply(candidate.section_mut(class), value);
                }
            })
        })
    };
    let write_flag = move |apply: fn(&mut SectionForm, bool)| {
        Callback::new(move |value: bool| {
            form.update(|form| {
                if let Some(candidate) = form.candidate_mut(key) {
                    apply(candidate.section_mut(class), value);
                }
            })
        })
    };

    let (heading, css) = match class {
        SectionClass::Transient => ("Transient errors", "policy-section transient"),
        SectionClass::Hard => ("Hard errors", "policy-section hard"),
    };
    let heading_id = move || format!("c{key}-{}-heading", class.as_str());
    let outcome_id = move || format!("c{key}-{}-outcome", class.as_str());
    let covered = class
        .class()
        .codes()
        .iter()
        .map(|code| match code.family() {
            Some(family) => format!("{} ({family})", code.as_str().replace('_', " ")),
            None => code.as_str().replace('_', " "),
        })
        .collect::<Vec<_>>()
        .join(", ");
    let outcome = read(|section| section.on_exhausted.clone());
    let outcome_path = path("on_exhausted");
    let set_outcome = write(|section, value| section.on_exhausted = value);

    view! {
        <section class=css role="group" aria-labelledby=heading_id>
            <h3 id=heading_id>{heading}</h3>
            <p class="section-explanation">
                {class.class().explanation()} <br /> <span class="codes">"Covers: " {covered} "."</span>
            </p>
            <div class="section-grid">
                <CheckField
                    label="Retry"
                    path=path("retry.enabled")
                    checked=read_flag(|section| section.retry_enabled)
                    on_change=write_flag(|section, value| section.retry_enabled = value)
                />
                <NumberField
                    label="Max retries"
                    path=path("retry.max_retries")
                    value=read(|section| section.max_retries.clone())
                    on_input=write(|section, value| section.max_retries = value)
                    min=MAX_RETRIES_BOUNDS.min
                    max=MAX_RETRIES_BOUNDS.max
                />
                <NumberField
                    label="Initial interval (ms)"
                    path=path("retry.initial_interval_ms")
                    value=read(|section| section.initial_interval_ms.clone())
                    on_input=write(|section, value| section.initial_interval_ms = value)
                    min=INITIAL_INTERVAL_MS_BOUNDS.min
                    max=INITIAL_INTERVAL_MS_BOUNDS.max
                />
                <NumberField
                    label="Jitter (%)"
                    path=path("retry.jitter_pct")
                    value=read(|section| section.jitter_pct.clone())
                    on_input=write(|section, value| section.jitter_pct = value)
                    min=JITTER_PCT_BOUNDS.min
                    max=JITTER_PCT_BOUNDS.max
                />
                <CheckField
                    label="Wait for reset"
                    path=path("reset_wait.enabled")
                    checked=read_flag(|section| section.reset_wait_enabled)
                    on_change=write_flag(|section, value| section.reset_wait_enabled = value)
                />
                <NumberField
                    label="Max wait (s)"
                    path=path("reset_wait.max_wait_s")
                    value=read(|section| section.max_wait_s.clone())
                    on_input=write(|section, value| section.max_wait_s = value)
                    min=MAX_WAIT_S_BOUNDS.min
                    max=MAX_WAIT_S_BOUNDS.max
                />
                <fieldset class="radio-group" role="radiogroup" aria-labelledby=outcome_id>
                    <legend id=outcome_id>"After exhaustion"</legend>
                    {[("skip", "Skip candidate"), ("stop", "Stop")]
                        .into_iter()
                        .map(|(value, label)| {
                            let checked = move || outcome.get() == value;
                            view! {
                                <label class="check">
                                    <input
                                        type="radio"
                                        name=move || outcome_path.get()
                                        value=value
                                        checked=checked
                                        prop:checked=checked
                                        on:change=move |_| set_outcome.run(value.to_owned())
                                    />
                                    <span>{label}</span>
                                </label>
                            }
                        })
                        .collect_view()}
                    <FieldMessage path=outcome_path />
                </fieldset>
            </div>
            <ScheduleView key=key class=class />
        </section>
    }
    .into_any()
}
