//! Reading a JSON body into its typed request, with every error at once.
//!
//! serde stops at the first field it cannot read; a person fixing a request
//! wants to hear about every field in one answer. [`Read::from_json`] drives
//! a request type's own `Deserialize` (the derive, unchanged) with a
//! deserializer over the parsed JSON that never stops: a field that is
//! missing, of the wrong JSON type, outside its integer type or not one of
//! its enum's names is recorded as a [`FieldError`] at its path, and the
//! derive is handed a stand-in (`""`, `0`, `false`, the first variant) so it
//! reads on. Unknown fields are recorded too. The stand-ins never leave this
//! module as a request: [`Read::check`] reports the errors instead.
//!
//! The conventions a request type follows for this (all of `api`'s do):
//! a field that may be left out is an `Option`; there is no `#[serde(default)]`
//! (every other field is required), no `flatten`, and enums are unit enums.
//! A type whose own `Deserialize` refuses a value would end reading there (its
//! reason is recorded, later fields are not read); so a field whose type
//! judges its value itself reads leniently instead ([`crate::Sent`]) and is
//! checked afterwards.
//!
//! ```
//! use api::read::Read;
//! #[derive(serde::Deserialize)]
//! struct Point { x: i64, y: i64, label: Option<String> }
//! impl api::read::Request for Point {}
//!
//! let body = serde_json::json!({"x": "3", "label": 7, "z": 1});
//! let errors = Read::<Point>::from_json(&body)
//!     .check(|_| Ok::<_, Vec<policy::FieldError>>(()))
//!     .unwrap_err();
//! let found: Vec<(&str, &str)> = errors.iter().map(|e| (e.field.as_str(), e.code.as_str())).collect();
//! assert_eq!(found, [("z", "unknown_field"), ("x", "type"), ("y", "required"), ("label", "type")]);
//! ```

use std::cell::RefCell;
use std::collections::HashMap;
use std::fmt;

use policy::{ErrorCode, FieldError, FieldPath, JsonInteger, describe_json, json_integer};
use serde::Deserializer;
use serde::de::value::StrDeserializer;
use serde::de::{
    self, DeserializeOwned, DeserializeSeed, EnumAccess, IntoDeserializer, MapAccess, SeqAccess,
    VariantAccess, Visitor,
};
use serde_json::{Map, Value};

/// What to do with a field the request type does not define.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UnknownFields {
    /// Report it as `unknown_field` (every request that stores something).
    Refuse,
    /// Ignore it (evidence for the catalogue, SPEC 2.1).
    Ignore,
}

/// A request as read from JSON: the typed value, and the errors met while
/// reading it. Build one with [`Read::from_json`] (a body) or [`Read::clean`]
/// (a request built in code, such as a form's); pass it to [`Read::check`].
#[derive(Debug)]
pub struct Read<T> {
    /// The request, with stand-ins where a field could not be read; `None`
    /// when a type's own checks refused a value outright.
    request: Option<T>,
    /// Errors met while reading, in the order of the fields.
    errors: Vec<FieldError>,
    /// Every path read, in the order of the fields: the order errors are reported in.
    order: Vec<String>,
}

impl<T: Request + DeserializeOwned> Read<T> {
    /// Reads `value` into a `T`, recording every field that cannot be read.
    pub fn from_json(value: &Value) -> Self {
        Self::from_json_with(value, T::UNKNOWN_FIELDS)
    }
}

impl<T: DeserializeOwned> Read<T> {
    /// Reads `value` into a `T`, recording every field that cannot be read;
    /// unknown fields as `unknown_fields` says.
    pub fn from_json_with(value: &Value, unknown_fields: UnknownFields) -> Self {
        let context = Context {
            errors: RefCell::default(),
            order: RefCell::default(),
            unknown_fields,
        };
        let reader = Reader {
            slot: Slot::Present(value),
            path: FieldPath::root(),
            context: &context,
        };
        let request = T::deserialize(reader).ok();
        let Context { errors, order, .. } = context;
        Self {
            request,
            errors: errors.into_inner(),
            order: order.into_inner(),
        }
    }
}

impl<T: Request + serde::Serialize + DeserializeOwned> Read<T> {
    /// A request built in code: read back through its JSON form, so its
    /// errors come in the same order as a body's would.
    pub fn clean(request: &T) -> Self {
        Self::built(request, Vec::new())
    }

