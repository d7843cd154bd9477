use catalogue::{CatalogueClassification, Evidence, EvidenceError};
use policy::{ErrorCode, FieldError, FieldPath};
use serde_json::Value;

use super::Services;
use crate::error::AppError;

impl Services {
    /// Classify one piece of evidence (SPEC 2.1) with the catalogue; a missing
    /// `observed_at` means now.
    pub fn classify(&self, body: &Value) -> Result<CatalogueClassification, AppError> {
        let evidence = Evidence::from_json_value(body)
            .map_err(|error| AppError::Invalid(vec![field_error(&error)]))?;
        Ok(catalogue::classify(&evidence, self.clock.now_ms()))
    }
}

/// An evidence error as a field error, so the API answers it like every other.
fn field_error(error: &EvidenceError) -> FieldError {
    let root = FieldPath::root();
    let (path, code) = match error {
        EvidenceError::NotJson(_) | EvidenceError::NotAnObject => (root, ErrorCode::Type),
        EvidenceError::MissingProvider => (root.field("provider"), ErrorCode::Required),
        EvidenceError::WrongType { field, .. } => (root.field(field), ErrorCode::Type),
        EvidenceError::StatusOutOfRange => (root.field("status"), ErrorCode::Range),
        EvidenceError::ObservedAt(_) => (root.field("observed_at"), ErrorCode::Type),
    };
    FieldError::new(&path, code, error.to_string())
}
