//! How an open circuit reads wherever it is listed (the home page, the circuits
//! page): its badge and what it covers, and when it half-opens, on the page's
//! clock.

use api::{CircuitView, Timestamp};
use leptos::prelude::*;

use crate::tasks::words::{clock_time, relative};

/// What a circuit covers, for people: "Claude Code (every model)".
fn over_words(provider: &str, model: Option<&str>) -> String {
    match model {
        Some(model) => format!("{provider}: {model}"),
        None => format!("{provider} (every model)"),
    }
}

/// The circuit's title line: "Open" or "Half-open" (once its time has come, on
/// the page's clock as on the server's), and what it covers. `id` names the
/// line for the item that it labels.
#[component]
pub fn CircuitTitle(
    circuit: CircuitView,
    now: Signal<Timestamp>,
    #[prop(optional, into)] id: Option<String>,
) -> impl IntoView {
    let over = over_words(&circuit.provider, circuit.model.as_deref());
    let until = circuit.until;
    let read_half_open = circuit.half_open;
    let half_open = move || read_half_open || until.as_millis() <= now.get().as_millis();
    view! {
        <p class="task-title" id=id>
            <span class=move || if half_open() { "badge state-retrying" } else { "badge state-waiting_for_reset" }>
                {move || if half_open() { "Half-open" } else { "Open" }}
            </span>
            " " {over}
        </p>
    }
}

/// When the circuit half-opens: "reopens in 3 min (14:05)", or "one route may
/// probe it now (14:05)" once that time has come.
#[component]
pub fn CircuitReopens(until: Timestamp, now: Signal<Timestamp>) -> impl IntoView {
    view! {
        {move || {
            if until.as_millis() <= now.get().as_millis() {
                "one route may probe it now".to_owned()
            } else {
                format!("reopens {}", relative(until, now.get()))
            }
        }}
        " (" <time datetime=until.to_string()>{clock_time(until)}</time> ")"
    }
}