    /// A request built in code from something that had errors of its own
    /// (a form whose number fields did not parse): those `errors`, then
    /// whatever the request's check finds in the fields they do not cover.
    pub fn built(request: &T, errors: Vec<FieldError>) -> Self {
        match serde_json::to_value(request) {
            Ok(value) => {
                let mut read = Self::from_json(&value);
                read.errors.extend(errors);
                read
            }
            Err(error) => Self {
                request: None,
                errors: vec![FieldError::new(
                    &FieldPath::root(),
                    ErrorCode::Type,
                    error.to_string(),
                )],
                order: Vec::new(),
            },
        }
    }
}

/// A request type's knowledge of how it is read and checked.
pub trait Request {
    /// Whether a field the type does not define is an error (the default) or ignored.
    const UNKNOWN_FIELDS: UnknownFields = UnknownFields::Refuse;

    /// The fields that another field makes required: a `required` error at
    /// `field` is not reported while a field it depends on could not be
    /// read (a provider's `base_url` is required or not by its `kind`);
    /// its other errors are.
    fn depends_on(field: &str) -> &'static [&'static str] {
        let _ = field;
        &[]
    }
}

impl<T: Request> Read<T> {
    /// Runs the request's own checks and answers every error at once: the
    /// ones met while reading, then the check's for the fields that were read
    /// (a field that could not be read is reported once, for why it could not).
    pub fn check<U>(
        self,
        check: impl FnOnce(&T) -> Result<U, Vec<FieldError>>,
    ) -> Result<U, Vec<FieldError>> {
        let Some(request) = &self.request else {
            return Err(self.errors);
        };
        let checked = check(request);
        if self.errors.is_empty() {
            return checked.map_err(|errors| in_field_order(&self.order, errors));
        }
        let unread = |field: &str| self.errors.iter().any(|read| is_within(field, &read.field));
        let mut errors = self.errors.clone();
        if let Err(found) = checked {
            errors.extend(found.into_iter().filter(|error| {
                let required_by_an_unread_field = error.code == ErrorCode::Required
                    && T::depends_on(&error.field)
                        .iter()
                        .any(|other| unread(other));
                !unread(&error.field) && !required_by_an_unread_field
            }));
        }
        Err(in_field_order(&self.order, errors))
    }
}

/// The errors, sorted by where their field (or its nearest read parent) came
/// in the request (`order`); errors at one place keep their own order. Not a
/// method of `Read<T>`: one copy serves every request type in the browser.
fn in_field_order(order: &[String], mut errors: Vec<FieldError>) -> Vec<FieldError> {
    let rank: HashMap<&str, usize> = order
        .iter()
        .enumerate()
        .map(|(position, path)| (path.as_str(), position))
        .rev()
        .collect();
    let position = |field: &str| {
        let mut path = Some(field);
        while let Some(current) = path {
            if let Some(position) = rank.get(current) {
                return *position;
            }
            path = parent(current);
        }
        usize::MAX
    };
    errors.sort_by_key(|error| position(&error.field));
    errors
}

/// Whether `field` is `outer` or lies inside it.
fn is_within(field: &str, outer: &str) -> bool {
    outer.is_empty()
        || field == outer
        || field
            .strip_prefix(outer)
            .is_some_and(|rest| rest.starts_with('.') || rest.starts_with('['))
}

/// The path one step up: `a[1].b` -> `a[1]` -> `a` -> ``.
fn parent(path: &str) -> Option<&str> {
    if path.is_empty() {
        return None;
    }
    let cut = path.rfind(['.', '[']).unwrap_or(0);
    Some(&path[..cut])
}

/// What every reader of one body shares.
struct Context {
    errors: RefCell<Vec<FieldError>>,
    order: RefCell<Vec<String>>,
    unknown_fields: UnknownFields,
}

/// The value a reader reads.
#[derive(Clone, Copy)]
enum Slot<'de> {
    /// The field is there.
    Present(&'de Value),
    /// The field is not there: `None` for an `Option`, `required` otherwise.
    Missing,
    /// Inside a value that could not be read: stand-ins, no more errors.
    StandIn,
}

