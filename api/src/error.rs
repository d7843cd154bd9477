//! The one error type of the contract. Its JSON form is the body of every
//! refused API call; the server functions fail with it too, so the browser
//! decodes the same thing; and [`ApiError::status`] is the one place an error
//! meets its HTTP status. The sentences people read live here as well.

use policy::FieldError;
use serde::{Deserialize, Serialize};

use crate::ids::Revision;

/// Why a call was refused, as the API answers it: `{"error": CODE, ...}`.
///
/// ```
/// use api::{ApiError, Revision};
/// let stale = ApiError::stale_revision(Revision::new(3));
/// assert_eq!(stale.status(), 409);
/// assert_eq!(
///     serde_json::to_value(&stale).unwrap()["revision"],
///     serde_json::json!(3),
/// );
/// assert_eq!(serde_json::to_value(ApiError::not_found("profile", "p-1")).unwrap()["error"], "not_found");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, thiserror::Error)]
#[serde(tag = "error", rename_all = "snake_case")]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub enum ApiError {
    /// 422: field errors, every one at once; nothing was stored.
    #[error("{}", invalid_message(.errors))]
    Invalid {
        /// The errors, each addressed to its field.
        #[cfg_attr(feature = "openapi", schema(value_type = Vec<crate::openapi::FieldErrorSchema>))]
        errors: Vec<FieldError>,
    },
    /// 404: no such thing (any more).
    #[error("{message}")]
    NotFound {
        /// What was not found, for people.
        message: String,
    },
    /// 409: someone saved first; nothing was stored.
    #[error("{message}")]
    StaleRevision {
        /// For people.
        message: String,
        /// The revision now stored: read it again, then send your change.
        revision: Revision,
    },
    /// 409: still in use, so it cannot be deleted.
    #[error("{message}")]
    InUse {
        /// Who uses it, for people.
        message: String,
    },
    /// 409: the action named a generation the route has moved past; nothing
    /// changed. `route` is the route now.
    #[error("{message}")]
    StaleGeneration {
        /// For people.
        message: String,
        /// The route as it is now: show it, then act again.
        route: Box<crate::tasks::RouteView>,
    },
    /// 409: a person acted on a circuit that changed since they saw it (it closed,
    /// or a later failure moved its reset): nothing was changed.
    #[error("{message}")]
    CircuitChanged {
        /// What changed, for people.
        message: String,
    },
    /// 422: the route's state does not allow this; nothing changed.
    #[error("{message}")]
    NotAllowedNow {
        /// For people: what the state allows.
        message: String,
        /// The route's state.
        #[cfg_attr(feature = "openapi", schema(value_type = crate::openapi::RouteStateSchema))]
        state: policy::route::RouteState,
    },
    /// 422: the profile has no enabled candidate, so a task could not start.
    #[error("{message}")]
    NoEnabledCandidate {
        /// For people.
        message: String,
    },
    /// 400: the body is not JSON.
    #[error("{message}")]
    MalformedJson {
        /// What the parser said.
        message: String,
    },
    /// 400: a request header the operation reads is not usable.
    #[error("{message}")]
    InvalidHeader {
        /// Which header, and what it must be.
        message: String,
    },
    /// 400: a form post that is not a form.
    #[error("{message}")]
    MalformedForm {
        /// What the parser said.
        message: String,
    },
    /// 415: the body is not declared as JSON.
    #[error("{message}")]
    UnsupportedMediaType {
        /// For people.
        message: String,
    },
    /// 413: the body is larger than the server reads.
    #[error("{message}")]
    PayloadTooLarge {
        /// For people.
        message: String,
    },
    /// 403: a write from another site, or for a host name this server does not answer to.
    #[error("{message}")]
    Forbidden {
        /// Why, for people.
        message: String,
    },
    /// 401: this server has an admin token and the call carried neither it
    /// (`Authorization: Bearer`) nor a signed-in session.
    #[error("{message}")]
    Unauthorized {
        /// What to send, for people.
        message: String,
    },
    /// 429: too many requests from this client; nothing changed. Send again
    /// after `retry_after_s` seconds (also in the `Retry-After` header).
    #[error("{message}")]
    RateLimited {
        /// For people.
        message: String,
        /// Seconds until a request of this kind is accepted again.
        retry_after_s: u64,
    },
    /// 429: the server already holds as many unfinished tasks as it is
    /// configured to; nothing started. Let some finish, or stop them.
    #[error("{message}")]
    TooManyTasks {
        /// For people.
        message: String,
        /// The most unfinished tasks this server holds (`--max-open-tasks`).
        limit: u64,
    },
    /// 408: the request was not read and answered within the server's time
    /// limit. A change it asked for may or may not have been made.
    #[error("{message}")]
    RequestTimeout {
        /// For people.
        message: String,
    },
    /// 404: no API route at this path.
    #[error("{message}")]
    NoSuchRoute {
        /// For people.
        message: String,
    },
    /// 500: the server failed; the details are in its log, never here.
    #[error("{message}")]
    Internal {
        /// For people.
        message: String,
    },
    /// The call did not reach the server or its answer did not arrive
    /// (the browser's side only: the server never answers this).
    #[error("{message}")]
    Unreachable {
        /// What went wrong, for people.
        message: String,
    },
}

