-- +goose Up
-- commands are the asynchronous requests the hub relays to CPOs: Commands
-- (START_SESSION …) and charging profile requests (SET_CHARGING_PROFILE,
-- GET_ACTIVE_CHARGING_PROFILE, CLEAR_PROFILE), with their whole lifecycle.
-- A command is stored before it is forwarded; the CPO posts its result to
-- the hub's own URL for it ({public}/ocpi/2.2.1/cpo/{module}/{command}/{id}).
CREATE TABLE commands (
    id                      TEXT PRIMARY KEY,
    module                  TEXT NOT NULL,
    command                 TEXT NOT NULL,
    -- forwarding, accepted, unconfirmed (the CPO did not answer in time),
    -- rejected, failed (never reached the CPO), completed, timeout
    state                   TEXT NOT NULL,
    -- the requester: a platform (0: ocpihub itself) and the party it acts
    -- for; results go to its response_url, or to an in-process hook.
    requester_platform_id   BIGINT NOT NULL DEFAULT 0,
    requester_country_code  TEXT NOT NULL,
    requester_party_id      TEXT NOT NULL,
    response_url            TEXT NOT NULL DEFAULT '',
    hook                    TEXT NOT NULL DEFAULT '',
    cpo_country_code        TEXT NOT NULL DEFAULT '',
    cpo_party_id            TEXT NOT NULL DEFAULT '',
    location_id             TEXT NOT NULL DEFAULT '',
    evse_uid                TEXT NOT NULL DEFAULT '',
    connector_id            TEXT NOT NULL DEFAULT '',
    session_id              TEXT NOT NULL DEFAULT '',
    reservation_id          TEXT NOT NULL DEFAULT '',
    authorization_reference TEXT NOT NULL DEFAULT '',
    -- request is the body as the requester sent it; forwarded as the hub
    -- sent it to the CPO (response_url rewritten).
    request                 {{json}} NOT NULL,
    forwarded               {{json}},
    -- the CPO's synchronous answer: HTTP status, envelope status_code, the
    -- response's result and timeout.
    response_http           INTEGER NOT NULL DEFAULT 0,
    response_status         INTEGER NOT NULL DEFAULT 0,
    response                {{json}},
    response_result         TEXT NOT NULL DEFAULT '',
    timeout_seconds         INTEGER NOT NULL DEFAULT 0,
    -- deadline: past it without a result, the requester gets TIMEOUT.
    deadline                BIGINT NOT NULL DEFAULT 0,
    -- result is the last result relayed to the requester.
    result                  TEXT NOT NULL DEFAULT '',
    error                   TEXT NOT NULL DEFAULT '',
    correlation_id          TEXT NOT NULL DEFAULT '',
    created_at              BIGINT NOT NULL,
    updated_at              BIGINT NOT NULL
);
CREATE INDEX commands_created ON commands (created_at, id);
CREATE INDEX commands_state ON commands (state, created_at);
CREATE INDEX commands_reservation ON commands (requester_country_code, requester_party_id, reservation_id);
CREATE INDEX commands_authorization_reference ON commands (authorization_reference);

-- command_results are every result a CPO posted for a command (late and
-- repeated ones included) and the TIMEOUT results the hub made, with their
-- relay to the requester: pending, delivered, failed (given up), skipped
-- (late or repeated: recorded, not relayed).
CREATE TABLE command_results (
    pk              {{id}},
    command_id      TEXT NOT NULL,
    source          TEXT NOT NULL,
    result          TEXT NOT NULL,
    body            {{json}} NOT NULL,
    relay           TEXT NOT NULL,
    relay_attempts  INTEGER NOT NULL DEFAULT 0,
    relay_error     TEXT NOT NULL DEFAULT '',
    received_at     BIGINT NOT NULL,
    relayed_at      BIGINT NOT NULL DEFAULT 0
);
CREATE INDEX command_results_command ON command_results (command_id, pk);

-- profile_setters are the parties that successfully set a charging profile
-- on a session: the CPO's ActiveChargingProfile updates for the session go
-- to them (chargingprofiles.md §2).
CREATE TABLE profile_setters (
    cpo_country_code        TEXT NOT NULL,
    cpo_party_id            TEXT NOT NULL,
    session_id              TEXT NOT NULL,
    platform_id             BIGINT NOT NULL,
    country_code            TEXT NOT NULL,
    party_id                TEXT NOT NULL,
    updated_at              BIGINT NOT NULL,
    PRIMARY KEY (cpo_country_code, cpo_party_id, session_id, platform_id)
);

-- +goose Down
DROP TABLE profile_setters;
DROP TABLE command_results;
DROP TABLE commands;
