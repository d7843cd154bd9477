use api::{ApiError, FieldError, KeyEnvRules, ProviderId, ProviderRequest, ProviderView};
use leptos::prelude::*;
use policy::{CliPreset, ProviderFamily, ProviderKind};

use super::form::ProviderForm;
use crate::components::{FieldErrors, FieldMessage, Touched, input_id, with_server_errors};
use crate::server_fns::save_provider;

/// Provided by the server when it renders the providers page in answer to a
/// plain form post: the submitted values and their errors.
#[derive(Debug, Clone)]
pub struct ProviderSubmission {
    /// What was sent.
    pub form: ProviderForm,
    /// Why it was refused.
    pub errors: Vec<FieldError>,
    /// A message that belongs to no field.
    pub notice: Option<String>,
}

/// Add or edit one provider. Posts as a plain form before hydration; after,
/// validates as you type and saves in place.
#[component]
pub fn ProviderFormView(
    initial: ProviderForm,
    #[prop(optional)] refused: Vec<FieldError>,
    #[prop(optional_no_strip)] first_notice: Option<String>,
    key_envs: KeyEnvRules,
    on_saved: Callback<ProviderView>,
) -> impl IntoView {
    let form = RwSignal::new(initial.clone());
    let server_errors = RwSignal::new((initial.clone(), refused));
    let keys = StoredValue::new(key_envs);
    let client_errors =
        Memo::new(move |_| form.with(|form| keys.with_value(|keys| form.validate(keys))));
    // A pristine form shows none of its own checks' errors: a field speaks once it
    // has been left, or after the first submit.
    let touched = Touched::new();
    let errors = with_server_errors(form, client_errors, server_errors, move |path| {
        touched.shows(path)
    });
    let notice = RwSignal::new(first_notice);
    let hydrated = RwSignal::new(false);
    Effect::new(move |_| hydrated.set(true));

    let is_new = initial.id.is_none();
    let save = Action::new(
        move |(id, request): &(Option<ProviderId>, ProviderRequest)| {
            save_provider(id.clone(), request.clone())
        },
    );
    Effect::new(move |_| {
        let Some(result) = save.value().get() else {
            return;
        };
        match result {
            Ok(provider) => {
                notice.set(None);
                // An add form starts over; an edit form shows what was stored.
                if is_new {
                    form.set(ProviderForm::new_provider());
                    touched.reset();
                } else {
                    form.set(ProviderForm::from_view(&provider));
                }
                on_saved.run(provider);
            }
            Err(ApiError::Invalid { errors }) => server_errors.set((form.get_untracked(), errors)),
            Err(other) => notice.set(Some(other.to_string())),
        }
    });

    let prefix = StoredValue::new(format!(
        "{}-",
        initial.id.as_ref().map_or("new", ProviderId::as_str)
    ));
    let id_of = move |field: &str| format!("{}{}", prefix.get_value(), input_id(field));
    let field_errors = FieldErrors::new(errors, prefix.get_value());
    provide_context(field_errors);
    let action = match &initial.id {
        Some(id) => format!("/providers/{id}"),
        None => "/providers".to_owned(),
    };
    let button = if initial.id.is_some() {
        "Save provider"
    } else {
        "Add provider"
    };
    let text = move |pick: fn(&ProviderForm) -> String| Signal::derive(move || form.with(pick));
    let invalid = move |field: &'static str| {
        move || errors.with(|errors| errors.iter().any(|e| e.field == field))
    };
    let kind = text(|form| form.kind.as_str().to_owned());
    let is_cli = move || form.with(|form| form.kind == ProviderKind::Cli);
    let family = text(|form| form.family.map_or("", ProviderFamily::as_str).to_owned());
    // Save is refused while errors show (a pristine form's button works, and
    // pressing it shows what is missing).
    let cannot_save =
        move || hydrated.get() && (errors.with(|e| !e.is_empty()) || save.pending().get());

    // A list's errors name an item (`cli.env[2]`): its field shows the first,
    // with the item's place.
    let list_message = move |field: &'static str| {
        move || {
            errors.with(|errors| {
                errors.iter().find_map(|error| {
                    let rest = error.field.strip_prefix(field)?;
                    let place = match rest
                        .strip_prefix('[')
                        .and_then(|rest| rest.strip_suffix(']'))
                    {
                        Some(index) => index.parse::<usize>().ok()? + 1,
                        None if rest.is_empty() => return Some(error.message.clone()),
                        None => return None,
                    };
                    Some(format!("item {place}: {}", error.message))
                })
            })
        }
    };
    let text_field = move |field: &'static str,
                           label: &'static str,
                           hint: &'static str,
                           get: fn(&ProviderForm) -> &str,
                           set: fn(&mut ProviderForm, String)| {
        let value = Signal::derive(move || form.with(|form| get(form).to_owned()));
        let input = id_of(field);
        let listed = matches!(field, "cli.command" | "cli.env");
        let message = list_message(field);
        let has_error = move || {
            if listed {
                message().is_some()
            } else {
                invalid(field)()
            }
        };
        let describedby = move || {
            let mut ids = vec![format!("{input}-hint")];
            if has_error() {
                ids.push(field_errors.message_id(field));
            }
            ids.join(" ")
        };
        let input_for_label = id_of(field);
        let input_for_hint = format!("{}-hint", id_of(field));
        let on_input = move |ev| form.update(|form| set(form, event_target_value(&ev)));
        let control = if field == "cli.command" {
            view! {
                <textarea
                    id=id_of(field)
                    name=field
                    rows="4"
                    autocomplete="off"
                    spellcheck="false"
                    placeholder=move || form.with(|form| form.cli.preset.command().join("\n"))
                    prop:value=move || value.get()
                    aria-invalid=move || has_error().then_some("true")
                    aria-describedby=describedby
                    on:input=on_input
                    on:focusout=move |_| touched.leave(field)
                >{value.get_untracked()}</textarea>
            }
            .into_any()
        } else {
            view! {
                <input
                    type="text"
                    id=id_of(field)
                    name=field
                    autocomplete="off"
                    spellcheck="false"
                    value=move || value.get()
                    prop:value=move || value.get()
                    aria-invalid=move || has_error().then_some("true")
                    aria-describedby=describedby
                    on:input=on_input
                    on:focusout=move |_| touched.leave(field)
                />
            }
            .into_any()
        };
        let error = if listed {
            view! {
                <Show when=move || message().is_some()>
                    <p class="field-error" id=field_errors.message_id(field)>{message}</p>
                </Show>
            }
            .into_any()
        } else {
            view! { <FieldMessage path=field /> }.into_any()
        };
        view! {
            <div class="field">
                <label for=input_for_label>{label}</label>
                {control}
                <p class="hint" id=input_for_hint>{hint}</p>
                {error}
            </div>
        }
    };
    let preset = text(|form| form.cli.preset.as_str().to_owned());

    view! {
        <form
            class="provider-form"
            method="post"
            action=action
            novalidate
            on:submit=move |ev| {
                ev.prevent_default();
                touched.submit();
                if client_errors.with_untracked(Vec::is_empty) {
                    let (id, request) = form.with_untracked(|form| (form.id.clone(), form.request()));
                    save.dispatch((id, request));
                }
            }
        >
            <input type="hidden" name="id" value=initial.id.as_ref().map(ProviderId::to_string).unwrap_or_default() />
            <input type="hidden" name="revision" value=move || form.with(|f| f.revision.map(|r| r.to_string()).unwrap_or_default()) />
            {text_field("name", "Name", "How profiles will show it.", |form| &form.name, |form, value| form.name = value)}
            <div class="field">
                <label for=id_of("kind")>"Kind"</label>
                <select
                    id=id_of("kind")
                    name="kind"
                    prop:value=move || kind.get()
                    on:change=move |ev| {
                        let chosen = event_target_value(&ev);
                        if let Some(kind) = ProviderKind::ALL.into_iter().find(|kind| kind.as_str() == chosen) {
                            form.update(|form| form.kind = kind);
                        }
                    }
                >
                    {ProviderKind::ALL
                        .iter()
                        .map(|option| {
                            let value = option.as_str();
                            view! { <option value=value selected=move || kind.get() == value>{kind_label(*option)}</option> }
                        })
                        .collect_view()}
                </select>
                <FieldMessage path="kind" />
            </div>
            <div class="field">
                <label for=id_of("family")>"Error family"</label>
                <select
                    id=id_of("family")
                    name="family"
                    prop:value=move || family.get()
                    on:change=move |ev| {
                        let chosen = event_target_value(&ev);
                        let family = ProviderFamily::ALL.into_iter().find(|family| family.as_str() == chosen);
                        form.update(|form| form.family = family);
                    }
                >
                    <option value="" selected=move || family.get().is_empty()>"The kind's own"</option>
                    {ProviderFamily::ALL
                        .iter()
                        .map(|option| {
                            let value = option.as_str();
                            view! { <option value=value selected=move || family.get() == value>{value}</option> }
                        })
                        .collect_view()}
                </select>
                <FieldMessage path="family" />
            </div>
            <div class="http-settings" hidden=is_cli>
                {text_field("base_url", "Base URL", "For example https://api.anthropic.com; not needed for a simulated provider.", |form| &form.base_url, |form, value| form.base_url = value)}
                {text_field(
                    "api_key_env",
                    "Key variable",
                    "The NAME of the environment variable that holds the key on the server, such as ANTHROPIC_API_KEY. The key itself is never entered here.",
                    |form| &form.api_key_env,
                    |form, value| form.api_key_env = value,
                )}
            </div>
            <fieldset class="cli-settings" hidden=move || !is_cli()>
                <legend>"Agent CLI"</legend>
                <p class="hint">"Runs this command on the server for every attempt, with only the variables listed below; saving it needs the admin token."</p>
                <div class="field">
                    <label for=id_of("cli.preset")>"Preset"</label>
                    <select
                        id=id_of("cli.preset")
                        name="cli.preset"
                        prop:value=move || preset.get()
                        on:change=move |ev| {
                            let chosen = event_target_value(&ev);
                            if let Some(preset) = CliPreset::ALL.into_iter().find(|preset| preset.as_str() == chosen) {
                                form.update(|form| form.cli.preset = preset);
                            }
                        }
                    >
                        {CliPreset::ALL
                            .iter()
                            .map(|option| {
                                let value = option.as_str();
                                view! { <option value=value selected=move || preset.get() == value>{preset_label(*option)}</option> }
                            })
                            .collect_view()}
                    </select>
                    <FieldMessage path="cli.preset" />
                </div>
                {text_field(
                    "cli.command",
                    "Command",
                    "One argument per line, no shell; {prompt} and {model} are filled in (without {prompt}, the prompt goes to stdin). Empty: the preset's, shown greyed.",
                    |form| &form.cli.command,
                    |form, value| form.cli.command = value,
                )}
                {text_field(
                    "cli.working_dir",
                    "Working directory",
                    "An absolute path, such as /srv/agent; empty: the server's.",
                    |form| &form.cli.working_dir,
                    |form, value| form.cli.working_dir = value,
                )}
                {text_field(
                    "cli.env",
                    "Variables it may see",
                    "Names, apart by spaces, such as PATH HOME; every other variable is cleared. A name that looks like a secret must be allowed with --allow-key-env.",
                    |form| &form.cli.env,
                    |form, value| form.cli.env = value,
                )}
                {text_field(
                    "cli.time_zone",
                    "Time zone",
                    "The zone its printed resets (\"resets 3pm\") are read in, such as Europe/Berlin; empty: the server's.",
                    |form| &form.cli.time_zone,
                    |form, value| form.cli.time_zone = value,
                )}
            </fieldset>
            <Show when=move || notice.with(Option::is_some)>
                <p class="notice" role="alert">{move || notice.get()}</p>
            </Show>
            <button type="submit" class="primary" disabled=cannot_save>{button}</button>
        </form>
    }
    .into_any()
}

fn kind_label(kind: ProviderKind) -> &'static str {
    match kind {
        ProviderKind::Anthropic => "Anthropic (Messages API)",
        ProviderKind::Openai => "OpenAI (Chat Completions)",
        ProviderKind::OpenaiCompatible => "OpenAI-compatible server",
        ProviderKind::Simulated => "Simulated (demos and tests)",
        ProviderKind::Cli => "Agent CLI (a program on this server)",
    }
}

fn preset_label(preset: CliPreset) -> &'static str {
    match preset {
        CliPreset::ClaudeCode => "Claude Code",
        CliPreset::Codex => "Codex",
        CliPreset::GeminiCli => "Gemini CLI",
        CliPreset::Generic => "Another command (plain stdout)",
    }
}