/// A deserializer over one value of the body.
struct Reader<'c, 'de> {
    slot: Slot<'de>,
    path: FieldPath,
    context: &'c Context,
}

/// Ends reading when a type's own `Deserialize` refuses a value; the reason
/// is recorded once, at the field where it happened.
#[derive(Debug)]
pub struct Abort {
    message: String,
    recorded: bool,
}

impl fmt::Display for Abort {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str(&self.message)
    }
}

impl std::error::Error for Abort {}

impl de::Error for Abort {
    fn custom<T: fmt::Display>(message: T) -> Self {
        Self {
            message: message.to_string(),
            recorded: false,
        }
    }
}

impl<'c, 'de> Reader<'c, 'de> {
    fn child(&self, slot: Slot<'de>, path: FieldPath) -> Self {
        Self {
            slot,
            path,
            context: self.context,
        }
    }

    fn record(&self, code: ErrorCode, message: impl Into<String>) {
        self.context
            .errors
            .borrow_mut()
            .push(FieldError::new(&self.path, code, message));
    }

    /// Notes that this path was read, for the order of errors.
    fn visit(&self) {
        self.context.order.borrow_mut().push(self.path.to_string());
    }

    /// Records why this value is not `expected` (nothing for a stand-in).
    fn refuse(&self, expected: &str) {
        match self.slot {
            Slot::Present(value) => self.record(
                ErrorCode::Type,
                format!("must be {expected}, not {}", describe_json(value)),
            ),
            Slot::Missing => self.record(ErrorCode::Required, "is required"),
            Slot::StandIn => {}
        }
    }

    /// Records a refusal by the type's own `Deserialize`, once, here.
    fn caught<T>(&self, result: Result<T, Abort>) -> Result<T, Abort> {
        self.caught_at(&self.path, result)
    }

    /// Records a refusal by the type's own `Deserialize`, once, at `path`.
    fn caught_at<T>(&self, path: &FieldPath, result: Result<T, Abort>) -> Result<T, Abort> {
        result.map_err(|mut abort| {
            if !abort.recorded {
                self.context.errors.borrow_mut().push(FieldError::new(
                    path,
                    ErrorCode::Type,
                    abort.message.clone(),
                ));
                abort.recorded = true;
            }
            abort
        })
    }

    /// The integer here if it lies in `min..=max`; otherwise records why not
    /// and gives 0.
    fn integer(&self, min: i128, max: i128) -> i128 {
        let Slot::Present(value) = self.slot else {
            self.refuse("an integer");
            return 0;
        };
        match json_integer(value) {
            JsonInteger::Integer(integer) if (min..=max).contains(&integer) => integer,
            JsonInteger::Integer(_) | JsonInteger::OutOfRange => {
                self.record(ErrorCode::Range, "is out of range");
                0
            }
            JsonInteger::Fraction => {
                self.record(ErrorCode::Type, "must be an integer, not a fraction");
                0
            }
            JsonInteger::NotANumber => {
                self.refuse("an integer");
                0
            }
        }
    }
}

macro_rules! read_integer {
    ($method:ident, $visit:ident, $type:ty) => {
        fn $method<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Abort> {
            self.visit();
            let integer = self.integer(i128::from(<$type>::MIN), i128::from(<$type>::MAX));
            // In range by the check above; 0 otherwise.
            let integer = <$type>::try_from(integer).unwrap_or_default();
            self.caught(visitor.$visit(integer))
        }
    };
}

impl<'de> Deserializer<'de> for Reader<'_, 'de> {
    type Error = Abort;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Abort> {
        self.visit();
        match self.slot {
            Slot::Present(value) => {
                let result = value.deserialize_any(visitor).map_err(de::Error::custom);
                self.caught(result)
            }
            Slot::Missing | Slot::StandIn => {
                self.refuse("a value");
                self.caught(visitor.visit_unit())
            }
        }
    }

    fn deserialize_bool<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Abort> {
        self.visit();
        let flag = match self.slot {
            Slot::Present(Value::Bool(flag)) => *flag,
            _ => {
                self.refuse("true or false");
                false
            }
        };
        self.caught(visitor.visit_bool(flag))
    }

