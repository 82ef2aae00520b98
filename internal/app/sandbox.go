package app

import (
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"strings"

	"github.com/ocpihub/ocpihub/internal/ratelimit"
	"github.com/ocpihub/ocpihub/internal/store"
)

// SandboxConfig returns the configuration of the sandbox instance of c: the
// sandbox address, database and base URL, no rate limits, and no payment
// gateway settings, so the sandbox's payments go to the built-in PG
// simulator whatever production uses.
func (c Config) SandboxConfig() (Config, error) {
	if c.SandboxAddr == "" {
		return Config{}, errors.New("the sandbox is off: set --sandbox-addr (OCPIHUB_SANDBOX_ADDR)")
	}
	s := c
	s.Sandbox = true
	s.Addr, s.SandboxAddr = c.SandboxAddr, ""
	s.PublicURL, s.SandboxPublicURL = c.SandboxPublicURL, ""
	s.DB = c.SandboxDB
	if s.DB == "" {
		db, err := SandboxDBURL(c.DB)
		if err != nil {
			return Config{}, err
		}
		s.DB = db
	}
	if s.DB == c.DB {
		return Config{}, fmt.Errorf("the sandbox database must differ from production's (%s)", c.DB)
	}
	s.PGBaseURL, s.PGKeyID, s.PGKeySecret, s.PGWebhookSecret = "", "", "", ""
	s.RateLimit = ratelimit.Limits{}
	s.DevMode = c.DevMode
	return s, nil
}

// SandboxDBURL derives the sandbox's database from production's: a sibling
// SQLite file (ocpihub.db → ocpihub-sandbox.db), or on PostgreSQL the same
// server and database with the schema "sandbox" (or "<schema>_sandbox" when
// production names a search_path).
func SandboxDBURL(prod string) (string, error) {
	engine, target, err := store.ParseURL(prod)
	if err != nil {
		return "", err
	}
	if engine == store.Postgres {
		u, err := url.Parse(target)
		if err != nil {
			return "", fmt.Errorf("database URL: %w", err)
		}
		q := u.Query()
		schema := "sandbox"
		if sp := strings.TrimSpace(q.Get("search_path")); sp != "" {
			first, _, _ := strings.Cut(sp, ",")
			schema = strings.Trim(strings.TrimSpace(first), `"`) + "_sandbox"
		}
		q.Set("search_path", schema)
		u.RawQuery = q.Encode()
		return u.String(), nil
	}
	ext := filepath.Ext(target)
	return "sqlite:" + strings.TrimSuffix(target, ext) + "-sandbox" + ext, nil
}
