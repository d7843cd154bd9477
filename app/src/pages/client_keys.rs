use api::{
    ApiError, ClientKeyCreated, ClientKeyId, ClientKeyRequest, ClientKeyView, FieldError,
    ProfileId, Timestamp,
};
use leptos::prelude::*;
use leptos_meta::Title;
use serde::{Deserialize, Serialize};

use crate::components::{ErrorNotice, FieldErrors, FieldMessage, input_id, with_server_errors};
use crate::server_fns::{
    ClientKeysData, ProfileChoice, create_client_key, list_client_keys, revoke_client_key,
};

/// Provided by the server when it renders this page in answer to a plain form
/// post: what was sent and why it was refused, or the key it made.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClientKeySubmission {
    /// What was sent.
    pub request: ClientKeyRequest,
    /// Why it was refused.
    pub errors: Vec<FieldError>,
    /// A message that belongs to no field.
    pub notice: Option<String>,
    /// The key made, shown this once.
    pub created: Option<ClientKeyCreated>,
}

/// Client keys: who may call the gateway, for which profiles. Make one (its
/// key is shown once), or revoke one.
#[component]
pub fn ClientKeysPage() -> impl IntoView {
    // Only on the server, answering a plain form post; it reaches the browser
    // inside the resource, so both render the same page.
    let submission = use_context::<ClientKeySubmission>();
    let data = Resource::new(
        || (),
        move |_| {
            let submission = submission.clone();
            async move { Ok::<_, ApiError>((list_client_keys().await?, submission)) }
        },
    );
    // A key made on this page, shown until the page is left: nothing can show
    // it again.
    let created = RwSignal::new(None::<ClientKeyCreated>);
    let on_created = Callback::new(move |made: ClientKeyCreated| {
        created.set(Some(made));
        data.refetch();
    });
    let on_revoked = Callback::new(move |_: ClientKeyView| data.refetch());
    view! {
        <Title text="Client keys" />
        <h1>"Client keys"</h1>
        <p class="lede">
            "A client key lets a program that speaks OpenAI's or Anthropic's protocol call Switchback's gateway, with a profile's name as its model, and only the profiles chosen for the key. Switchback keeps only a digest of each key: a key is shown once, when it is made."
        </p>
        <Suspense fallback=|| view! { <p>"Loading…"</p> }>
            {move || {
                data.get()
                    .map(move |result| match result {
                        Ok((ClientKeysData { keys, profiles }, submission)) => {
                            // A plain post comes back with the key it made, or
                            // with what was sent and why it was refused.
                            let (posted, sent) = match submission {
                                Some(sent) if sent.created.is_some() => (sent.created, None),
                                sent => (None, sent),
                            };
                            let made = created.get().or(posted);
                            view! {
                                {made.map(|made| view! { <NewKey made /> })}
                                <Show when={
                                    let empty = keys.is_empty();
                                    move || empty
                                }>
                                    <p class="empty">"No client keys yet."</p>
                                </Show>
                                <ul class="key-list">
                                    {keys
                                        .into_iter()
                                        .map(|key| {
                                            view! { <KeyItem key profiles=profiles.clone() on_revoked /> }
                                        })
                                        .collect_view()}
                                </ul>
                                <section class="card" aria-labelledby="make-key">
                                    <h2 id="make-key">"Make a key"</h2>
                                    <KeyForm profiles sent on_created />
                                </section>
                            }
                                .into_any()
                        }
                        Err(error) => view! { <ErrorNotice error /> }.into_any(),
                    })
            }}
        </Suspense>
    }
    .into_any()
}

/// The key just made, with how a client takes it.
#[component]
fn NewKey(made: ClientKeyCreated) -> impl IntoView {
    let key = made.key;
    let openai = format!("openai.OpenAI(base_url=\"http://HOST/v1\", api_key=\"{key}\")");
    let anthropic = format!("anthropic.Anthropic(base_url=\"http://HOST\", api_key=\"{key}\")");
    view! {
        <section class="card new-key" aria-labelledby="new-key">
            <h2 id="new-key">"The key for " {made.client_key.name}</h2>
            <p role="status">"Key made. Copy it now: it is not shown again."</p>
            <p><code class="secret" data-testid="new-key">{key}</code></p>
            <p>"A client takes it with this server's address (HOST) as its base URL, followed by /v1 for OpenAI's clients:"</p>
            <p class="setup"><code>{openai}</code></p>
            <p class="setup"><code>{anthropic}</code></p>
        </section>
    }
    .into_any()
}

