-- Providers and dynamic profiles. Times are integer milliseconds since the
-- Unix epoch; policy and escalation documents are JSON text. `name_key` is
-- the lower-cased name, so names are unique regardless of case. Every
-- update is fenced by `revision` (UPDATE ... WHERE revision = ?).

CREATE TABLE providers (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    name_key TEXT NOT NULL UNIQUE,
    kind TEXT NOT NULL,
    family TEXT NOT NULL,
    base_url TEXT NOT NULL,
    api_key_env TEXT,
    revision INTEGER NOT NULL,
    created_at_ms INTEGER NOT NULL,
    updated_at_ms INTEGER NOT NULL
);

CREATE TABLE profiles (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    name_key TEXT NOT NULL UNIQUE,
    revision INTEGER NOT NULL,
    created_at_ms INTEGER NOT NULL,
    updated_at_ms INTEGER NOT NULL
);

-- A profile's candidates in the user's order (`position` from 0).
CREATE TABLE candidates (
    id TEXT PRIMARY KEY,
    profile_id TEXT NOT NULL REFERENCES profiles (id) ON DELETE CASCADE,
    position INTEGER NOT NULL,
    provider_id TEXT NOT NULL REFERENCES providers (id),
    model TEXT NOT NULL,
    enabled INTEGER NOT NULL,
    max_tokens INTEGER NOT NULL,
    escalation_json TEXT NOT NULL,
    policy_json TEXT NOT NULL,
    UNIQUE (profile_id, position)
);

CREATE INDEX candidates_provider ON candidates (provider_id);
