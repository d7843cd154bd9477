//! Labelled inputs that show their field's error, found by field path. A
//! form provides its [`FieldErrors`] as context; every field inside reads it.

use leptos::prelude::*;
use policy::FieldError;

/// The errors of the enclosing form, addressed by field path, and the prefix
/// that keeps its element ids unique when a page holds several forms.
#[derive(Clone, Copy)]
pub struct FieldErrors {
    errors: Memo<Vec<FieldError>>,
    id_prefix: StoredValue<String>,
}

impl FieldErrors {
    /// The errors of a form whose element ids start with `id_prefix`.
    pub fn new(errors: Memo<Vec<FieldError>>, id_prefix: impl Into<String>) -> Self {
        Self {
            errors,
            id_prefix: StoredValue::new(id_prefix.into()),
        }
    }

    /// The DOM id of the message for `path` in this form.
    pub fn message_id(&self, path: &str) -> String {
        format!("{}{}", self.id_prefix.get_value(), message_id(path))
    }

    /// The enclosing form's errors.
    pub fn get() -> Self {
        expect_context::<Self>()
    }

    /// The first error message for `path`, if any.
    pub fn message_for(&self, path: &str) -> Option<String> {
        self.errors.with(|errors| {
            errors
                .iter()
                .find(|error| error.field == path)
                .map(|error| error.message.clone())
        })
    }
}

/// A form's errors: the server's last refusal while the form still holds the
/// values the server refused, then those of its own validation that `shows` lets
/// through (a field not yet left shows none of them: see [`Touched`]).
pub fn with_server_errors<F: PartialEq + Send + Sync + 'static>(
    form: RwSignal<F>,
    client_errors: Memo<Vec<FieldError>>,
    server_errors: RwSignal<(F, Vec<FieldError>)>,
    shows: impl Fn(&str) -> bool + Send + Sync + 'static,
) -> Memo<Vec<FieldError>> {
    Memo::new(move |_| {
        // The server's verdict on what was sent comes first: a field shows its
        // first message, and the refusal is what the person needs to read.
        let mut errors: Vec<FieldError> = server_errors.with(|(given, server)| {
            if form.with(|form| form == given) {
                server.clone()
            } else {
                Vec::new()
            }
        });
        client_errors.with(|client| {
            for error in client {
                if shows(error.field.as_str()) && !errors.contains(error) {
                    errors.push(error.clone());
                }
            }
        });
        errors
    })
}

/// Which fields of a form a person has left, and whether they pressed its submit
/// button: a form's own checks speak only there, so a pristine form shows no
/// errors; a field is checked once it has been left, or after the first submit,
/// then on every keystroke.
#[derive(Debug, Clone, Copy)]
pub struct Touched {
    left: RwSignal<Vec<String>>,
    submitted: RwSignal<bool>,
}

impl Default for Touched {
    fn default() -> Self {
        Self::new()
    }
}

impl Touched {
    /// Nothing left, nothing submitted.
    pub fn new() -> Self {
        Self {
            left: RwSignal::new(Vec::new()),
            submitted: RwSignal::new(false),
        }
    }

    /// The field at `path` was left.
    pub fn leave(self, path: &str) {
        if !self
            .left
            .with_untracked(|left| left.iter().any(|done| done == path))
        {
            self.left.update(|left| left.push(path.to_owned()));
        }
    }

    /// The form starts over, pristine (an add form after it added).
    pub fn reset(self) {
        self.left.set(Vec::new());
        self.submitted.set(false);
    }

    /// The submit button was pressed: every field speaks from now on.
    pub fn submit(self) {
        self.submitted.set(true);
    }

    /// Whether an error at `path` shows: its field was left (for an item of a
    /// list, `cli.env[2]`, the list's field), or the form was submitted.
    pub fn shows(self, path: &str) -> bool {
        self.submitted.get()
            || self.left.with(|left| {
                left.iter().any(|done| {
                    path.strip_prefix(done.as_str()).is_some_and(|rest| {
                        rest.is_empty() || rest.starts_with('[') || rest.starts_with('.')
                    })
                })
            })
    }
}

/// The DOM id of the input for `path`.
pub fn input_id(path: &str) -> String {
    format!("f-{path}")
}

/// The DOM id of the message for `path`.
pub fn message_id(path: &str) -> String {
    format!("f-{path}-error")
}

/// The error under an input, when its field has one.
#[component]
pub fn FieldMessage(#[prop(into)] path: Signal<String>) -> impl IntoView {
    let errors = FieldErrors::get();
    let message = move || errors.message_for(&path.get());
    view! {
        <Show when=move || message().is_some()>
            <p class="field-error" id=move || errors.message_id(&path.get())>
                {message}
            </p>
        </Show>
    }
    .into_any()
}

/// A labelled number input bound to one field of the form.
#[component]
pub fn NumberField(
    label: &'static str,
    #[prop(into)] path: Signal<String>,
    #[prop(into)] value: Signal<String>,
    on_input: Callback<String>,
    min: u64,
    max: u64,
) -> impl IntoView {
    let errors = FieldErrors::get();
    let invalid = move || errors.message_for(&path.get()).is_some();
    view! {
        <div class="field">
            <label for=move || input_id(&path.get())>{label}</label>
            <input
                type="number"
                inputmode="numeric"
                min=min
                max=max
                step="1"
                id=move || input_id(&path.get())
                name=move || path.get()
                value=move || value.get()
                prop:value=move || value.get()
                aria-invalid=move || invalid().then_some("true")
                aria-describedby=move || invalid().then(|| errors.message_id(&path.get()))
                on:input=move |ev| on_input.run(event_target_value(&ev))
            />
            <FieldMessage path=path />
        </div>
    }
    .into_any()
}

/// A checkbox with its label, bound to one boolean of the form.
#[component]
pub fn CheckField(
    label: &'static str,
    #[prop(into)] path: Signal<String>,
    #[prop(into)] checked: Signal<bool>,
    on_change: Callback<bool>,
) -> impl IntoView {
    view! {
        <label class="check">
            <input
                type="checkbox"
                name=move || path.get()
                checked=move || checked.get()
                prop:checked=move || checked.get()
                on:change=move |ev| on_change.run(event_target_checked(&ev))
            />
            <span>{label}</span>
        </label>
    }
    .into_any()
}