    read_integer!(deserialize_i8, visit_i8, i8);
    read_integer!(deserialize_i16, visit_i16, i16);
    read_integer!(deserialize_i32, visit_i32, i32);
    read_integer!(deserialize_i64, visit_i64, i64);
    read_integer!(deserialize_u8, visit_u8, u8);
    read_integer!(deserialize_u16, visit_u16, u16);
    read_integer!(deserialize_u32, visit_u32, u32);
    read_integer!(deserialize_u64, visit_u64, u64);

    fn deserialize_f32<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Abort> {
        self.deserialize_f64(visitor)
    }

    fn deserialize_f64<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Abort> {
        self.visit();
        let number = match self.slot {
            Slot::Present(Value::Number(number)) => number.as_f64().unwrap_or_default(),
            _ => {
                self.refuse("a number");
                0.0
            }
        };
        self.caught(visitor.visit_f64(number))
    }

    fn deserialize_char<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Abort> {
        self.deserialize_str(visitor)
    }

    fn deserialize_str<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Abort> {
        self.visit();
        match self.slot {
            Slot::Present(Value::String(text)) => self.caught(visitor.visit_borrowed_str(text)),
            _ => {
                self.refuse("a string");
                self.caught(visitor.visit_borrowed_str(""))
            }
        }
    }

    fn deserialize_string<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Abort> {
        self.deserialize_str(visitor)
    }

    fn deserialize_bytes<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Abort> {
        self.deserialize_str(visitor)
    }

    fn deserialize_byte_buf<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Abort> {
        self.deserialize_str(visitor)
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Abort> {
        match self.slot {
            Slot::Present(Value::Null) | Slot::Missing | Slot::StandIn => {
                self.visit();
                self.caught(visitor.visit_none())
            }
            Slot::Present(_) => visitor.visit_some(self),
        }
    }

    fn deserialize_unit<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Abort> {
        self.visit();
        if !matches!(self.slot, Slot::Present(Value::Null)) {
            self.refuse("null");
        }
        self.caught(visitor.visit_unit())
    }

    fn deserialize_unit_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, Abort> {
        self.deserialize_unit(visitor)
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, Abort> {
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_seq<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Abort> {
        self.visit();
        let items: &'de [Value] = match self.slot {
            Slot::Present(Value::Array(items)) => items,
            _ => {
                self.refuse("an array");
                &[]
            }
        };
        let elements = Elements {
            items: items.iter().enumerate(),
            parent: &self,
        };
        let result = visitor.visit_seq(elements);
        self.caught(result)
    }

    fn deserialize_tuple<V: Visitor<'de>>(
        self,
        _len: usize,
        visitor: V,
    ) -> Result<V::Value, Abort> {
        self.deserialize_seq(visitor)
    }

    fn deserialize_tuple_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _len: usize,
        visitor: V,
    ) -> Result<V::Value, Abort> {
        self.deserialize_seq(visitor)
    }

    fn deserialize_map<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Abort> {
        self.visit();
        let entries = match self.slot {
            Slot::Present(Value::Object(map)) => Some(map),
            _ => {
                self.refuse("an object");
                None
            }
        };
        let result = visitor.visit_map(Entries {
            entries: entries.into_iter().flatten(),
            value: None,
            parent: &self,
        });
        self.caught(result)
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Abort> {
        self.visit();
        let map: Option<&'de Map<String, Value>> = match self.slot {
            Slot::Present(Value::Object(map)) => Some(map),
            _ => {
                self.refuse("an object");
                None
            }
        };
        if let (Some(map), UnknownFields::Refuse) = (map, self.context.unknown_fields) {
            let mut unknown: Vec<&String> = map
                .keys()
                .filter(|key| !fields.contains(&key.as_str()))
                .collect();
            unknown.sort();
            for key in unknown {
                let field = self.child(Slot::StandIn, self.path.field(key));
                field.visit();
                field.record(ErrorCode::UnknownField, "is not a known field");
            }
        }
        let result = visitor.visit_map(Fields {
            names: fields.iter(),
            map,
            current: None,
            parent: &self,
        });
        self.caught(result)
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _name: &'static str,
        variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Abort> {
        self.visit();
        let first = variants.first().copied().unwrap_or_default();
        let variant: &str = match self.slot {
            Slot::Present(Value::String(text)) if variants.contains(&text.as_str()) => text,
            Slot::Present(Value::String(_)) => {
                self.record(
                    ErrorCode::Enum,
                    format!("must be one of {}", variants.join(", ")),
                );
                first
            }
            _ => {
                self.refuse(&format!("one of {}", variants.join(", ")));
                first
            }
        };
        self.caught(visitor.visit_enum(UnitVariant { name: variant }))
    }

    fn deserialize_identifier<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Abort> {
        self.deserialize_str(visitor)
    }

    fn deserialize_ignored_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Abort> {
        visitor.visit_unit()
    }
}

/// The elements of an array, each read at its index.
struct Elements<'r, 'c, 'de, I> {
    items: I,
    parent: &'r Reader<'c, 'de>,
}

