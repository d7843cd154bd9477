-- Route events get their public id (`seq`) after their commit, in batches, from a
-- sequencer transaction that holds the log's advisory lock to its own commit: the
-- ids follow the order the batches commit, so a reader that has seen id N has seen
-- every event before it, on any replica, and a transition's commit no longer waits
-- for the others' (only the sequencing is one at a time, and it takes whatever
-- committed meanwhile). `id` stays the row's own, in insertion order.
ALTER TABLE route_events ADD COLUMN seq BIGINT UNIQUE;
CREATE SEQUENCE route_event_seq;
CREATE INDEX route_events_unsequenced ON route_events (id) WHERE seq IS NULL;
