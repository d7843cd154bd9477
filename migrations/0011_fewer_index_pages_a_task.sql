-- A new task's commit writes every page it changes, whole, to the log before its
-- fsync; each index it adds a row to costs one to three pages. These four cost a
-- commit about six of its 38 one-KiB pages, for reads that do as well without them:
-- the profile and provider in-use checks go from the unfinished routes (by
-- routes_state) to their tasks; a restart's unfinished attempts are found by the
-- attempts' (task_id, seq) key. The task list's index ran newest first, so every
-- new task went in at its left edge, the costliest place in a B-tree: ascending,
-- new tasks go at its right edge, and the list reads it backwards, unsorted.
DROP INDEX tasks_profile;
DROP INDEX task_candidates_provider;
DROP INDEX attempts_unfinished;
DROP INDEX tasks_created;
CREATE INDEX tasks_created ON tasks (created_at_ms, id);