fn invalid_message(errors: &[FieldError]) -> String {
    match errors.len() {
        1 => "A value needs attention: see the marked field. Nothing was saved.".to_owned(),
        _ => "Some values need attention: see the marked fields. Nothing was saved.".to_owned(),
    }
}

impl ApiError {
    /// Field errors.
    pub fn invalid(errors: Vec<FieldError>) -> Self {
        Self::Invalid { errors }
    }

    /// No `entity` ("provider", "profile", ...) with `id`.
    pub fn not_found(entity: &str, id: impl std::fmt::Display) -> Self {
        Self::NotFound {
            message: format!("There is no {entity} with id {id}: it may have been deleted."),
        }
    }

    /// Someone else saved first; `current` is the revision now stored.
    pub fn stale_revision(current: Revision) -> Self {
        Self::StaleRevision {
            message: format!(
                "Someone else saved this first (it is now at revision {current}). Nothing was saved: reload to see their changes, then make yours again."
            ),
            revision: current,
        }
    }

    /// `entity` `name` is used by `users` and cannot be deleted.
    pub fn in_use(entity: &str, name: &str, users: &str) -> Self {
        Self::InUse {
            message: format!("The {entity} {name} is used by {users}; change those first."),
        }
    }

    /// The action named generation `sent`; the route is now `route`.
    pub fn stale_generation(sent: i64, route: crate::tasks::RouteView) -> Self {
        Self::StaleGeneration {
            message: format!(
                "The route changed since you saw it (generation {sent}; it is now at {} and {}). Nothing was done: look at it again, then act.",
                route.generation,
                route.state.as_str()
            ),
            route: Box::new(route),
        }
    }

    /// `what` (an action, a new turn) is not valid while the route is in `state`.
    pub fn not_allowed_now(what: &str, state: policy::route::RouteState) -> Self {
        let valid: Vec<&str> = state
            .actions()
            .iter()
            .map(|action| action.as_str())
            .collect();
        let allowed = if valid.is_empty() {
            "no action".to_owned()
        } else {
            valid.join(", ")
        };
        Self::NotAllowedNow {
            message: format!(
                "{what} is not valid while the route is {}: it allows {allowed}. Nothing changed.",
                state.as_str()
            ),
            state,
        }
    }

    /// The profile `name` has no enabled candidate.
    pub fn no_enabled_candidate(name: &str) -> Self {
        Self::NoEnabledCandidate {
            message: format!(
                "The profile {name} has no enabled candidate, so there is nothing to send the task to. Enable a candidate first."
            ),
        }
    }

    /// The body is not JSON; `detail` says where.
    pub fn malformed_json(detail: impl std::fmt::Display) -> Self {
        Self::MalformedJson {
            message: format!("The body is not valid JSON: {detail}"),
        }
    }

    /// The header `name` is not usable: it `must` be something else.
    pub fn invalid_header(name: &str, must: &str) -> Self {
        Self::InvalidHeader {
            message: format!("The {name} header {must}."),
        }
    }

    /// The body is not declared as JSON.
    pub fn unsupported_media_type() -> Self {
        Self::UnsupportedMediaType {
            message: "The body must be JSON, sent with content-type: application/json.".to_owned(),
        }
    }

    /// The body is over `limit_bytes`.
    pub fn payload_too_large(limit_bytes: usize) -> Self {
        Self::PayloadTooLarge {
            message: format!("The body is larger than the {limit_bytes} bytes this server reads."),
        }
    }

