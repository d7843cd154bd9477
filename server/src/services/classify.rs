use api::read::Read;
use api::{
    Classification, DroppedHint, EvidenceRequest, HeaderValue, HintDropReason, Sent, Timestamp,
};
use catalogue::{CatalogueClassification, DropReason, Evidence, Transport};
use policy::{ErrorCode, FieldError, FieldPath};

use super::Services;
use crate::error::AppError;

impl Services {
    /// Classify one piece of evidence (SPEC 2.1) with the catalogue; a missing
    /// `observed_at` means now.
    pub fn classify(&self, request: Read<EvidenceRequest>) -> Result<Classification, AppError> {
        let request = request.check(check_evidence)?;
        let verdict = catalogue::classify(&evidence(&request), self.clock.now().as_millis());
        Ok(classification(verdict))
    }
}

/// The contract's checks of evidence, and one the contract crate cannot make (it is
/// built for the browser too): a `time_zone` must name a zone of the catalogue's
/// time-zone database.
pub fn check_evidence(request: &EvidenceRequest) -> Result<EvidenceRequest, Vec<FieldError>> {
    let checked = request.check();
    let zone = request.time_zone.as_deref().map(str::trim);
    if zone.is_none_or(|name| catalogue::time_zone(name).is_some()) {
        return checked;
    }
    let mut errors = checked.err().unwrap_or_default();
    if !errors.iter().any(|error| error.field == "time_zone") {
        errors.push(FieldError::new(
            &FieldPath::root().field("time_zone"),
            ErrorCode::Enum,
            "must be an IANA time zone name such as Europe/Berlin",
        ));
    }
    Err(errors)
}

/// The catalogue's evidence in a checked request: what the catalogue's own reader
/// makes of the same JSON (the check refused what the readers could not read,
/// and the readers are the policy crate's on both sides).
pub fn evidence(request: &EvidenceRequest) -> Evidence {
    let mut evidence = Evidence::new(&request.provider);
    evidence.status = request
        .status
        .as_ref()
        .and_then(Sent::value)
        .and_then(|status| u16::try_from(status.get()).ok());
    for (name, value) in request.headers.iter().flatten() {
        if let Some(text) = value.value().and_then(HeaderValue::as_str) {
            evidence.headers.insert(name, text);
        }
    }
    evidence.body = request
        .body
        .as_ref()
        .and_then(Sent::value)
        .map(|body| body.as_str().to_owned());
    evidence.output.clone_from(&request.output);
    evidence.transport = request.transport.as_deref().map(Transport::from_name);
    evidence.observed_at_ms = request
        .observed_at
        .as_ref()
        .and_then(Sent::value)
        .map(|at| at.as_millis());
    evidence.time_zone = request
        .time_zone
        .as_deref()
        .map(|name| name.trim().to_owned());
    evidence
}

/// The catalogue's verdict as the API answers it.
pub fn classification(verdict: CatalogueClassification) -> Classification {
    let hint = verdict.classification;
    Classification {
        code: hint.code,
        class: hint.class,
        confidence: hint.confidence,
        retry_after_ms: hint.retry_after_ms,
        reset_at: hint.reset_at_ms.map(Timestamp::from_millis),
        rule: verdict.rule.to_owned(),
        catalogue: verdict.catalogue.to_owned(),
        safe_cause: verdict.safe_cause,
        hints_dropped: verdict
            .hints_dropped
            .into_iter()
            .map(|dropped| DroppedHint {
                source: dropped.source,
                value: dropped.value,
                reason: match dropped.reason {
                    DropReason::Unparsable => HintDropReason::Unparsable,
                    DropReason::Negative => HintDropReason::Negative,
                    DropReason::Past => HintDropReason::Past,
                    DropReason::TooFar => HintDropReason::TooFar,
                    DropReason::NoDateOrZone => HintDropReason::NoDateOrZone,
                },
            })
            .collect(),
        conflicting_rules: verdict
            .conflicting_rules
            .into_iter()
            .map(str::to_owned)
            .collect(),
    }
}

impl Services {
    /// The catalogue's inbox: the failures it was unsure of, grouped.
    pub async fn catalogue_inbox(&self) -> Result<api::InboxView, AppError> {
        Ok(crate::inbox::inbox(self.store.as_ref()).await?)
    }

    /// Stored evidence read again by the current catalogue: what it reads
    /// differently now. Nothing changes.
    pub async fn reclassify(&self) -> Result<api::ReclassifyView, AppError> {
        Ok(
            crate::inbox::reclassify(self.store.as_ref(), crate::inbox::RECLASSIFY_ATTEMPTS)
                .await?,
        )
    }
}
