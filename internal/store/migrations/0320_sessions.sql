-- +goose Up
-- sessions are the Sessions CPOs push through the hub: key columns and the
-- canonical body. token_country_code/token_party_id name the eMSP that owns
-- cdr_token, the only eMSP that sees the session.
CREATE TABLE sessions (
    pk                      {{id}},
    country_code            TEXT NOT NULL,
    party_id                TEXT NOT NULL,
    id                      TEXT NOT NULL,
    token_country_code      TEXT NOT NULL,
    token_party_id          TEXT NOT NULL,
    token_uid               TEXT NOT NULL,
    authorization_reference TEXT NOT NULL DEFAULT '',
    status                  TEXT NOT NULL,
    location_id             TEXT NOT NULL,
    evse_uid                TEXT NOT NULL,
    connector_id            TEXT NOT NULL,
    -- started_at and stopped_at are when session.started and
    -- session.stopped were emitted (0: not yet); each is emitted once.
    started_at              BIGINT NOT NULL DEFAULT 0,
    stopped_at              BIGINT NOT NULL DEFAULT 0,
    created_at              BIGINT NOT NULL,
    last_updated            BIGINT NOT NULL,
    body                    {{json}} NOT NULL,
    UNIQUE (country_code, party_id, id)
);
CREATE INDEX sessions_page ON sessions (last_updated, pk);
CREATE INDEX sessions_emsp_page ON sessions (token_country_code, token_party_id, last_updated, pk);
CREATE INDEX sessions_authorization_reference ON sessions (authorization_reference);
-- Commands name a session by its id alone.
CREATE INDEX sessions_id ON sessions (id);

-- +goose Down
DROP TABLE sessions;
