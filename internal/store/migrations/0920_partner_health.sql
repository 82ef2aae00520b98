-- +goose Up
-- partner_health is the health of each platform's receiving side, judged by
-- what happens to the pushes the hub sends it: consecutive failed delivery
-- attempts, the age of the push that failed (lag) and the last success.
-- One row per platform, written by every replica's delivery workers.
CREATE TABLE partner_health (
    platform_id          BIGINT PRIMARY KEY,
    state                TEXT NOT NULL,
    consecutive_failures INTEGER NOT NULL DEFAULT 0,
    lag_us               BIGINT NOT NULL DEFAULT 0,
    last_success_at      BIGINT NOT NULL DEFAULT 0,
    last_failure_at      BIGINT NOT NULL DEFAULT 0,
    last_error           TEXT NOT NULL DEFAULT '',
    changed_at           BIGINT NOT NULL
);

-- +goose Down
DROP TABLE partner_health;
