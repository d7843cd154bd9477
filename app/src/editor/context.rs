use api::{FieldError, ProviderView};
use leptos::prelude::*;

use super::form::ProfileForm;
use crate::components::FieldErrors;

/// What every part of the editor reads: the form, its errors (the policy
/// crate's, plus the server's last answer) and the providers to pick from.
#[derive(Clone, Copy)]
pub struct EditorContext {
    /// The form as typed.
    pub form: RwSignal<ProfileForm>,
    /// Errors from validation in the browser and from the server's last answer.
    pub errors: Memo<Vec<FieldError>>,
    /// The providers a candidate can use.
    pub providers: StoredValue<Vec<ProviderView>>,
}

impl EditorContext {
    /// The editor's context; every editor component is inside one.
    pub fn get() -> Self {
        expect_context::<Self>()
    }

    /// The first error message for `path`, if any.
    pub fn error_for(&self, path: &str) -> Option<String> {
        FieldErrors::new(self.errors, "").message_for(path)
    }
}
