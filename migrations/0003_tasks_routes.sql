-- Tasks and the durable route engine (SPEC 5). Times are integer milliseconds
-- since the Unix epoch; documents (policies, decisions, episodes, evidence) are
-- JSON text. Every route write is fenced by `generation`
-- (UPDATE routes ... WHERE task_id = ? AND generation = ?) and bumps it.

-- A task and its profile's snapshot: the route uses only the snapshot, so later
-- edits to the profile affect new tasks only.
CREATE TABLE tasks (
    id TEXT PRIMARY KEY,
    profile_id TEXT NOT NULL,
    profile_name TEXT NOT NULL,
    -- A client's Idempotency-Key: a repeat returns the first task.
    idempotency_key TEXT UNIQUE,
    created_at_ms INTEGER NOT NULL
);

CREATE INDEX tasks_profile ON tasks (profile_id);
CREATE INDEX tasks_created ON tasks (created_at_ms DESC, id DESC);

-- The snapshot of the profile's candidates, in order (`position` from 0).
CREATE TABLE task_candidates (
    task_id TEXT NOT NULL REFERENCES tasks (id) ON DELETE CASCADE,
    position INTEGER NOT NULL,
    candidate_id TEXT NOT NULL,
    provider_id TEXT NOT NULL,
    model TEXT NOT NULL,
    enabled INTEGER NOT NULL,
    max_tokens INTEGER NOT NULL,
    escalation_json TEXT NOT NULL,
    policy_json TEXT NOT NULL,
    PRIMARY KEY (task_id, position)
);

CREATE INDEX task_candidates_provider ON task_candidates (provider_id);

-- One route per task: where it is in SPEC 5's machine.
CREATE TABLE routes (
    task_id TEXT PRIMARY KEY REFERENCES tasks (id) ON DELETE CASCADE,
    state TEXT NOT NULL,
    generation INTEGER NOT NULL,
    candidate_index INTEGER NOT NULL,
    -- Why it is held or stopped.
    cause TEXT,
    -- The pending deadline of retry_wait and waiting_for_reset.
    deadline_ms INTEGER,
    retry_ordinal INTEGER,
    -- The last decision (policy::Decision) and the failure it was taken for.
    decision_json TEXT,
    class TEXT,
    code TEXT,
    catalogue TEXT,
    safe_cause TEXT,
    -- What the policy does when exhausted for that failure: skip or stop.
    pending_outcome TEXT,
    circuit_wait INTEGER NOT NULL DEFAULT 0,
    through_circuit INTEGER NOT NULL DEFAULT 0,
    new_episode INTEGER NOT NULL DEFAULT 1,
    -- policy::Episode: retries per class, and whether the one reset wait was used.
    episode_json TEXT NOT NULL,
    -- The turn in progress (or last completed), and its token escalations so far.
    turn INTEGER NOT NULL,
    escalations INTEGER NOT NULL DEFAULT 0,
    -- The token budget of the next send when escalated; NULL: the candidate's.
    max_tokens INTEGER,
    updated_at_ms INTEGER NOT NULL
);

CREATE INDEX routes_state ON routes (state);
CREATE INDEX routes_deadline ON routes (deadline_ms) WHERE deadline_ms IS NOT NULL;

-- Every attempt, oldest first (`seq` within the task). Immutable once finished:
-- finishing is UPDATE ... WHERE finished_at_ms IS NULL.
CREATE TABLE attempts (
    id TEXT PRIMARY KEY,
    task_id TEXT NOT NULL REFERENCES tasks (id) ON DELETE CASCADE,
    seq INTEGER NOT NULL,
    turn INTEGER NOT NULL,
    -- The route generation the attempt started at (the `running` one).
    generation INTEGER NOT NULL,
    candidate_index INTEGER NOT NULL,
    candidate_id TEXT NOT NULL,
    provider_id TEXT NOT NULL,
    model TEXT NOT NULL,
    -- The retry it dispatched (NULL: a first send, a send after a reset wait).
    ordinal INTEGER,
    max_tokens INTEGER NOT NULL,
    -- Whether it probed a half-open circuit.
    probe INTEGER NOT NULL DEFAULT 0,
    started_at_ms INTEGER NOT NULL,
    finished_at_ms INTEGER,
    -- answered, truncated, escalated, failed, cancelled, interrupted, superseded.
    outcome TEXT,
    class TEXT,
    code TEXT,
    confidence TEXT,
    catalogue TEXT,
    rule TEXT,
    safe_cause TEXT,
    reset_at_ms INTEGER,
    decision_json TEXT,
    -- The evidence as the adapter saw it (no key is ever in it), so the attempt can
    -- be classified again by a later catalogue.
    evidence_json TEXT,
    UNIQUE (task_id, seq)
);

CREATE INDEX attempts_unfinished ON attempts (task_id) WHERE finished_at_ms IS NULL;

-- A task's turns: each records, forever, the candidate that produced its answer.
CREATE TABLE turns (
    task_id TEXT NOT NULL REFERENCES tasks (id) ON DELETE CASCADE,
    number INTEGER NOT NULL,
    prompt TEXT NOT NULL,
    answer TEXT,
    truncated INTEGER NOT NULL DEFAULT 0,
    candidate_index INTEGER,
    candidate_id TEXT,
    model TEXT,
    created_at_ms INTEGER NOT NULL,
    completed_at_ms INTEGER,
    PRIMARY KEY (task_id, number)
);

-- Shared circuits (SPEC 5): open over a provider (model '') or one of its models
-- until `until_ms`; at half-open the route named in `probe_task_id` probes it.
CREATE TABLE circuits (
    provider_id TEXT NOT NULL,
    model TEXT NOT NULL,
    code TEXT NOT NULL,
    class TEXT NOT NULL,
    until_ms INTEGER NOT NULL,
    probe_task_id TEXT,
    opened_at_ms INTEGER NOT NULL,
    PRIMARY KEY (provider_id, model)
);

-- One row per committed route transition, written in its transaction: the live
-- events' ids, so a reconnecting client gets what it missed (or is told to resync).
CREATE TABLE route_events (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    task_id TEXT NOT NULL,
    data_json TEXT NOT NULL,
    created_at_ms INTEGER NOT NULL
);

-- Per-provider call timeouts ({"connect_ms", "first_byte_ms", "idle_ms"}; NULL:
-- the defaults) and a simulated provider's script of outcomes (a JSON array).
ALTER TABLE providers ADD COLUMN timeouts_json TEXT;
ALTER TABLE providers ADD COLUMN script_json TEXT;
