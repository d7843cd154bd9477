-- Client keys (docs/SPEC.md §8): what gateway callers present on a server
-- with an admin token. Only the key's SHA-256 digest is kept (hex); `prefix`
-- is its first characters, to tell keys apart. `profile_ids_json` lists the
-- profiles it may use. A revoked key keeps its row, with when.
CREATE TABLE client_keys (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    digest TEXT NOT NULL UNIQUE,
    prefix TEXT NOT NULL,
    profile_ids_json TEXT NOT NULL,
    created_at_ms BIGINT NOT NULL,
    revoked_at_ms BIGINT
);
