-- +goose Up
-- platforms are the connected OCPI platforms: one credentials token pair
-- each, the version we speak with them and their endpoints.
CREATE TABLE platforms (
    id               {{id}},
    name             TEXT NOT NULL,
    status           TEXT NOT NULL,
    -- connection is what HubClientInfo reports: CONNECTED or OFFLINE,
    -- maintained by the liveness job.
    connection       TEXT NOT NULL DEFAULT 'CONNECTED',
    version          TEXT NOT NULL DEFAULT '',
    versions_url     TEXT NOT NULL DEFAULT '',
    endpoints        {{json}} NOT NULL,
    -- SHA-256 (hex) of the token the platform calls us with; the next one
    -- during a rotation we start.
    token_in_hash    TEXT UNIQUE,
    token_next_hash  TEXT UNIQUE,
    -- the token we call the platform with, encrypted when a key is set.
    token_out        TEXT NOT NULL DEFAULT '',
    token_base64     BOOLEAN NOT NULL DEFAULT TRUE,
    sandbox          BOOLEAN NOT NULL DEFAULT FALSE,
    initiated_by_us  BOOLEAN NOT NULL DEFAULT FALSE,
    rate_limits      {{json}},
    last_seen_at     BIGINT NOT NULL DEFAULT 0,
    last_error       TEXT NOT NULL DEFAULT '',
    created_at       BIGINT NOT NULL,
    updated_at       BIGINT NOT NULL
);
CREATE INDEX platforms_status ON platforms (status);

-- platform_roles are the parties a platform hosts. A party (role, country
-- code, party id) belongs to one platform at a time.
CREATE TABLE platform_roles (
    platform_id      BIGINT NOT NULL REFERENCES platforms (id) ON DELETE CASCADE,
    role             TEXT NOT NULL,
    country_code     TEXT NOT NULL,
    party_id         TEXT NOT NULL,
    business_details {{json}} NOT NULL,
    updated_at       BIGINT NOT NULL,
    PRIMARY KEY (role, country_code, party_id)
);
CREATE INDEX platform_roles_platform ON platform_roles (platform_id);
CREATE INDEX platform_roles_party ON platform_roles (country_code, party_id);

-- invitations are one-time registration tokens (token A).
CREATE TABLE invitations (
    id          {{id}},
    name        TEXT NOT NULL,
    token_hash  TEXT NOT NULL UNIQUE,
    sandbox     BOOLEAN NOT NULL DEFAULT FALSE,
    created_at  BIGINT NOT NULL,
    expires_at  BIGINT NOT NULL,
    used_at     BIGINT,
    platform_id BIGINT
);

-- client_info remembers the status each party last had in HubClientInfo, so
-- that a change is pushed once.
CREATE TABLE client_info (
    pk           {{id}},
    role         TEXT NOT NULL,
    country_code TEXT NOT NULL,
    party_id     TEXT NOT NULL,
    status       TEXT NOT NULL,
    last_updated BIGINT NOT NULL,
    UNIQUE (role, country_code, party_id)
);
CREATE INDEX client_info_page ON client_info (last_updated, pk);

-- +goose Down
DROP TABLE client_info;
DROP TABLE invitations;
DROP TABLE platform_roles;
DROP TABLE platforms;
