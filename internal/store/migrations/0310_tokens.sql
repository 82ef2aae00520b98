-- +goose Up
-- tokens are the Tokens eMSPs push through the hub, and ocpihub's own eMSP
-- tokens: key columns and the canonical body. uid is stored upper case (a
-- CiString); the body keeps the eMSP's spelling.
CREATE TABLE tokens (
    pk            {{id}},
    country_code  TEXT NOT NULL,
    party_id      TEXT NOT NULL,
    uid           TEXT NOT NULL,
    type          TEXT NOT NULL,
    valid         BOOLEAN NOT NULL,
    whitelist     TEXT NOT NULL,
    last_updated  BIGINT NOT NULL,
    body          {{json}} NOT NULL,
    UNIQUE (country_code, party_id, uid, type)
);
CREATE INDEX tokens_page ON tokens (last_updated, pk);
CREATE INDEX tokens_party_page ON tokens (country_code, party_id, last_updated, pk);
-- Real-time authorization finds a token by what the charger read.
CREATE INDEX tokens_uid ON tokens (uid, type);

-- token_authorizations record every real-time authorization the hub
-- answered or passed on; the references ocpihub issues for its own tokens
-- are looked up here when a session or CDR carries them.
CREATE TABLE token_authorizations (
    pk                      {{id}},
    authorization_reference TEXT NOT NULL DEFAULT '',
    cpo_country_code        TEXT NOT NULL,
    cpo_party_id            TEXT NOT NULL,
    token_country_code      TEXT NOT NULL,
    token_party_id          TEXT NOT NULL,
    token_uid               TEXT NOT NULL,
    token_type              TEXT NOT NULL,
    location_id             TEXT NOT NULL DEFAULT '',
    -- evse_uids lists the EVSEs asked for, as a JSON array.
    evse_uids               {{json}},
    allowed                 TEXT NOT NULL,
    -- source: own (our token), whitelist or fallback (an eMSP's token
    -- answered from our copy), forwarded (the eMSP answered).
    source                  TEXT NOT NULL,
    created_at              BIGINT NOT NULL
);
CREATE INDEX token_authorizations_ref ON token_authorizations (authorization_reference);
CREATE INDEX token_authorizations_token ON token_authorizations (token_country_code, token_party_id, token_uid, created_at);

-- +goose Down
DROP TABLE token_authorizations;
DROP TABLE tokens;
