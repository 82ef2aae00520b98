-- +goose Up
-- auth_failures counts failed authentications (unknown tokens on the admin
-- API and OCPI, wrong console sign-ins) per client address in a fixed
-- window, shared by every replica. A client past the limit is refused until
-- its window ends; expired rows are purged one by one, never all at once.
CREATE TABLE auth_failures (
    client       TEXT PRIMARY KEY,
    window_start BIGINT NOT NULL,
    failures     INTEGER NOT NULL
);
CREATE INDEX auth_failures_window ON auth_failures (window_start);

-- +goose Down
DROP TABLE auth_failures;