    /// A form post that is not a form; `detail` says why.
    pub fn unreadable_form(detail: impl std::fmt::Display) -> Self {
        Self::MalformedForm {
            message: format!("The form could not be read: {detail}"),
        }
    }

    /// A form post not declared as a form.
    pub fn form_media_type() -> Self {
        Self::UnsupportedMediaType {
            message: "A form must be sent as application/x-www-form-urlencoded.".to_owned(),
        }
    }

    /// A write that came from another site (cross-site request forgery).
    pub fn cross_site() -> Self {
        Self::Forbidden {
            message: "This change came from another site, so it was refused. Make it from Switchback's own pages.".to_owned(),
        }
    }

    /// A request for a host name this server does not answer to (DNS rebinding).
    pub fn foreign_host(host: &str) -> Self {
        Self::Forbidden {
            message: format!(
                "This server does not answer to the host name {host:?}. Use the address it was started on, or add the name with --public-name."
            ),
        }
    }

    /// A call without the admin token or a session, to a server that has a token.
    pub fn unauthorized() -> Self {
        Self::Unauthorized {
            message: "This server needs its admin token: send `Authorization: Bearer TOKEN`, or sign in at /login.".to_owned(),
        }
    }

    /// Too many requests of one kind (`what`, e.g. "changes") from this client.
    pub fn rate_limited(what: &str, retry_after_s: u64) -> Self {
        Self::RateLimited {
            message: format!(
                "Too many {what} from this client; nothing changed. Try again in {retry_after_s} s."
            ),
            retry_after_s,
        }
    }

    /// The server holds `limit` unfinished tasks already.
    pub fn too_many_tasks(limit: u64) -> Self {
        Self::TooManyTasks {
            message: format!(
                "This server already holds {limit} unfinished tasks, its limit; nothing started. Let some finish or stop them, then try again."
            ),
            limit,
        }
    }

    /// The request took longer than `limit_s` seconds to read and answer.
    pub fn request_timeout(limit_s: u64) -> Self {
        Self::RequestTimeout {
            message: format!(
                "The request was not read and answered within {limit_s} s, so it was given up. A change it asked for may or may not have been made: read before sending it again (a task sent with an Idempotency-Key can be sent again as it was)."
            ),
        }
    }

    /// No API route at this path.
    pub fn no_such_route() -> Self {
        Self::NoSuchRoute {
            message: "There is no API route at this path; /api/openapi.json lists them.".to_owned(),
        }
    }

    /// The server failed; its log has the details.
    pub fn internal() -> Self {
        Self::Internal {
            message: "The server failed; the details are in its log.".to_owned(),
        }
    }

    /// The call did not complete; `detail` says how.
    pub fn unreachable(detail: impl std::fmt::Display) -> Self {
        Self::Unreachable {
            message: format!("The server could not be reached: {detail}"),
        }
    }

    /// The HTTP status this error is answered with: the one mapping, for the
    /// JSON API, the server functions and the plain-form posts alike.
    ///
    /// ```
    /// use api::ApiError;
    /// assert_eq!(ApiError::payload_too_large(1024).status(), 413);
    /// assert_eq!(ApiError::invalid(vec![]).status(), 422);
    /// assert_eq!(ApiError::internal().status(), 500);
    /// ```
    pub fn status(&self) -> u16 {
        match self {
            Self::Invalid { .. } | Self::NotAllowedNow { .. } | Self::NoEnabledCandidate { .. } => {
                422
            }
            Self::NotFound { .. } | Self::NoSuchRoute { .. } => 404,
            Self::StaleRevision { .. }
            | Self::InUse { .. }
            | Self::StaleGeneration { .. }
            | Self::CircuitChanged { .. } => 409,
            Self::MalformedJson { .. }
            | Self::MalformedForm { .. }
            | Self::InvalidHeader { .. } => 400,
            Self::UnsupportedMediaType { .. } => 415,
            Self::PayloadTooLarge { .. } => 413,
            Self::Forbidden { .. } => 403,
            Self::Unauthorized { .. } => 401,
            Self::RequestTimeout { .. } => 408,
            Self::RateLimited { .. } | Self::TooManyTasks { .. } => 429,
            Self::Internal { .. } => 500,
            // Never sent by a server; a gateway's view of a call that failed on the way.
            Self::Unreachable { .. } => 502,
        }
    }

