-- How long a gateway call through a profile waits when its client does not
-- say (docs/SPEC.md §8), in seconds; NULL: the server's default (120 s).
ALTER TABLE profiles ADD COLUMN gateway_deadline_s INTEGER;

-- The tool calls a turn's answer made (a gateway client's request that offered
-- tools), a JSON list of {id, name, arguments}; NULL when it made none.
ALTER TABLE turns ADD COLUMN tool_calls_json TEXT;
