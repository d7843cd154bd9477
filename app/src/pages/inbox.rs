use api::{ApiError, InboxGroup, ReclassifyView, Timestamp, VerdictView};
use leptos::prelude::*;
use leptos_meta::Title;
use leptos_router::hooks::use_query_map;

use crate::components::ErrorNotice;
use crate::server_fns::{InboxData, load_inbox};

/// The catalogue's inbox: the failures it was unsure of, grouped by provider and
/// message, each with a link to its tasks and its evidence as a fixture file;
/// and, on request, what the current catalogue reads differently in the
/// evidence stored with past attempts.
#[component]
pub fn InboxPage() -> impl IntoView {
    let query = use_query_map();
    let reclassify = move || query.with(|query| query.get("reclassify").is_some());
    let data = Resource::new(reclassify, load_inbox);
    view! {
        <Title text="Catalogue inbox" />
        <h1>"Catalogue inbox"</h1>
        <p class="lede">
            "Failures the error catalogue was unsure of: read as unknown (the route stopped for a person), with low confidence (its rules disagreed), or with medium confidence (only plain words any provider may use decided). Each kind is listed once, with its tasks and its evidence ready to become a fixture of the catalogue's tests."
        </p>
        <form method="get" action="/inbox" class="reclassify">
            <input type="hidden" name="reclassify" value="1" />
            <button type="submit">"Read stored failures again"</button>
            <span class="hint">" with the current catalogue: see what it would now read differently. Nothing changes."</span>
        </form>
        <Suspense fallback=|| view! { <p>"Loading…"</p> }>
            {move || {
                data.get()
                    .map(|result: Result<InboxData, ApiError>| match result {
                        Ok(InboxData { inbox, reclassified }) => view! {
                            {reclassified.map(|view| view! { <Reclassified view /> })}
                            <p class="counts">
                                {format!(
                                    "{} kinds of failure in the latest {} unsure attempts.",
                                    inbox.groups.len(),
                                    inbox.attempts_read
                                )}
                            </p>
                            <Show when={
                                let empty = inbox.groups.is_empty();
                                move || empty
                            }>
                                <p class="empty">"Nothing waits here: every failure so far was read with confidence."</p>
                            </Show>
                            <ul class="inbox-list">
                                {inbox.groups.into_iter().map(|group| view! { <Group group /> }).collect_view()}
                            </ul>
                        }
                        .into_any(),
                        Err(error) => view! { <ErrorNotice error /> }.into_any(),
                    })
            }}
        </Suspense>
    }
}

/// One kind of failure.
#[component]
fn Group(group: InboxGroup) -> impl IntoView {
    let heading = format!("{} × {}", group.count, group.provider);
    let fixture = serde_json::to_string_pretty(&group.fixture).unwrap_or_default();
    view! {
        <li class="card inbox-group">
            <h2>{heading}</h2>
            <p class="message">{group.message}</p>
            <dl class="facts">
                <dt>"Read as"</dt>
                <dd>{verdict_words(&group.verdict)}</dd>
                <dt>"Family"</dt>
                <dd>{group.family}</dd>
                <dt>"Last seen"</dt>
                <dd><time datetime=group.last_seen.to_string()>{when(group.last_seen)}</time></dd>
                <dt>"Tasks"</dt>
                <dd>
                    <ul class="inline-list">
                        {group
                            .task_ids
                            .into_iter()
                            .map(|id| {
                                let href = format!("/tasks/{id}");
                                view! { <li><a href=href>{id.to_string()}</a></li> }
                            })
                            .collect_view()}
                    </ul>
                </dd>
            </dl>
            <details>
                <summary>"Export as fixture"</summary>
                <p class="hint">"Save as fixtures/providers/FAMILY/NAME.json, fill in the page it came from (source) and what it means (expected code and class)."</p>
                <pre class="fixture">{fixture}</pre>
            </details>
        </li>
    }
}

/// What the current catalogue reads differently.
#[component]
fn Reclassified(view: ReclassifyView) -> impl IntoView {
    let summary = format!(
        "Catalogue {} read the latest {} stored failures again: {} would now be read differently.",
        view.catalogue,
        view.checked,
        view.changes.len()
    );
    view! {
        <section class="card reclassified" aria-labelledby="reclassified">
            <h2 id="reclassified">"Read again"</h2>
            <p role="status">{summary}</p>
            <ul>
                {view
                    .changes
                    .into_iter()
                    .map(|change| {
                        let href = format!("/tasks/{}", change.task_id);
                        let words = format!(
                            "{} → {}",
                            verdict_words(&change.before),
                            verdict_words(&change.after)
                        );
                        view! { <li><a href=href>{change.task_id.to_string()}</a>": "{words}</li> }
                    })
                    .collect_view()}
            </ul>
        </section>
    }
}

/// "insufficient_credits (hard), medium confidence, by words.credits, catalogue 2026.12.4".
fn verdict_words(verdict: &VerdictView) -> String {
    format!(
        "{} ({}), {} confidence, by {}, catalogue {}",
        verdict.code.as_str(),
        verdict.class.as_str(),
        verdict.confidence.as_str(),
        verdict.rule,
        verdict.catalogue
    )
}

/// "2026-12-06 19:40 UTC".
fn when(at: Timestamp) -> String {
    let text = at.to_string();
    match text.get(..16) {
        Some(minute) => format!("{} UTC", minute.replace('T', " ")),
        None => text,
    }
}
