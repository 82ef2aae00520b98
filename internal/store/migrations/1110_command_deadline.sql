-- +goose Up
-- Open commands are timed out by a periodic sweep of their deadlines
-- instead of a job stored with each command.
CREATE INDEX commands_open_deadline ON commands (deadline) WHERE state IN ('forwarding', 'accepted', 'unconfirmed');

-- +goose Down
DROP INDEX commands_open_deadline;
