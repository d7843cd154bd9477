"""Schemathesis hooks for Switchback's bounded conformance run.

One custom check, `field_errors_from_state_only`: a schema-valid request may be
refused with 422 only for what a JSON Schema cannot state. Every other 422 to
a schema-valid body means the document and the server disagree.

The built-in `positive_data_acceptance` is configured (schemathesis.toml) to
let 422 through; this check then looks inside each such 422.
"""
import json

import schemathesis

# Field-error codes that depend on stored state or relate several values:
#   unique    - a name already taken; a candidate id repeated in one request
#   not_found - a provider_id / candidate id that names nothing stored
#   conflict  - a version-1 rule map whose codes of one class disagree
STATE_CODES = {"unique", "not_found", "conflict"}
# Refusals that depend on a route's state or a profile's stored candidates:
#   not_allowed_now      - an action (or a new turn) the route's state does not allow
#   no_enabled_candidate - a task on a profile whose candidates are all disabled
STATE_ERRORS = {"not_allowed_now", "no_enabled_candidate"}


@schemathesis.check
def field_errors_from_state_only(ctx, response, case):
    meta = case.meta
    if meta is None or not meta.generation.mode.is_positive:
        return None
    if response.status_code != 422:
        return None
    try:
        body = json.loads(response.content)
        if body.get("error") in STATE_ERRORS:
            return None
        errors = body["errors"]
        codes = [(e["field"], e["code"]) for e in errors]
    except (ValueError, KeyError, TypeError):
        raise AssertionError(f"422 without a field-error list: {response.content[:300]!r}")
    other = [f"{field}: {code}" for field, code in codes if code not in STATE_CODES]
    if other:
        raise AssertionError(
            "Schema-valid request refused for a reason the document could state:\n  "
            + "\n  ".join(other)
        )
    return None
