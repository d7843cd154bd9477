-- A gateway call is a task (docs/SPEC.md §8): what its client sent, in which
-- protocol and whether it streams, and when its client stops waiting. A task
-- started on the task API has none of them.
ALTER TABLE tasks ADD COLUMN kind TEXT NOT NULL DEFAULT 'task';
-- {"wire": "openai"|"anthropic", "stream": bool, "body": {...}}: the client's
-- request body as it sent it (its key is a header, never in the body).
ALTER TABLE tasks ADD COLUMN request_json TEXT;
ALTER TABLE tasks ADD COLUMN respond_by_ms BIGINT;
