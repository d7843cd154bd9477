use api::{FieldError, ProviderId, ProviderView};
use leptos::prelude::*;
use serde::{Deserialize, Serialize};

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
    pub providers: StoredValue<Vec<ProviderChoice>>,
}

/// A provider as a candidate's **Provider** choice offers it: only what the
/// choice shows and the form stores, so the editor neither sends nor reads
/// whole providers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProviderChoice {
    /// Its id, which the candidate stores.
    pub id: ProviderId,
    /// Its name, which the choice shows.
    pub name: String,
}

impl From<&ProviderView> for ProviderChoice {
    fn from(provider: &ProviderView) -> Self {
        Self {
            id: provider.id.clone(),
            name: provider.name.clone(),
        }
    }
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
