-- +goose Up
-- traceparent names the span whose transaction recorded a change (the
-- request's), so the push that delivers it continues that trace.
ALTER TABLE hub_change ADD COLUMN traceparent TEXT NOT NULL DEFAULT '';
ALTER TABLE hub_push ADD COLUMN traceparent TEXT NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE hub_push DROP COLUMN traceparent;
ALTER TABLE hub_change DROP COLUMN traceparent;
