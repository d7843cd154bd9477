use leptos::prelude::*;
use policy::{CEILING_TOKENS_BOUNDS, MAX_ESCALATIONS_BOUNDS, MAX_TOKENS_BOUNDS, SectionClass};

use super::context::EditorContext;
use super::dry_run::DryRun;
use super::form::{CandidateForm, EditOp, candidate_path};
use super::op_button::OpButton;
use super::section_fields::SectionFields;
use crate::components::{CheckField, FieldMessage, NumberField, input_id, message_id};

/// One candidate: a group named `Candidate N: MODEL` with its provider, model
/// and token settings, its place in the order, and its two policy sections.
#[component]
pub fn CandidateCard(key: u32) -> impl IntoView {
    let context = EditorContext::get();
    let form = context.form;
    let position = Memo::new(move |_| form.with(|form| form.position(key).unwrap_or(0)));
    let count = Memo::new(move |_| form.with(|form| form.candidates.len()));
    let path =
        move |field: &'static str| Signal::derive(move || candidate_path(position.get(), field));
    let read = move |pick: fn(&CandidateForm) -> String| {
        Signal::derive(move || form.with(|form| form.candidate(key).map(pick).unwrap_or_default()))
    };
    let write = move |apply: fn(&mut CandidateForm, String)| {
        Callback::new(move |value: String| {
            form.update(|form| {
                if let Some(candidate) = form.candidate_mut(key) {
                    apply(candidate, value);
                }
            })
        })
    };
    let model = read(|candidate| candidate.model.clone());
    let title = move || {
        let model = model.get();
        let model = model.trim();
        let model = if model.is_empty() {
            "no model yet"
        } else {
            model
        };
        format!("Candidate {}: {model}", position.get() + 1)
    };
    let legend_id = format!("c{key}-legend");
    let group_label = legend_id.clone();

    let provider_path = path("provider_id");
    let provider_id = read(|candidate| candidate.provider_id.to_string());
    let provider_invalid = move || context.error_for(&provider_path.get()).is_some();
    let provider_options = move || {
        let mut providers: Vec<(String, String)> = context.providers.with_value(|providers| {
            providers
                .iter()
                .map(|p| (p.id.to_string(), p.name.clone()))
                .collect()
        });
        let current = provider_id.get();
        if !current.is_empty() && !providers.iter().any(|(id, _)| *id == current) {
            providers.push((current, "(a provider that no longer exists)".to_owned()));
        }
        providers
            .into_iter()
            .map(|(id, name)| {
                let selected = id == provider_id.get();
                view! { <option value=id selected=selected>{name}</option> }
            })
            .collect_view()
    };
    let set_provider = write(|candidate, value| candidate.provider_id = value.into());

    let model_path = path("model");
    let model_invalid = move || context.error_for(&model_path.get()).is_some();
    let set_model = write(|candidate, value| candidate.model = value);

    view! {
        <fieldset class="candidate card" aria-labelledby=group_label>
            <legend id=legend_id>{title}</legend>
            <input type="hidden" name=path("id") value=read(|c| c.id.as_ref().map(ToString::to_string).unwrap_or_default()) />
            <div class="candidate-grid">
                <div class="field">
                    <label for=move || input_id(&provider_path.get())>"Provider"</label>
                    <select
                        id=move || input_id(&provider_path.get())
                        name=move || provider_path.get()
                        prop:value=move || provider_id.get()
                        aria-invalid=move || provider_invalid().then_some("true")
                        aria-describedby=move || provider_invalid().then(|| message_id(&provider_path.get()))
                        on:change=move |ev| set_provider.run(event_target_value(&ev))
                    >
                        {provider_options}
                    </select>
                    <FieldMessage path=provider_path />
                </div>
                <div class="field">
                    <label for=move || input_id(&model_path.get())>"Model"</label>
                    <input
                        type="text"
                        autocomplete="off"
                        spellcheck="false"
                        id=move || input_id(&model_path.get())
                        name=move || model_path.get()
                        value=move || model.get()
                        prop:value=move || model.get()
                        aria-invalid=move || model_invalid().then_some("true")
                        aria-describedby=move || model_invalid().then(|| message_id(&model_path.get()))
                        on:input=move |ev| set_model.run(event_target_value(&ev))
                    />
                    <FieldMessage path=model_path />
                </div>
                <CheckField
                    label="Enabled"
                    path=path("enabled")
                    checked=Signal::derive(move || form.with(|form| form.candidate(key).is_some_and(|c| c.enabled)))
                    on_change=Callback::new(move |value| form.update(|form| {
                        if let Some(candidate) = form.candidate_mut(key) {
                            candidate.enabled = value;
                        }
                    }))
                />
                <NumberField
                    label="Max tokens"
                    path=path("max_tokens")
                    value=read(|c| c.max_tokens.clone())
                    on_input=write(|c, value| c.max_tokens = value)
                    min=MAX_TOKENS_BOUNDS.min
                    max=MAX_TOKENS_BOUNDS.max
                />
                <NumberField
                    label="Max escalations"
                    path=path("escalation.max_escalations")
                    value=read(|c| c.max_escalations.clone())
                    on_input=write(|c, value| c.max_escalations = value)
                    min=MAX_ESCALATIONS_BOUNDS.min
                    max=MAX_ESCALATIONS_BOUNDS.max
                />
                <NumberField
                    label="Escalation ceiling (tokens)"
                    path=path("escalation.ceiling_tokens")
                    value=read(|c| c.ceiling_tokens.clone())
                    on_input=write(|c, value| c.ceiling_tokens = value)
                    min=CEILING_TOKENS_BOUNDS.min
                    max=CEILING_TOKENS_BOUNDS.max
                />
            </div>
            <p class="hint">
                "A truncated answer is sent again with twice the tokens, up to the escalations and ceiling above."
            </p>
            <div class="candidate-actions">
                <OpButton
                    label="Move up"
                    op=Signal::derive(move || EditOp::MoveUp(position.get()))
                    unavailable=Signal::derive(move || position.get() == 0)
                />
                <OpButton
                    label="Move down"
                    op=Signal::derive(move || EditOp::MoveDown(position.get()))
                    unavailable=Signal::derive(move || position.get() + 1 >= count.get())
                />
                <OpButton
                    label="Remove"
                    class="danger"
                    op=Signal::derive(move || EditOp::Remove(position.get()))
                    unavailable=Signal::derive(move || count.get() <= 1)
                />
            </div>
            <div class="sections">
                <SectionFields key=key class=SectionClass::Transient />
                <SectionFields key=key class=SectionClass::Hard />
            </div>
            <DryRun key=key />
        </fieldset>
    }
    .into_any()
}
