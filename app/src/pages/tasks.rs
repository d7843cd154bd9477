use leptos::prelude::*;
use leptos_meta::Title;

/// The task list with each task's route.
#[component]
pub fn TasksPage() -> impl IntoView {
    view! {
        <Title text="Tasks" />
        <h1>"Tasks"</h1>
        <p>"Each task moves through its profile's candidates; its route shows every decision."</p>
        <p class="empty">"No tasks yet."</p>
    }
}
