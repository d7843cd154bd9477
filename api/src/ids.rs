//! Identifiers, revisions and generations: one type each, from the store to
//! the browser, so a profile id can never be passed where a provider id
//! belongs, and a revision never where a generation does.

use std::fmt;

use serde::{Deserialize, Serialize};

/// The longest id a client may send, in characters.
pub const ID_MAX_CHARS: usize = 100;

macro_rules! id_type {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
        #[serde(transparent)]
        #[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
        #[cfg_attr(feature = "openapi", schema(value_type = String, min_length = 1, max_length = 100))]
        pub struct $name(String);

        impl $name {
            /// The id with this text.
            pub fn new(id: impl Into<String>) -> Self {
                Self(id.into())
            }

            /// The id as text.
            pub fn as_str(&self) -> &str {
                &self.0
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
                formatter.write_str(&self.0)
            }
        }

        impl From<String> for $name {
            fn from(id: String) -> Self {
                Self(id)
            }
        }

        impl From<&str> for $name {
            fn from(id: &str) -> Self {
                Self(id.to_owned())
            }
        }

        impl AsRef<str> for $name {
            fn as_ref(&self) -> &str {
                &self.0
            }
        }

        impl validator::ValidateLength<u64> for $name {
            fn length(&self) -> Option<u64> {
                u64::try_from(self.0.chars().count()).ok()
            }
        }
    };
}

id_type!(
    /// A provider's id. On the wire it is the text itself; in code it is a
    /// type of its own, so an id of one thing cannot be passed for another's
    /// (the first example does not compile).
    ///
    /// ```compile_fail
    /// fn provider_name(id: &api::ProviderId) -> &str { id.as_str() }
    /// let profile = api::ProfileId::new("p-1");
    /// provider_name(&profile); // a profile's id is not a provider's
    /// ```
    ///
    /// ```
    /// let request: api::CandidateRequest = serde_json::from_value(serde_json::json!({
    ///     "provider_id": "p-1", "model": "m", "enabled": true, "max_tokens": 10,
    /// })).unwrap();
    /// assert_eq!(request.provider_id, api::ProviderId::new("p-1"));
    /// ```
    ProviderId
);
id_type!(
    /// A dynamic profile's id.
    ProfileId
);
id_type!(
    /// A candidate's id: stable across every update that sends it back.
    CandidateId
);
id_type!(
    /// A task's id.
    TaskId
);
id_type!(
    /// A route's id (one route per task).
    RouteId
);
id_type!(
    /// An attempt's id: one dispatch of one turn to one candidate.
    AttemptId
);
id_type!(
    /// A client key's id (not the key).
    ClientKeyId
);

/// The revision of a provider or profile: 1 when created, bumped by every
/// update. An update names the revision it was computed from, and a stale one
/// is refused.
///
/// ```
/// use api::Revision;
/// let first = Revision::FIRST;
/// assert_eq!(first.next(), Revision::new(2));
/// assert_eq!(serde_json::to_value(first).unwrap(), 1);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "openapi", schema(value_type = i64, minimum = 1))]
pub struct Revision(i64);

impl Revision {
    /// The revision of a new row.
    pub const FIRST: Self = Self(1);

    /// The revision with this number.
    pub const fn new(revision: i64) -> Self {
        Self(revision)
    }

    /// The number, as stored.
    pub const fn get(self) -> i64 {
        self.0
    }

    /// The revision after this one.
    #[must_use]
    pub const fn next(self) -> Self {
        Self(self.0.saturating_add(1))
    }
}

impl fmt::Display for Revision {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(formatter, "{}", self.0)
    }
}

impl validator::ValidateRange<i64> for Revision {
    fn greater_than(&self, max: i64) -> Option<bool> {
        Some(self.0 > max)
    }

    fn less_than(&self, min: i64) -> Option<bool> {
        Some(self.0 < min)
    }
}

/// A route's generation: bumped by every committed transition. Every action
/// and every scheduled wake carries the generation it was made for, and one
/// made for an older generation changes nothing.
///
/// ```
/// use api::Generation;
/// assert!(Generation::new(3).next() > Generation::new(3));
/// assert_eq!(serde_json::to_value(Generation::new(7)).unwrap(), 7);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "openapi", schema(value_type = i64, minimum = 0))]
pub struct Generation(i64);

impl Generation {
    /// The generation of a new route.
    pub const FIRST: Self = Self(0);

    /// The generation with this number.
    pub const fn new(generation: i64) -> Self {
        Self(generation)
    }

    /// The number, as stored.
    pub const fn get(self) -> i64 {
        self.0
    }

    /// The generation after this one.
    #[must_use]
    pub const fn next(self) -> Self {
        Self(self.0.saturating_add(1))
    }
}

impl fmt::Display for Generation {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(formatter, "{}", self.0)
    }
}