/// One key: its name, first characters, profiles and dates, and Revoke while it works.
#[component]
fn KeyItem(
    key: ClientKeyView,
    profiles: Vec<ProfileChoice>,
    on_revoked: Callback<ClientKeyView>,
) -> impl IntoView {
    let names = key
        .profile_ids
        .iter()
        .map(|id| {
            profiles
                .iter()
                .find(|profile| &profile.id == id)
                .map_or_else(
                    || format!("a deleted profile ({id})"),
                    |profile| profile.name.clone(),
                )
        })
        .collect::<Vec<_>>()
        .join(", ");
    let heading_id = format!("key-{}", key.id);
    let item_label = heading_id.clone();
    let revoke = Action::new(move |id: &ClientKeyId| revoke_client_key(id.clone()));
    let failed = RwSignal::new(None::<String>);
    Effect::new(move |_| match revoke.value().get() {
        Some(Ok(view)) => on_revoked.run(view),
        Some(Err(error)) => failed.set(Some(error.to_string())),
        None => {}
    });
    let id = key.id.clone();
    let status = match key.revoked_at {
        Some(at) => view! { <dd class="revoked">"Revoked " {day_and_time(at)}</dd> }.into_any(),
        None => view! { <dd>"Works"</dd> }.into_any(),
    };
    let revocable = key.revoked_at.is_none();
    view! {
        <li class="card key-item" aria-labelledby=item_label>
            <h2 id=heading_id>{key.name.clone()}</h2>
            <dl class="facts">
                <dt>"Key"</dt><dd><code>{format!("{}…", key.prefix)}</code></dd>
                <dt>"Profiles"</dt><dd>{names}</dd>
                <dt>"Made"</dt><dd>{day_and_time(key.created_at)}</dd>
                <dt>"Status"</dt>{status}
            </dl>
            <Show when=move || revocable>
                <form
                    method="post"
                    action=format!("/client-keys/{}/revoke", key.id)
                    on:submit={
                        let id = id.clone();
                        move |ev| {
                            ev.prevent_default();
                            failed.set(None);
                            revoke.dispatch(id.clone());
                        }
                    }
                >
                    <button type="submit" class="danger" disabled=move || revoke.pending().get()>
                        "Revoke " {key.name.clone()}
                    </button>
                </form>
            </Show>
            <Show when=move || failed.with(Option::is_some)>
                <p class="notice" role="alert">{move || failed.get()}</p>
            </Show>
        </li>
    }
    .into_any()
}

/// "2026-12-06 09:45 UTC".
fn day_and_time(at: Timestamp) -> String {
    let text = at.to_string();
    match (text.get(..10), text.get(11..16)) {
        (Some(day), Some(time)) => format!("{day} {time} UTC"),
        _ => text,
    }
}

