-- One row describing this Switchback database: when it was created, in
-- integer milliseconds since the Unix epoch (times are integers everywhere).
CREATE TABLE instance (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    created_at_ms INTEGER NOT NULL
);
