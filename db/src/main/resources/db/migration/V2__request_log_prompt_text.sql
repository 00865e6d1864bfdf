-- Owned by the engine/API (request log). Prompt text is only written when strata.log-prompts=true;
-- by default the column stays NULL so the log holds no user content.
ALTER TABLE request_log ADD COLUMN prompt_text CLOB;
