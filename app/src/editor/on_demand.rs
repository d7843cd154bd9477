//! The editor's work that waits for the person: checking the form once it
//! changes, and saving it. In the browser it is one lazy function (Leptos's
//! `#[lazy]`), which `scripts/build-site`'s splitter moves into a chunk of its
//! own, fetched when the person first touches the form: opening the editor
//! does not load it. On the server it is a plain function.
//!
//! The page hydrates with the errors the server found in the form it sent
//! ([`super::EditorData::checked`]), so the browser needs the checks only once
//! something has changed. Checking and saving are one function, and so one
//! chunk, because saving checks first, as the server does.

use api::{ApiError, FieldError};

use super::form::ProfileForm;
use crate::server_fns::save_profile;

/// What [`check`] found, and what saving answered when it was asked to save.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Checked {
    /// The form's own errors: [`ProfileForm::validate`], the same checks the
    /// server runs.
    pub errors: Vec<FieldError>,
    /// Asked to save and without errors: the server's answer, with the form
    /// of the profile as stored. `None` when not asked or when not sent
    /// because of `errors`.
    pub saved: Option<Result<ProfileForm, ApiError>>,
}

/// Check `form`; when `then_save` and it has no errors, save it (create or
/// update, as its id says) and read back the form of the profile as stored.
#[cfg_attr(feature = "hydrate", leptos::lazy)]
pub async fn check(form: ProfileForm, then_save: bool) -> Checked {
    let errors = form.validate();
    if !then_save || !errors.is_empty() {
        return Checked {
            errors,
            saved: None,
        };
    }
    let (request, _) = form.request();
    let saved = save_profile(form.id.clone(), request)
        .await
        .map(|stored| ProfileForm::from_view(&stored));
    Checked {
        errors,
        saved: Some(saved),
    }
}