impl<'de, I: Iterator<Item = (usize, &'de Value)>> SeqAccess<'de> for Elements<'_, '_, 'de, I> {
    type Error = Abort;

    fn next_element_seed<S: DeserializeSeed<'de>>(
        &mut self,
        seed: S,
    ) -> Result<Option<S::Value>, Abort> {
        let Some((index, item)) = self.items.next() else {
            return Ok(None);
        };
        let path = self.parent.path.index(index);
        let reader = self.parent.child(Slot::Present(item), path.clone());
        let result = seed.deserialize(reader);
        self.parent.caught_at(&path, result).map(Some)
    }
}

/// The entries of an object read as a map, each value at its key.
struct Entries<'r, 'c, 'de, I> {
    entries: I,
    value: Option<(&'de String, &'de Value)>,
    parent: &'r Reader<'c, 'de>,
}

impl<'de, I: Iterator<Item = (&'de String, &'de Value)>> MapAccess<'de>
    for Entries<'_, '_, 'de, I>
{
    type Error = Abort;

    fn next_key_seed<S: DeserializeSeed<'de>>(
        &mut self,
        seed: S,
    ) -> Result<Option<S::Value>, Abort> {
        let Some((key, value)) = self.entries.next() else {
            return Ok(None);
        };
        self.value = Some((key, value));
        let key: StrDeserializer<'_, Abort> = key.as_str().into_deserializer();
        seed.deserialize(key).map(Some)
    }

    fn next_value_seed<S: DeserializeSeed<'de>>(&mut self, seed: S) -> Result<S::Value, Abort> {
        let (key, value) = self
            .value
            .take()
            .ok_or_else(|| de::Error::custom("a value was read before its key"))?;
        let path = self.parent.path.field(key);
        let reader = self.parent.child(Slot::Present(value), path.clone());
        let result = seed.deserialize(reader);
        self.parent.caught_at(&path, result)
    }
}

/// A struct's fields: every field the type declares, present or missing.
struct Fields<'r, 'c, 'de, I> {
    names: I,
    map: Option<&'de Map<String, Value>>,
    current: Option<&'static str>,
    parent: &'r Reader<'c, 'de>,
}

impl<'de, I: Iterator<Item = &'static &'static str>> MapAccess<'de> for Fields<'_, '_, 'de, I> {
    type Error = Abort;

    fn next_key_seed<S: DeserializeSeed<'de>>(
        &mut self,
        seed: S,
    ) -> Result<Option<S::Value>, Abort> {
        let Some(name) = self.names.next() else {
            return Ok(None);
        };
        self.current = Some(name);
        let key: StrDeserializer<'_, Abort> = (*name).into_deserializer();
        seed.deserialize(key).map(Some)
    }

    fn next_value_seed<S: DeserializeSeed<'de>>(&mut self, seed: S) -> Result<S::Value, Abort> {
        let name = self
            .current
            .take()
            .ok_or_else(|| de::Error::custom("a value was read before its key"))?;
        let slot = match self.map {
            Some(map) => map.get(name).map_or(Slot::Missing, Slot::Present),
            None => Slot::StandIn,
        };
        let path = self.parent.path.field(name);
        let reader = self.parent.child(slot, path.clone());
        let result = seed.deserialize(reader);
        self.parent.caught_at(&path, result)
    }
}

/// A unit variant, by name.
struct UnitVariant<'a> {
    name: &'a str,
}

