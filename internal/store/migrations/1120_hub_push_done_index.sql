-- +goose Up
-- hub_push_history indexed every row by (state, updated_at), so each push
-- put an entry in it when it was queued and another at every state change,
-- open or not. Its only reader is the retention sweep, which deletes
-- finished rows by age: a partial index of finished rows serves it, and a
-- push queued or leased, which stays open, no longer writes to it. Open
-- rows are found through hub_push_queue, which holds only them.
DROP INDEX hub_push_history;
CREATE INDEX hub_push_done ON hub_push (updated_at) WHERE state IN ('delivered', 'rejected', 'superseded', 'failed', 'skipped');

-- +goose Down
DROP INDEX hub_push_done;
CREATE INDEX hub_push_history ON hub_push (state, updated_at);
