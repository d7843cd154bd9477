-- What a `cli` provider runs (an agent CLI: its preset, command, working
-- directory, the variables passed through, its time zone), as JSON; NULL for
-- every other kind.
ALTER TABLE providers ADD COLUMN cli_json TEXT;
