use leptos::prelude::*;
use leptos_meta::Title;

use crate::components::ErrorNotice;
use crate::editor::policy_summary;
use crate::server_fns::list_profiles;
use api::{ProfileView, ProviderView};

/// The dynamic profiles list: each profile with its candidates in order and
/// a line on each candidate's policy.
#[component]
pub fn ProfilesPage() -> impl IntoView {
    let profiles = Resource::new(|| (), |_| list_profiles());
    view! {
        <Title text="Dynamic profiles" />
        <div class="page-heading">
            <h1>"Dynamic profiles"</h1>
            <a class="button primary" href="/profiles/new">"New dynamic profile"</a>
        </div>
        <p class="lede">
            "A dynamic profile is an ordered list of candidate models. Each candidate has its own recovery policy: what to do about transient errors and about hard ones."
        </p>
        <Suspense fallback=|| view! { <p>"Loading…"</p> }>
            {move || {
                profiles
                    .get()
                    .map(|result| match result {
                        Ok((profiles, providers)) if profiles.is_empty() => {
                            let _ = providers;
                            view! { <p class="empty">"No dynamic profiles yet."</p> }.into_any()
                        }
                        Ok((profiles, providers)) => {
                            view! {
                                <ul class="profile-list">
                                    {profiles
                                        .into_iter()
                                        .map(|profile| view! { <ProfileItem profile providers=providers.clone() /> })
                                        .collect_view()}
                                </ul>
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
fn ProfileItem(profile: ProfileView, providers: Vec<ProviderView>) -> impl IntoView {
    let provider_name = move |id: &str| {
        providers
            .iter()
            .find(|provider| provider.id.as_str() == id)
            .map(|provider| provider.name.clone())
            .unwrap_or_else(|| "missing provider".to_owned())
    };
    view! {
        <li class="card profile-item">
            <h2><a href=format!("/profiles/{}", profile.id)>{profile.name.clone()}</a></h2>
            <ol class="candidate-summaries">
                {profile
                    .candidates
                    .iter()
                    .map(|candidate| {
                        let state = if candidate.enabled { "" } else { " (disabled)" };
                        view! {
                            <li>
                                <span class="model">{candidate.model.clone()}</span>
                                " on " {provider_name(candidate.provider_id.as_str())} {state} <br />
                                <span class="summary">{policy_summary(&candidate.policy)}</span>
                            </li>
                        }
                    })
                    .collect_view()}
            </ol>
        </li>
    }
    .into_any()
}
