-- The restart pass reads the routes of a state a page at a time, in task id
-- order: by state, then task id, each page starts where the last one ended
-- instead of sorting every route of the state again.
DROP INDEX routes_state;
CREATE INDEX routes_state ON routes (state, task_id);
