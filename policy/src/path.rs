//! Field paths: where in a document a validation error points.

use std::fmt;

/// One step of a [`FieldPath`]: an object field or an array index.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum Segment {
    Field(String),
    Index(usize),
}

/// A composable path to a field, rendered the way the browser and the API show it:
/// `candidates[1].policy.transient.retry.max_retries`.
///
/// Validation functions take the path of the value they check, so the same function
/// names `transient.retry.max_retries` for a bare document and
/// `candidates[1].policy.transient.retry.max_retries` inside a profile.
///
/// ```
/// use policy::FieldPath;
/// let bare = FieldPath::root().field("transient").field("retry");
/// assert_eq!(bare.to_string(), "transient.retry");
/// let nested = FieldPath::root().field("candidates").index(1).field("policy");
/// assert_eq!(nested.to_string(), "candidates[1].policy");
/// assert_eq!(FieldPath::root().to_string(), "");
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct FieldPath {
    segments: Vec<Segment>,
}

impl FieldPath {
    /// The path of the value being validated itself; it renders as the empty string.
    ///
    /// ```
    /// assert!(policy::FieldPath::root().is_root());
    /// ```
    pub fn root() -> Self {
        Self::default()
    }

    /// This path extended by an object field.
    ///
    /// ```
    /// let path = policy::FieldPath::root().field("hard").field("on_exhausted");
    /// assert_eq!(path.to_string(), "hard.on_exhausted");
    /// ```
    pub fn field(&self, name: &str) -> Self {
        let mut next = self.clone();
        next.segments.push(Segment::Field(name.to_owned()));
        next
    }

    /// This path extended by an array index.
    ///
    /// ```
    /// let path = policy::FieldPath::root().field("candidates").index(0);
    /// assert_eq!(path.to_string(), "candidates[0]");
    /// ```
    pub fn index(&self, index: usize) -> Self {
        let mut next = self.clone();
        next.segments.push(Segment::Index(index));
        next
    }

    /// Whether this is the root path (no segments).
    ///
    /// ```
    /// assert!(!policy::FieldPath::root().field("version").is_root());
    /// ```
    pub fn is_root(&self) -> bool {
        self.segments.is_empty()
    }
}

impl fmt::Display for FieldPath {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (position, segment) in self.segments.iter().enumerate() {
            match segment {
                Segment::Field(name) if position == 0 => formatter.write_str(name)?,
                Segment::Field(name) => write!(formatter, ".{name}")?,
                Segment::Index(index) => write!(formatter, "[{index}]")?,
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::FieldPath;

    #[test]
    fn renders_fields_and_indexes() {
        let root = FieldPath::root();
        let table = [
            (root.clone(), ""),
            (root.field("version"), "version"),
            (root.index(2), "[2]"),
            (root.index(2).field("policy"), "[2].policy"),
            (
                root.field("candidates")
                    .index(1)
                    .field("policy")
                    .field("hard"),
                "candidates[1].policy.hard",
            ),
            (root.field("a").index(0).index(1), "a[0][1]"),
        ];
        for (path, expected) in table {
            assert_eq!(path.to_string(), expected);
        }
    }
}