/// Name a key and choose its profiles. Posts as a plain form before hydration;
/// after, makes the key in place, or shows the server's errors at their fields.
#[component]
fn KeyForm(
    profiles: Vec<ProfileChoice>,
    sent: Option<ClientKeySubmission>,
    on_created: Callback<ClientKeyCreated>,
) -> impl IntoView {
    let (initial, refused, first_notice) = match sent {
        Some(sent) => (sent.request, sent.errors, sent.notice),
        None => (ClientKeyRequest::default(), Vec::new(), None),
    };
    // The server checks the request (the same `ClientKeyRequest::check` as the
    // API): a form nobody has sent shows no errors, and the page's bundle
    // stays without the checks' code.
    let form = RwSignal::new(initial.clone());
    let server_errors = RwSignal::new((initial, refused));
    let client_errors = Memo::new(|_| Vec::new());
    let errors = with_server_errors(form, client_errors, server_errors, |_| true);
    provide_context(FieldErrors::new(errors, "key-"));
    let notice = RwSignal::new(first_notice);
    let make = Action::new(move |request: &ClientKeyRequest| create_client_key(request.clone()));
    Effect::new(move |_| match make.value().get() {
        Some(Ok(made)) => {
            notice.set(None);
            form.set(ClientKeyRequest::default());
            on_created.run(made);
        }
        Some(Err(ApiError::Invalid { errors })) => {
            // A profile that went away since the page loaded has no field here.
            notice.set(unplaced(&errors));
            server_errors.set((form.get_untracked(), errors));
        }
        Some(Err(other)) => notice.set(Some(other.to_string())),
        None => {}
    });
    let invalid = move |field: &'static str| {
        move || errors.with(|errors| errors.iter().any(|error| error.field == field))
    };
    let name_id = format!("key-{}", input_id("name"));
    let no_profiles = profiles.is_empty();
    view! {
        <form
            class="key-form"
            method="post"
            action="/client-keys"
            novalidate
            on:submit=move |ev| {
                ev.prevent_default();
                make.dispatch(form.get_untracked());
            }
        >
            <div class="field">
                <label for=name_id.clone()>"Name"</label>
                <input
                    type="text"
                    id=name_id
                    name="name"
                    autocomplete="off"
                    value=move || form.with(|form| form.name.clone())
                    prop:value=move || form.with(|form| form.name.clone())
                    aria-invalid=move || invalid("name")().then_some("true")
                    aria-describedby=move || described("key-name-hint", "name", invalid("name")())
                    on:input=move |ev| form.update(|form| form.name = event_target_value(&ev))
                />
                <p class="hint" id="key-name-hint">"Who or what uses it, such as \"aider on the laptop\"."</p>
                <FieldMessage path="name" />
            </div>
            <div
                class="field"
                role="group"
                aria-labelledby="key-profiles"
                aria-invalid=move || invalid("profile_ids")().then_some("true")
                aria-describedby=move || invalid("profile_ids")().then_some("key-f-profile_ids-error")
            >
                <p class="label" id="key-profiles">"Profiles it may use"</p>
                <Show when=move || no_profiles>
                    <p class="empty">"No profiles yet: make one first."</p>
                </Show>
                {profiles
                    .into_iter()
                    .map(|profile| {
                        let id = profile.id.clone();
                        let checked = {
                            let id = id.clone();
                            move || form.with(|form| form.profile_ids.contains(&id))
                        };
                        view! {
                            <label class="check">
                                <input
                                    type="checkbox"
                                    name="profile_ids"
                                    value=id.to_string()
                                    checked=checked.clone()
                                    prop:checked=checked
                                    on:change=move |ev| {
                                        let on = event_target_checked(&ev);
                                        form.update(|form| choose(&mut form.profile_ids, &id, on));
                                    }
                                />
                                <span>{profile.name}</span>
                            </label>
                        }
                    })
                    .collect_view()}
                <FieldMessage path="profile_ids" />
            </div>
            <Show when=move || notice.with(Option::is_some)>
                <p class="notice" role="alert">{move || notice.get()}</p>
            </Show>
            <button type="submit" disabled=move || make.pending().get()>"Make key"</button>
        </form>
    }
    .into_any()
}

/// The messages of errors no field of the form shows (one profile of several
/// that names nothing), as one sentence.
pub fn unplaced(errors: &[FieldError]) -> Option<String> {
    let messages: Vec<String> = errors
        .iter()
        .filter(|error| error.field != "name" && error.field != "profile_ids")
        .map(|error| format!("{}: {}", error.field, error.message))
        .collect();
    (!messages.is_empty()).then(|| messages.join("; "))
}

/// The ids that describe a field: its hint, and its error while it has one.
fn described(hint: &str, field: &str, invalid: bool) -> String {
    if invalid {
        format!("{hint} key-{}", crate::components::message_id(field))
    } else {
        hint.to_owned()
    }
}

/// Add `id` to the chosen profiles, or take it out, keeping their order.
fn choose(chosen: &mut Vec<ProfileId>, id: &ProfileId, on: bool) {
    chosen.retain(|other| other != id);
    if on {
        chosen.push(id.clone());
    }
}
