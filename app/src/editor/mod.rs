//! The dynamic profile editor: its form state (pure, tested natively) and
//! its components.

mod candidate_card;
mod context;
mod dry_run;
mod form;
mod on_demand;
mod op_button;
mod profile_editor;
mod schedule_view;
mod section_fields;
mod summary;
mod unsaved_guard;

pub use context::ProviderChoice;
pub use form::{
    CandidateForm, EditOp, ProfileForm, SectionForm, candidate_path, display_model, section_path,
};
pub use profile_editor::{EditorData, EditorSubmission, ProfileEditor};
pub use summary::{policy_summary, schedule_sentence, section_summary};
