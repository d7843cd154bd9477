-- Candidates a route passed over without calling them: a circuit open past the
-- candidate's own wait, or a gateway request the candidate cannot carry. The
-- route view shows them among the attempts (`seq` within the task).
CREATE TABLE passed_over (
    task_id TEXT NOT NULL REFERENCES tasks (id) ON DELETE CASCADE,
    seq BIGINT NOT NULL,
    turn BIGINT NOT NULL,
    candidate_index BIGINT NOT NULL,
    candidate_id TEXT NOT NULL,
    provider_id TEXT NOT NULL,
    model TEXT NOT NULL,
    at_ms BIGINT NOT NULL,
    class TEXT NOT NULL,
    code TEXT NOT NULL,
    safe_cause TEXT NOT NULL,
    decision_json TEXT NOT NULL,
    PRIMARY KEY (task_id, seq)
);

-- What happened to the shared circuits, for the circuits page's last day: every
-- failure that opened (or extended) one, and every person's "Close now". Kept
-- for a week (the upkeep deletes older rows).
CREATE TABLE circuit_history (
    id BIGSERIAL PRIMARY KEY,
    provider_id TEXT NOT NULL,
    -- '' for the whole provider.
    model TEXT NOT NULL,
    -- opened, closed_by_person.
    kind TEXT NOT NULL,
    code TEXT NOT NULL,
    until_ms BIGINT NOT NULL,
    at_ms BIGINT NOT NULL,
    -- The route whose failure opened it.
    task_id TEXT
);

CREATE INDEX circuit_history_at ON circuit_history (at_ms);

-- Automatic recovery paused by a person, everywhere (scope '') or for one
-- provider (its id): while a row is here no deadline fires and no attempt
-- starts on what it covers. Routes keep their states and deadlines.
CREATE TABLE pauses (
    scope TEXT PRIMARY KEY,
    paused_at_ms BIGINT NOT NULL
);

-- Every pause and resume, in order.
CREATE TABLE pause_history (
    id BIGSERIAL PRIMARY KEY,
    scope TEXT NOT NULL,
    -- paused, resumed.
    kind TEXT NOT NULL,
    at_ms BIGINT NOT NULL
);