    /// The field errors, when this is [`ApiError::Invalid`].
    pub fn field_errors(&self) -> &[FieldError] {
        match self {
            Self::Invalid { errors } => errors,
            _ => &[],
        }
    }
}

/// Read in one pass over a flat shape that holds every variant's fields. (A
/// derived reader of an internally tagged enum buffers the whole body, then
/// reads it again per variant: in the browser's wasm that is a copy of the
/// buffered reader for each of the twenty variants.)
impl<'de> Deserialize<'de> for ApiError {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        use serde::de::Error;

        /// Every field of every variant; the tag says which are required.
        #[derive(Deserialize)]
        struct Wire {
            error: String,
            message: Option<String>,
            errors: Option<Vec<FieldError>>,
            revision: Option<Revision>,
            route: Option<Box<crate::tasks::RouteView>>,
            state: Option<policy::route::RouteState>,
            retry_after_s: Option<u64>,
            limit: Option<u64>,
        }

        const VARIANTS: &[&str] = &[
            "invalid",
            "not_found",
            "stale_revision",
            "in_use",
            "stale_generation",
            "circuit_changed",
            "not_allowed_now",
            "no_enabled_candidate",
            "malformed_json",
            "invalid_header",
            "malformed_form",
            "unsupported_media_type",
            "payload_too_large",
            "forbidden",
            "unauthorized",
            "rate_limited",
            "too_many_tasks",
            "request_timeout",
            "no_such_route",
            "internal",
            "unreachable",
        ];
        fn required<T, E: Error>(value: Option<T>, field: &'static str) -> Result<T, E> {
            value.ok_or_else(|| E::missing_field(field))
        }
        let wire = Wire::deserialize(deserializer)?;
        let message = || required(wire.message.clone(), "message");
        Ok(match wire.error.as_str() {
            "invalid" => Self::Invalid {
                errors: required(wire.errors, "errors")?,
            },
            "not_found" => Self::NotFound {
                message: message()?,
            },
            "stale_revision" => Self::StaleRevision {
                message: message()?,
                revision: required(wire.revision, "revision")?,
            },
            "in_use" => Self::InUse {
                message: message()?,
            },
            "stale_generation" => Self::StaleGeneration {
                message: message()?,
                route: required(wire.route, "route")?,
            },
            "circuit_changed" => Self::CircuitChanged {
                message: message()?,
            },
            "not_allowed_now" => Self::NotAllowedNow {
                message: message()?,
                state: required(wire.state, "state")?,
            },
            "no_enabled_candidate" => Self::NoEnabledCandidate {
                message: message()?,
            },
            "malformed_json" => Self::MalformedJson {
                message: message()?,
            },
            "invalid_header" => Self::InvalidHeader {
                message: message()?,
            },
            "malformed_form" => Self::MalformedForm {
                message: message()?,
            },
            "unsupported_media_type" => Self::UnsupportedMediaType {
                message: message()?,
            },
            "payload_too_large" => Self::PayloadTooLarge {
                message: message()?,
            },
            "forbidden" => Self::Forbidden {
                message: message()?,
            },
            "unauthorized" => Self::Unauthorized {
                message: message()?,
            },
            "rate_limited" => Self::RateLimited {
                message: message()?,
                retry_after_s: required(wire.retry_after_s, "retry_after_s")?,
            },
            "too_many_tasks" => Self::TooManyTasks {
                message: message()?,
                limit: required(wire.limit, "limit")?,
            },
            "request_timeout" => Self::RequestTimeout {
                message: message()?,
            },
            "no_such_route" => Self::NoSuchRoute {
                message: message()?,
            },
            "internal" => Self::Internal {
                message: message()?,
            },
            "unreachable" => Self::Unreachable {
                message: message()?,
            },
            other => return Err(D::Error::unknown_variant(other, VARIANTS)),
        })
    }
}

impl From<Vec<FieldError>> for ApiError {
    fn from(errors: Vec<FieldError>) -> Self {
        Self::Invalid { errors }
    }
}

/// The field errors only the store can find, with their sentences: any
/// store driver gives these.
pub mod refusals {
    use policy::{ErrorCode, FieldError, FieldPath};

    /// Another `entity` ("provider", "profile") already has this name.
    pub fn name_taken(entity: &str) -> FieldError {
        FieldError::new(
            &FieldPath::root().field("name"),
            ErrorCode::Unique,
            format!("another {entity} already has this name"),
        )
    }