impl<'de> EnumAccess<'de> for UnitVariant<'_> {
    type Error = Abort;
    type Variant = UnitOnly;

    fn variant_seed<S: DeserializeSeed<'de>>(self, seed: S) -> Result<(S::Value, UnitOnly), Abort> {
        let name: StrDeserializer<'_, Abort> = self.name.into_deserializer();
        Ok((seed.deserialize(name)?, UnitOnly))
    }
}

/// The content of a unit variant: nothing. Request enums carry no data.
struct UnitOnly;

impl<'de> VariantAccess<'de> for UnitOnly {
    type Error = Abort;

    fn unit_variant(self) -> Result<(), Abort> {
        Ok(())
    }

    fn newtype_variant_seed<S: DeserializeSeed<'de>>(self, _seed: S) -> Result<S::Value, Abort> {
        Err(de::Error::custom("must be a name, not an object"))
    }

    fn tuple_variant<V: Visitor<'de>>(self, _len: usize, _visitor: V) -> Result<V::Value, Abort> {
        Err(de::Error::custom("must be a name, not an array"))
    }

    fn struct_variant<V: Visitor<'de>>(
        self,
        _fields: &'static [&'static str],
        _visitor: V,
    ) -> Result<V::Value, Abort> {
        Err(de::Error::custom("must be a name, not an object"))
    }
}

#[cfg(test)]
mod tests {
    use serde::{Deserialize, Serialize};
    use serde_json::json;

    use super::*;

    #[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
    #[serde(rename_all = "snake_case")]
    enum Colour {
        Red,
        DarkBlue,
    }

    #[derive(Debug, PartialEq, Serialize, Deserialize)]
    struct Inner {
        size: u32,
        colour: Option<Colour>,
    }

    #[derive(Debug, PartialEq, Serialize, Deserialize)]
    struct Outer {
        name: String,
        count: i64,
        enabled: bool,
        colour: Colour,
        inner: Option<Inner>,
        items: Vec<Inner>,
        at: Option<crate::Timestamp>,
        raw: Option<Value>,
    }

    impl Request for Outer {}
    impl Request for Inner {}

    fn errors_of(body: Value) -> Vec<(String, &'static str)> {
        Read::<Outer>::from_json(&body)
            .check(|_| Ok::<_, Vec<FieldError>>(()))
            .unwrap_err()
            .into_iter()
            .map(|error| (error.field, error.code.as_str()))
            .collect()
    }

