use leptos::prelude::*;
use leptos_meta::Title;

use crate::components::ErrorNotice;
use crate::providers::{ProviderForm, ProviderFormView, ProviderSubmission};
use crate::server_fns::{ProvidersData, list_providers};
use api::{KeyEnvRules, ProviderView};

/// Providers: each with its kind, family, base URL and key variable (and
/// whether that variable is set on the server); add and edit them.
#[component]
pub fn ProvidersPage() -> impl IntoView {
    // Only on the server, answering a plain form post.
    let submission = use_context::<ProviderSubmission>();
    let data = Resource::new(|| (), |_| list_providers());
    let on_saved = Callback::new(move |_: ProviderView| data.refetch());
    view! {
        <Title text="Providers" />
        <h1>"Providers"</h1>
        <p class="lede">
            "A provider is a connection to a model service. Switchback never stores a key: each provider names the environment variable that holds it on the server."
        </p>
        <Suspense fallback=|| view! { <p>"Loading…"</p> }>
            {move || {
                let submission = submission.clone();
                data.get()
                    .map(move |result| match result {
                        Ok(ProvidersData { providers, key_envs }) => {
                            let (add_form, add_errors, add_notice) = match &submission {
                                Some(sent) if sent.form.id.is_none() => {
                                    (sent.form.clone(), sent.errors.clone(), sent.notice.clone())
                                }
                                _ => (ProviderForm::new_provider(), Vec::new(), None),
                            };
                            view! {
                                <Show when={
                                    let empty = providers.is_empty();
                                    move || empty
                                }>
                                    <p class="empty">"No providers yet."</p>
                                </Show>
                                <ul class="provider-list">
                                    {providers
                                        .into_iter()
                                        .map(|provider| {
                                            let sent = submission
                                                .as_ref()
                                                .filter(|sent| sent.form.id.as_ref() == Some(&provider.id))
                                                .cloned();
                                            view! {
                                                <ProviderItem
                                                    provider
                                                    sent
                                                    key_envs=key_envs.clone()
                                                    on_saved
                                                />
                                            }
                                        })
                                        .collect_view()}
                                </ul>
                                <section class="card" aria-labelledby="add-provider">
                                    <h2 id="add-provider">"Add a provider"</h2>
                                    <ProviderFormView
                                        initial=add_form
                                        refused=add_errors
                                        first_notice=add_notice
                                        key_envs
                                        on_saved
                                    />
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

#[component]
fn ProviderItem(
    provider: ProviderView,
    sent: Option<ProviderSubmission>,
    key_envs: KeyEnvRules,
    on_saved: Callback<ProviderView>,
) -> impl IntoView {
    let key = match (&provider.api_key_env, provider.api_key_env_set) {
        (Some(name), true) => format!("{name} (set on the server)"),
        (Some(name), false) => format!("{name} (not set on the server)"),
        (None, _) => "no key".to_owned(),
    };
    let key_class = if provider.api_key_env.is_some() && !provider.api_key_env_set {
        "key missing"
    } else {
        "key"
    };
    let (initial, refused, notice, open) = match sent {
        Some(sent) => (sent.form, sent.errors, sent.notice, true),
        None => (ProviderForm::from_view(&provider), Vec::new(), None, false),
    };
    let heading_id = format!("provider-{}", provider.id);
    let item_label = heading_id.clone();
    view! {
        <li class="card provider-item" aria-labelledby=item_label>
            <h2 id=heading_id>{provider.name.clone()}</h2>
            <dl class="facts">
                <dt>"Kind"</dt><dd>{provider.kind.as_str()}</dd>
                <dt>"Error family"</dt><dd>{provider.family.as_str()}</dd>
                <dt>"Base URL"</dt><dd>{if provider.base_url.is_empty() { "none".to_owned() } else { provider.base_url.clone() }}</dd>
                <dt>"Key variable"</dt><dd class=key_class>{key}</dd>
            </dl>
            <details open=open>
                <summary>"Edit " {provider.name.clone()}</summary>
                <ProviderFormView initial refused first_notice=notice key_envs on_saved />
            </details>
        </li>
    }
    .into_any()
}
