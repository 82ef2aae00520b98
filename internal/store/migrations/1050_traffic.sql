-- +goose Up
-- traffic records every OCPI exchange the hub takes part in: requests
-- partners send us (direction 'in') and requests we send them ('out'), one
-- row per attempt. Bodies are redacted, capped and gzip-compressed;
-- object_ids lists the OCPI object ids involved as '|id1|id2|' so one LIKE
-- finds an object's traffic; size is the row's approximate bytes, for the
-- size cap. The retention job removes rows in batches (internal/traffic).
CREATE TABLE traffic (
    id              {{id}},
    at              BIGINT NOT NULL,
    direction       TEXT NOT NULL,
    platform_id     BIGINT NOT NULL DEFAULT 0,
    partner         TEXT NOT NULL DEFAULT '',
    module          TEXT NOT NULL DEFAULT '',
    method          TEXT NOT NULL,
    url             TEXT NOT NULL,
    http_status     INTEGER NOT NULL DEFAULT 0,
    status_code     INTEGER NOT NULL DEFAULT 0,
    duration_us     BIGINT NOT NULL DEFAULT 0,
    request_id      TEXT NOT NULL DEFAULT '',
    correlation_id  TEXT NOT NULL DEFAULT '',
    from_party      TEXT NOT NULL DEFAULT '',
    to_party        TEXT NOT NULL DEFAULT '',
    object_ids      TEXT NOT NULL DEFAULT '',
    error           TEXT NOT NULL DEFAULT '',
    request_header  TEXT NOT NULL DEFAULT '',
    response_header TEXT NOT NULL DEFAULT '',
    request_body    {{bytes}},
    response_body   {{bytes}},
    size            BIGINT NOT NULL DEFAULT 0
);
-- One index besides the key: every row written costs an entry in each, and
-- recording must stay cheap. Retention walks the oldest ids (they are the
-- oldest times); lists newest first walk the newest ids and stop at a page.
CREATE INDEX traffic_correlation ON traffic (correlation_id, at);

-- +goose Down
DROP TABLE traffic;
