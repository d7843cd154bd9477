use api::{ApiError, FieldError};
use leptos::prelude::*;
use leptos_router::NavigateOptions;
use leptos_router::hooks::use_navigate;
use serde::{Deserialize, Serialize};

use super::candidate_card::CandidateCard;
use super::context::{EditorContext, ProviderChoice};
use super::form::{EditOp, ProfileForm};
use super::on_demand;
use super::op_button::OpButton;
use super::unsaved_guard::guard_unsaved_changes;
use crate::components::{
    FieldErrors, FieldMessage, NumberField, Touched, input_id, message_id, with_server_errors,
};

/// What the editor starts from: the form, the providers to choose from, the
/// form's own errors, and the errors and notice of a save that was refused.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EditorData {
    /// The form's values.
    pub form: ProfileForm,
    /// The providers a candidate can use.
    pub providers: Vec<ProviderChoice>,
    /// The form's own errors ([`ProfileForm::validate`]), found by the
    /// server: the page hydrates showing them, and the browser loads the
    /// checks only when the form changes.
    pub checked: Vec<FieldError>,
    /// Field errors from the server's last answer.
    pub errors: Vec<FieldError>,
    /// A message that belongs to no field (someone saved first, ...).
    pub notice: Option<String>,
}

impl EditorData {
    /// The editor for `form`, with its own errors found now.
    pub fn new(
        form: ProfileForm,
        providers: Vec<ProviderChoice>,
        errors: Vec<FieldError>,
        notice: Option<String>,
    ) -> Self {
        Self {
            checked: form.validate(),
            form,
            providers,
            errors,
            notice,
        }
    }
}

/// Provided by the server when it renders the editor in answer to a plain
/// form post (no JavaScript): the submitted values with their errors.
#[derive(Debug, Clone)]
pub struct EditorSubmission(pub EditorData);

