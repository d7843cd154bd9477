-- A circuit wait in a route's history: the route remembers that it waited on an
-- open circuit until its next attempt starts, and that attempt records it, so the
-- timeline names the wait before it for what it was.
ALTER TABLE routes ADD COLUMN circuit_waited INTEGER NOT NULL DEFAULT 0;
ALTER TABLE attempts ADD COLUMN after_circuit_wait INTEGER NOT NULL DEFAULT 0;
