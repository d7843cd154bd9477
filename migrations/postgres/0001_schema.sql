-- Switchback on PostgreSQL: the same tables as the SQLite migrations one folder
-- up (see them for what each column means), for several server replicas on one
-- database. Times are BIGINT milliseconds since the Unix epoch; documents
-- (policies, decisions, episodes, evidence) are JSON text, as on SQLite, so both
-- drivers read the same rows. Every route write is fenced by `generation`.

CREATE TABLE instance (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    created_at_ms BIGINT NOT NULL
);

CREATE TABLE providers (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    name_key TEXT NOT NULL UNIQUE,
    kind TEXT NOT NULL,
    family TEXT NOT NULL,
    base_url TEXT NOT NULL,
    api_key_env TEXT,
    timeouts_json TEXT,
    script_json TEXT,
    revision BIGINT NOT NULL,
    created_at_ms BIGINT NOT NULL,
    updated_at_ms BIGINT NOT NULL
);

CREATE TABLE profiles (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    name_key TEXT NOT NULL UNIQUE,
    revision BIGINT NOT NULL,
    created_at_ms BIGINT NOT NULL,
    updated_at_ms BIGINT NOT NULL
);

CREATE TABLE candidates (
    id TEXT PRIMARY KEY,
    profile_id TEXT NOT NULL REFERENCES profiles (id) ON DELETE CASCADE,
    position BIGINT NOT NULL,
    provider_id TEXT NOT NULL REFERENCES providers (id),
    model TEXT NOT NULL,
    enabled BOOLEAN NOT NULL,
    max_tokens BIGINT NOT NULL,
    escalation_json TEXT NOT NULL,
    policy_json TEXT NOT NULL,
    UNIQUE (profile_id, position)
);

CREATE INDEX candidates_provider ON candidates (provider_id);

CREATE TABLE tasks (
    id TEXT PRIMARY KEY,
    profile_id TEXT NOT NULL,
    profile_name TEXT NOT NULL,
    idempotency_key TEXT UNIQUE,
    created_at_ms BIGINT NOT NULL
);

CREATE INDEX tasks_profile ON tasks (profile_id);
CREATE INDEX tasks_created ON tasks (created_at_ms DESC, id DESC);

CREATE TABLE task_candidates (
    task_id TEXT NOT NULL REFERENCES tasks (id) ON DELETE CASCADE,
    position BIGINT NOT NULL,
    candidate_id TEXT NOT NULL,
    provider_id TEXT NOT NULL,
    model TEXT NOT NULL,
    enabled BOOLEAN NOT NULL,
    max_tokens BIGINT NOT NULL,
    escalation_json TEXT NOT NULL,
    policy_json TEXT NOT NULL,
    PRIMARY KEY (task_id, position)
);

CREATE INDEX task_candidates_provider ON task_candidates (provider_id);

CREATE TABLE routes (
    task_id TEXT PRIMARY KEY REFERENCES tasks (id) ON DELETE CASCADE,
    state TEXT NOT NULL,
    generation BIGINT NOT NULL,
    candidate_index BIGINT NOT NULL,
    cause TEXT,
    deadline_ms BIGINT,
    retry_ordinal BIGINT,
    decision_json TEXT,
    class TEXT,
    code TEXT,
    catalogue TEXT,
    safe_cause TEXT,
    pending_outcome TEXT,
    circuit_wait BOOLEAN NOT NULL DEFAULT FALSE,
    through_circuit BOOLEAN NOT NULL DEFAULT FALSE,
    circuit_waited BOOLEAN NOT NULL DEFAULT FALSE,
    new_episode BOOLEAN NOT NULL DEFAULT TRUE,
    episode_json TEXT NOT NULL,
    turn BIGINT NOT NULL,
    escalations BIGINT NOT NULL DEFAULT 0,
    max_tokens BIGINT,
    updated_at_ms BIGINT NOT NULL,
    -- The replica that committed the route's last transition: while the route is
    -- queued, retrying or running, that replica dispatches it or has its call in
    -- flight. Another replica takes it over once the owner's heartbeat lapses.
    owner TEXT
);

CREATE INDEX routes_state ON routes (state);
CREATE INDEX routes_deadline ON routes (deadline_ms) WHERE deadline_ms IS NOT NULL;
CREATE INDEX routes_owned ON routes (owner) WHERE state IN ('queued', 'retrying', 'running');

CREATE TABLE attempts (
    id TEXT PRIMARY KEY,
    task_id TEXT NOT NULL REFERENCES tasks (id) ON DELETE CASCADE,
    seq BIGINT NOT NULL,
    turn BIGINT NOT NULL,
    generation BIGINT NOT NULL,
    candidate_index BIGINT NOT NULL,
    candidate_id TEXT NOT NULL,
    provider_id TEXT NOT NULL,
    model TEXT NOT NULL,
    ordinal BIGINT,
    max_tokens BIGINT NOT NULL,
    probe BOOLEAN NOT NULL DEFAULT FALSE,
    after_circuit_wait BOOLEAN NOT NULL DEFAULT FALSE,
    started_at_ms BIGINT NOT NULL,
    finished_at_ms BIGINT,
    outcome TEXT,
    class TEXT,
    code TEXT,
    confidence TEXT,
    catalogue TEXT,
    rule TEXT,
    safe_cause TEXT,
    reset_at_ms BIGINT,
    decision_json TEXT,
    evidence_json TEXT,
    UNIQUE (task_id, seq)
);

CREATE INDEX attempts_unfinished ON attempts (task_id) WHERE finished_at_ms IS NULL;

CREATE TABLE turns (
    task_id TEXT NOT NULL REFERENCES tasks (id) ON DELETE CASCADE,
    number BIGINT NOT NULL,
    prompt TEXT NOT NULL,
    answer TEXT,
    truncated BOOLEAN NOT NULL DEFAULT FALSE,
    candidate_index BIGINT,
    candidate_id TEXT,
    model TEXT,
    created_at_ms BIGINT NOT NULL,
    completed_at_ms BIGINT,
    PRIMARY KEY (task_id, number)
);

-- Shared by every replica: a circuit open over a provider (model '') or one of
-- its models, and the route that probes it at half-open (a lease: a probe whose
-- route is no longer running frees it).
CREATE TABLE circuits (
    provider_id TEXT NOT NULL,
    model TEXT NOT NULL,
    code TEXT NOT NULL,
    class TEXT NOT NULL,
    until_ms BIGINT NOT NULL,
    probe_task_id TEXT,
    opened_at_ms BIGINT NOT NULL,
    PRIMARY KEY (provider_id, model)
);

-- Ids are given out under a transaction-scoped advisory lock held to the commit,
-- so they increase in commit order: a reader that has seen id N has seen every
-- event before it, on any replica.
CREATE TABLE route_events (
    id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    task_id TEXT NOT NULL,
    data_json TEXT NOT NULL,
    created_at_ms BIGINT NOT NULL
);

-- The replicas serving this database, each with its last heartbeat: the routes of
-- one whose heartbeat lapsed are taken over by the others.
CREATE TABLE replicas (
    id TEXT PRIMARY KEY,
    started_at_ms BIGINT NOT NULL,
    heartbeat_at_ms BIGINT NOT NULL
);