    fn pairs(list: &[(&str, &'static str)]) -> Vec<(String, &'static str)> {
        list.iter()
            .map(|(field, code)| ((*field).to_owned(), *code))
            .collect()
    }

    #[test]
    fn a_good_body_reads_as_serde_would() {
        let body = json!({"name": "n", "count": -3, "enabled": true, "colour": "dark_blue",
            "inner": null, "items": [{"size": 1, "colour": "red"}], "at": "2026-11-30T02:00:20Z",
            "raw": {"any": [1, "thing"]}});
        let read = Read::<Outer>::from_json(&body);
        let outer = read.check(|outer| Ok(outer.items.len())).unwrap();
        assert_eq!(outer, 1);
        let ours = Read::<Outer>::from_json(&body).request.unwrap();
        assert_eq!(ours, serde_json::from_value::<Outer>(body).unwrap());
    }

    #[test]
    fn every_error_at_once_with_its_path() {
        let body = json!({
            "name": 7, "count": 1.5, "enabled": "yes", "colour": "green", "extra": 1, "another": {},
            "inner": {"size": -1, "colour": 3},
            "items": [{"size": 18_446_744_073_709_551_616_f64}, "x", {"size": 4_294_967_296_u64, "what": 0}, {"size": 2.0}],
            "raw": 1,
        });
        assert_eq!(
            errors_of(body),
            pairs(&[
                ("another", "unknown_field"),
                ("extra", "unknown_field"),
                ("name", "type"),
                ("count", "type"),
                ("enabled", "type"),
                ("colour", "enum"),
                ("inner.size", "range"),
                ("inner.colour", "type"),
                ("items[0].size", "range"),
                ("items[1]", "type"),
                ("items[2].what", "unknown_field"),
                ("items[2].size", "range"),
            ])
        );
        let read = Read::<Outer>::from_json(&json!({"name": "n", "count": 1e2, "enabled": true,
            "colour": "red", "items": [{"size": 2.0}]}));
        assert_eq!(
            read.request
                .as_ref()
                .map(|outer| (outer.count, outer.items[0].size)),
            Some((100, 2)),
            "whole numbers written with a decimal point or exponent are integers"
        );
    }

    #[test]
    fn missing_fields_are_required_and_options_may_be_absent_or_null() {
        assert_eq!(
            errors_of(json!({"inner": {}, "raw": null})),
            pairs(&[
                ("name", "required"),
                ("count", "required"),
                ("enabled", "required"),
                ("colour", "required"),
                ("inner.size", "required"),
                ("items", "required"),
            ])
        );
    }

    #[test]
    fn not_an_object_is_one_error_at_the_root() {
        assert_eq!(errors_of(json!([1, 2])), pairs(&[("", "type")]));
        assert_eq!(errors_of(json!(null)), pairs(&[("", "type")]));
    }

    #[test]
    fn a_type_that_refuses_its_value_is_reported_at_its_field() {
        let body = json!({"name": 1, "count": 1, "enabled": true, "colour": "red", "items": [], "at": "soon"});
        let errors = Read::<Outer>::from_json(&body)
            .check(|_| Ok::<_, Vec<FieldError>>(()))
            .unwrap_err();
        let found: Vec<(&str, &str)> = errors
            .iter()
            .map(|e| (e.field.as_str(), e.code.as_str()))
            .collect();
        assert_eq!(found, [("name", "type"), ("at", "type")]);
        assert!(
            errors[1].message.contains("RFC 3339"),
            "{}",
            errors[1].message
        );
    }

    #[test]
    fn check_errors_join_in_field_order_without_repeating_unread_fields() {
        let body = json!({"name": 1, "count": 5, "enabled": true, "colour": "red",
            "items": [{"size": 1}, {"size": "big"}]});
        let errors = Read::<Outer>::from_json(&body)
            .check(|_| {
                Err::<(), _>(vec![
                    FieldError::new(
                        &FieldPath::root().field("items").index(1).field("size"),
                        ErrorCode::Range,
                        "too big",
                    ),
                    FieldError::new(
                        &FieldPath::root().field("items").index(0).field("size"),
                        ErrorCode::Range,
                        "too small",
                    ),
                    FieldError::new(&FieldPath::root().field("name"), ErrorCode::Required, "x"),
                    FieldError::new(&FieldPath::root().field("count"), ErrorCode::Range, "x"),
                ])
            })
            .unwrap_err();
        let found: Vec<(&str, &str)> = errors
            .iter()
            .map(|e| (e.field.as_str(), e.code.as_str()))
            .collect();
        assert_eq!(
            found,
            [
                ("name", "type"),
                ("count", "range"),
                ("items[0].size", "range"),
                ("items[1].size", "type"),
            ]
        );
    }

    #[test]
    fn unknown_fields_can_be_ignored() {
        let body = json!({"size": 3, "shape": "round"});
        let read = Read::<Inner>::from_json_with(&body, UnknownFields::Ignore);
        assert_eq!(read.check(|inner| Ok(inner.size)), Ok(3));
    }

    #[test]
    fn a_clean_request_reads_back_and_orders_check_errors() {
        let inner = Inner {
            size: 2,
            colour: None,
        };
        let errors = Read::clean(&inner)
            .check(|_| {
                Err::<(), _>(vec![
                    FieldError::new(&FieldPath::root().field("colour"), ErrorCode::Enum, "b"),
                    FieldError::new(&FieldPath::root().field("size"), ErrorCode::Range, "a"),
                ])
            })
            .unwrap_err();
        let fields: Vec<&str> = errors.iter().map(|e| e.field.as_str()).collect();
        assert_eq!(fields, ["size", "colour"]);
    }

    #[test]
    fn parents_and_containment() {
        assert_eq!(parent("a[1].b"), Some("a[1]"));
        assert_eq!(parent("a[1]"), Some("a"));
        assert_eq!(parent("a"), Some(""));
        assert_eq!(parent(""), None);
        assert!(is_within("items[1].size", "items[1]"));
        assert!(is_within("anything", ""));
        assert!(!is_within("items[10]", "items[1]"));
        assert!(!is_within("names", "name"));
    }
}