/// The dynamic profile editor. It renders completely on the server and
/// saves by a plain form post before hydration; after hydration it checks
/// every change with the `api` crate's checks and saves in place, both in the
/// chunk of [`on_demand::check`], which the person's first touch of the form
/// fetches.
#[component]
pub fn ProfileEditor(data: EditorData) -> impl IntoView {
    let EditorData {
        form: initial,
        providers,
        checked: own_errors,
        errors: refused,
        notice: first_notice,
    } = data;
    let form = RwSignal::new(initial.clone());
    let saved = RwSignal::new(if refused.is_empty() {
        Some(initial.clone())
    } else {
        None
    });
    // Server errors belong to the values they were given for: they show
    // until the form changes.
    let server_errors = RwSignal::new((initial.clone(), refused));
    let notice = RwSignal::new(first_notice);
    // The form's own errors, with the values they are for: the server's
    // until the first change, then the checks', run again on every change. A
    // check overtaken by a later change is dropped.
    let checked = RwSignal::new((initial, own_errors));
    let client_errors = Memo::new(move |_| checked.with(|(_, errors)| errors.clone()));
    Effect::new(move |_| {
        let current = form.get();
        if checked.with_untracked(|(given, _)| *given == current) {
            return;
        }
        leptos::task::spawn_local(async move {
            let errors = on_demand::check(current.clone(), false).await.errors;
            // `try_`: the editor may be gone (the person left) by now.
            if form.try_with_untracked(|now| *now == current) == Some(true) {
                checked.set((current, errors));
            }
        });
    });
    // The errors shown are for other values while a check runs (the first
    // one waits for the chunk).
    let checking = Memo::new(move |_| checked.with(|(given, _)| form.with(|now| now != given)));
    // The checks' chunk comes with the person's first touch of the form,
    // before the first change: a chunk that cannot be fetched (a tab left
    // open across an upgrade, `crate::missing_chunk`) then loads the page
    // again before there is an edit to lose.
    let fetch_the_checks = StoredValue::new(true);
    let touched = move || {
        if fetch_the_checks.get_value() {
            fetch_the_checks.set_value(false);
            let _ = leptos::prelude::lazy_preload!(on_demand::check);
        }
    };
    // A pristine form shows none of its own checks' errors (not even the server's
    // reading of an empty draft): a field speaks once it has been left, or after
    // the first Save. A refusal of what was sent always shows.
    let fields_left = Touched::new();
    let errors = with_server_errors(form, client_errors, server_errors, move |path| {
        fields_left.shows(path)
    });
    let context = EditorContext {
        form,
        errors,
        providers: StoredValue::new(providers),
    };
    provide_context(context);
    provide_context(FieldErrors::new(errors, ""));

    let dirty = Memo::new(move |_| saved.with(|saved| saved.as_ref() != Some(&form.get())));
    let hydrated = RwSignal::new(false);
    Effect::new(move |_| hydrated.set(true));
    guard_unsaved_changes(dirty);

    let navigate = use_navigate();
    // Checked again as sent, so a value typed just before cannot slip past.
    let save = Action::new(move |form: &ProfileForm| {
        let sent = form.clone();
        async move { (sent.clone(), on_demand::check(sent, true).await) }
    });
    Effect::new(move |_| {
        let Some((sent, checked_as_sent)) = save.value().get() else {
            return;
        };
        let Some(result) = checked_as_sent.saved else {
            // Not sent: the form had errors, which show unless it changed since.
            if form.try_with_untracked(|now| *now == sent) == Some(true) {
                checked.set((sent, checked_as_sent.errors));
            }
            return;
        };
        match result {
            Ok(stored) => {
                // A stored profile's form has its id.
                let path = stored.id.as_ref().map(|id| format!("/profiles/{id}"));
                saved.set(Some(stored.clone()));
                form.set(stored);
                notice.set(None);
                if let Some(path) = path {
                    navigate(&path, NavigateOptions::default());
                }
            }
            Err(error @ ApiError::Invalid { .. }) => {
                server_errors.set((sent, error.field_errors().to_vec()));
                notice.set(Some(error.to_string()));
            }
            Err(other) => notice.set(Some(other.to_string())),
        }
    });
    let submit = move || {
        save.dispatch(form.get_untracked());
    };

    let action_path = move || match form.with(|form| form.id.clone()) {
        Some(id) => format!("/profiles/{id}"),
        None => "/profiles/new".to_owned(),
    };
    let keys = move || form.with(|form| form.candidates.iter().map(|c| c.key).collect::<Vec<_>>());
    let name = Signal::derive(move || form.with(|form| form.name.clone()));
    let name_invalid = move || context.error_for("name").is_some();
    let deadline = Signal::derive(move || form.with(|form| form.gateway_deadline_s.clone()));
    let invalid_count = move || errors.with(Vec::len);
    let cannot_save = move || hydrated.get() && (invalid_count() > 0 || save.pending().get());
    // Errors no input shows (the candidate list itself, a conflict, ...).
    let unplaced = move || {
        errors.with(|errors| {
            errors
                .iter()
                .filter(|error| {
                    error.field == "candidates"
                        || error.field.is_empty()
                        || error.field.ends_with(".policy")
                })
                .map(|error| {
                    let field = if error.field.is_empty() {
                        "profile".to_owned()
                    } else {
                        error.field.clone()
                    };
                    format!("{field}: {}", error.message)
                })
                .collect::<Vec<_>>()
        })
    };

    view! {
        <form
            class="profile-editor"
            method="post"
            action=action_path
            novalidate
            on:focusin=move |_| touched()
            on:pointerdown=move |_| touched()
            // Every input's id is its field's path (`components::input_id`).
            on:focusout=move |ev| {
                let left = event_target::<leptos::web_sys::Element>(&ev).id();
                if let Some(path) = left.strip_prefix("f-") {
                    fields_left.leave(path);
                }
            }
            on:submit=move |ev| {
                ev.prevent_default();
                fields_left.submit();
                submit();
            }
        >
            <input type="hidden" name="id" value=move || form.with(|f| f.id.as_ref().map(ToString::to_string).unwrap_or_default()) />
            <input
                type="hidden"
                name="revision"
                value=move || form.with(|f| f.revision.map(|r| r.to_string()).unwrap_or_default())
            />
            <div class="editor-bar">
                <div class="field name-field">
                    <label for=input_id("name")>"Name"</label>
                    <input
                        type="text"
                        id=input_id("name")
                        name="name"
                        autocomplete="off"
                        value=move || name.get()
                        prop:value=move || name.get()
                        aria-invalid=move || name_invalid().then_some("true")
                        aria-describedby=move || name_invalid().then(|| message_id("name"))
                        on:input=move |ev| form.update(|form| form.name = event_target_value(&ev))
                    />
                    <FieldMessage path="name" />
                </div>
                <div class="save">
                    <button type="submit" class="primary" disabled=cannot_save>
                        "Save"
                    </button>
                    <p class="save-state" role="status">
                        {move || {
                            if save.pending().get() {
                                "Saving…".to_owned()
                            } else if checking.get() {
                                "Checking…".to_owned()
                            } else if hydrated.get() && invalid_count() > 0 {
                                format!("{} to fix before saving", plural(invalid_count(), "field"))
                            } else if dirty.get() {
                                "Unsaved changes".to_owned()
                            } else {
                                "All changes saved".to_owned()
                            }
                        }}
                    </p>
                </div>
            </div>
            <Show when=move || notice.with(Option::is_some)>
                <p class="notice" role="alert">{move || notice.get()}</p>
            </Show>
            <Show when=move || !unplaced().is_empty()>
                <ul class="notice" role="alert">
                    {move || unplaced().into_iter().map(|line| view! { <li>{line}</li> }).collect_view()}
                </ul>
            </Show>
            <Show when=move || context.providers.with_value(Vec::is_empty)>
                <p class="notice">
                    "No providers yet: " <a href="/providers">"add a provider"</a>
                    " first, then choose it for each candidate."
                </p>
            </Show>
            <div class="candidates">
                <For each=keys key=|key| *key let:key>
                    <CandidateCard key=key />
                </For>
            </div>
            <OpButton label="Add candidate" class="add-candidate" op=EditOp::Add unavailable=false />
            <NumberField
                label="Gateway deadline (s)"
                path="gateway_deadline_s"
                value=deadline
                on_input=Callback::new(move |value| form.update(|form| form.gateway_deadline_s = value))
                min=1
                max=u64::from(api::GATEWAY_DEADLINE_S_MAX)
            />
            <p class="hint">
                "How long a call through the gateway may wait for its answer when its client does not say; empty for the server's 120 s."
            </p>
        </form>
    }
    .into_any()
}

fn plural(count: usize, noun: &str) -> String {
    if count == 1 {
        format!("1 {noun}")
    } else {
        format!("{count} {noun}s")
    }
}