    /// The candidate at `index` names a provider that does not exist.
    pub fn no_such_provider(index: usize) -> FieldError {
        FieldError::new(
            &FieldPath::root()
                .field("candidates")
                .index(index)
                .field("provider_id"),
            ErrorCode::NotFound,
            "names no provider",
        )
    }

    /// The candidate at `index` sends an id that is not one of the profile's.
    pub fn not_a_candidate_of_this_profile(index: usize) -> FieldError {
        FieldError::new(
            &FieldPath::root()
                .field("candidates")
                .index(index)
                .field("id"),
            ErrorCode::NotFound,
            "is not a candidate of this profile: leave the id out to add a new candidate",
        )
    }
}

#[cfg(feature = "server-fn")]
impl server_fn::error::FromServerFnError for ApiError {
    type Encoder = crate::JsonText;

    fn from_server_fn_error(value: server_fn::error::ServerFnErrorErr) -> Self {
        use server_fn::error::ServerFnErrorErr;
        match value {
            // The arguments did not arrive intact: the caller's fault, like a bad
            // body. (The server reports undecodable JSON arguments as
            // `Deserialization`, the same variant a browser reports an
            // undecodable answer with; the server's reading is the one with a
            // status to give.)
            ServerFnErrorErr::Args(detail)
            | ServerFnErrorErr::MissingArg(detail)
            | ServerFnErrorErr::Deserialization(detail) => Self::malformed_json(detail),
            // Failed on the server's side: its log has the details.
            ServerFnErrorErr::ServerError(_)
            | ServerFnErrorErr::MiddlewareError(_)
            | ServerFnErrorErr::Registration(_)
            | ServerFnErrorErr::Response(_) => Self::internal(),
            // Failed in the browser or on the way.
            other => Self::unreachable(other),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use policy::{ErrorCode, FieldPath};
    use serde_json::json;

    #[test]
    fn wire_shapes() {
        let invalid = ApiError::invalid(vec![FieldError::new(
            &FieldPath::root().field("name"),
            ErrorCode::Required,
            "is required",
        )]);
        assert_eq!(
            serde_json::to_value(&invalid).unwrap(),
            json!({"error": "invalid", "errors": [{"field": "name", "code": "required", "message": "is required"}]})
        );
        let too_large = serde_json::to_value(ApiError::payload_too_large(10)).unwrap();
        assert_eq!(too_large["error"], "payload_too_large");
        assert!(too_large["message"].as_str().unwrap().contains("10 bytes"));
        for error in [
            invalid,
            ApiError::stale_revision(Revision::new(4)),
            ApiError::cross_site(),
            ApiError::unreachable("offline"),
        ] {
            let text = serde_json::to_string(&error).unwrap();
            assert_eq!(serde_json::from_str::<ApiError>(&text).unwrap(), error);
        }
    }

    #[test]
    fn every_error_reads_back_as_it_was_written() {
        let message = || "m".to_owned();
        let route = serde_json::from_value(serde_json::json!({
            "task_id": "t", "state": "held", "generation": 3, "candidate_index": 0,
            "candidate_id": "c", "model": "m", "circuit_wait": false, "turn": 1, "actions": [],
            "updated_at": "2026-11-30T02:00:20Z"}))
        .unwrap();
        let errors = [
            ApiError::Invalid {
                errors: vec![FieldError::new(
                    &policy::FieldPath::root().field("name"),
                    policy::ErrorCode::Required,
                    "needed",
                )],
            },
            ApiError::NotFound { message: message() },
            ApiError::StaleRevision {
                message: message(),
                revision: Revision::FIRST,
            },
            ApiError::InUse { message: message() },
            ApiError::StaleGeneration {
                message: message(),
                route,
            },
            ApiError::NotAllowedNow {
                message: message(),
                state: policy::route::RouteState::Held,
            },
            ApiError::NoEnabledCandidate { message: message() },
            ApiError::MalformedJson { message: message() },
            ApiError::InvalidHeader { message: message() },
            ApiError::MalformedForm { message: message() },
            ApiError::UnsupportedMediaType { message: message() },
            ApiError::PayloadTooLarge { message: message() },
            ApiError::Forbidden { message: message() },
            ApiError::Unauthorized { message: message() },
            ApiError::RateLimited {
                message: message(),
                retry_after_s: 7,
            },
            ApiError::TooManyTasks {
                message: message(),
                limit: 9,
            },
            ApiError::RequestTimeout { message: message() },
            ApiError::NoSuchRoute { message: message() },
            ApiError::Internal { message: message() },
            ApiError::Unreachable { message: message() },
            ApiError::CircuitChanged { message: message() },
        ];
        let mut seen = std::collections::BTreeSet::new();
        for error in errors {
            // Exhaustive: a new variant does not compile until it is listed above.
            seen.insert(match &error {
                ApiError::Invalid { .. } => 0,
                ApiError::NotFound { .. } => 1,
                ApiError::StaleRevision { .. } => 2,
                ApiError::InUse { .. } => 3,
                ApiError::StaleGeneration { .. } => 4,
                ApiError::NotAllowedNow { .. } => 5,
                ApiError::NoEnabledCandidate { .. } => 6,
                ApiError::MalformedJson { .. } => 7,
                ApiError::InvalidHeader { .. } => 8,
                ApiError::MalformedForm { .. } => 9,
                ApiError::UnsupportedMediaType { .. } => 10,
                ApiError::PayloadTooLarge { .. } => 11,
                ApiError::Forbidden { .. } => 12,
                ApiError::Unauthorized { .. } => 13,
                ApiError::RateLimited { .. } => 14,
                ApiError::TooManyTasks { .. } => 15,
                ApiError::RequestTimeout { .. } => 16,
                ApiError::NoSuchRoute { .. } => 17,
                ApiError::Internal { .. } => 18,
                ApiError::Unreachable { .. } => 19,
                ApiError::CircuitChanged { .. } => 20,
            });
            let text = serde_json::to_string(&error).unwrap();
            assert_eq!(
                serde_json::from_str::<ApiError>(&text).unwrap(),
                error,
                "{text}"
            );
        }
        assert_eq!(seen.len(), 21, "one of each");
        for (text, refusal) in [
            (
                r#"{"error": "teapot", "message": "m"}"#,
                "unknown variant `teapot`",
            ),
            (r#"{"error": "not_found"}"#, "missing field `message`"),
            (
                r#"{"error": "rate_limited", "message": "m"}"#,
                "missing field `retry_after_s`",
            ),
            (r#"{"message": "m"}"#, "missing field `error`"),
        ] {
            let error = serde_json::from_str::<ApiError>(text)
                .unwrap_err()
                .to_string();
            assert!(error.contains(refusal), "{text}: {error}");
        }
        assert_eq!(
            serde_json::from_str::<ApiError>(
                r#"{"error": "internal", "message": "m", "extra": 1}"#
            )
            .unwrap(),
            ApiError::Internal { message: message() },
            "unknown fields are ignored, as before"
        );
    }

    #[test]
    fn every_code_has_one_status() {
        let table = [
            (ApiError::invalid(vec![]), 422, "invalid"),
            (ApiError::not_found("provider", "x"), 404, "not_found"),
            (
                ApiError::stale_revision(Revision::FIRST),
                409,
                "stale_revision",
            ),
            (
                ApiError::in_use("provider", "p", "the profile x"),
                409,
                "in_use",
            ),
            (
                ApiError::not_allowed_now("retry_now", policy::route::RouteState::Running),
                422,
                "not_allowed_now",
            ),
            (
                ApiError::no_enabled_candidate("p"),
                422,
                "no_enabled_candidate",
            ),
            (ApiError::malformed_json("eof"), 400, "malformed_json"),
            (
                ApiError::invalid_header("Idempotency-Key", "must be 1 to 200 characters"),
                400,
                "invalid_header",
            ),
            (ApiError::unreadable_form("eof"), 400, "malformed_form"),
            (
                ApiError::unsupported_media_type(),
                415,
                "unsupported_media_type",
            ),
            (ApiError::payload_too_large(1), 413, "payload_too_large"),
            (ApiError::cross_site(), 403, "forbidden"),
            (ApiError::foreign_host("evil.example"), 403, "forbidden"),
            (ApiError::no_such_route(), 404, "no_such_route"),
            (ApiError::internal(), 500, "internal"),
        ];
        for (error, status, code) in table {
            assert_eq!(error.status(), status, "{error:?}");
            assert_eq!(serde_json::to_value(&error).unwrap()["error"], code);
        }
    }
}
