//! The providers page's form: state (pure) and component.

mod form;
mod provider_form_view;

pub use form::ProviderForm;
pub use provider_form_view::{ProviderFormView, ProviderSubmission};
