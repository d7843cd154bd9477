use api::{ApiError, ProfileId};
use leptos::prelude::*;

use crate::editor::EditorData;

/// The editor's starting point: the stored profile (or a new draft) and the
/// providers to choose from (each one's id and name).
#[server(prefix = "/fn", endpoint = "load_profile_editor", output = api::JsonAnswer)]
pub async fn load_profile_editor(id: Option<ProfileId>) -> Result<EditorData, ApiError> {
    let backend = crate::backend::backend()?;
    let providers: Vec<crate::editor::ProviderChoice> = backend
        .list_providers()
        .await?
        .iter()
        .map(crate::editor::ProviderChoice::from)
        .collect();
    let form = match id {
        Some(id) => crate::editor::ProfileForm::from_view(&backend.get_profile(&id).await?),
        None => crate::editor::ProfileForm::new_draft(&providers),
    };
    Ok(EditorData::new(form, providers, Vec::new(), None))
}
