-- +goose Up
-- console_sessions are the operator's signed-in browsers. The cookie holds a
-- random session id; only its SHA-256 is stored. admin_fp ties a session to
-- the admin token it was opened with: a new admin token ends every session.
CREATE TABLE console_sessions (
    id_hash      TEXT PRIMARY KEY,
    csrf_token   TEXT NOT NULL,
    admin_fp     TEXT NOT NULL,
    user_agent   TEXT NOT NULL DEFAULT '',
    created_at   BIGINT NOT NULL,
    last_seen_at BIGINT NOT NULL,
    expires_at   BIGINT NOT NULL
);
CREATE INDEX console_sessions_expiry ON console_sessions (expires_at);

-- console_login_codes are one-time sign-in links (ocpihub demo prints one):
-- valid for minutes, used once; only their SHA-256 is stored.
CREATE TABLE console_login_codes (
    code_hash  TEXT PRIMARY KEY,
    created_at BIGINT NOT NULL,
    expires_at BIGINT NOT NULL,
    used_at    BIGINT
);

-- +goose Down
DROP TABLE console_login_codes;
DROP TABLE console_sessions;
