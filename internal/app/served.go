package app

import (
	"context"
	"errors"
	"net/url"

	"github.com/ocpihub/ocpihub/internal/store"
)

// servedURLSetting is the settings row holding the public URL the hub last
// served at.
const servedURLSetting = "served_public_url"

// recordServedURL stores the public URL this hub serves at, so that the
// commands run beside it (ocpihub party invite, qr, …) print the addresses
// partners must use even when serve was given --addr or --public-url and the
// command was not.
func (a *App) recordServedURL(ctx context.Context) error {
	return a.DB.InTx(ctx, func(ctx context.Context, tx *store.Tx) error {
		_, err := tx.Exec(ctx, `INSERT INTO settings (key, value, updated_at) VALUES ($1, $2, $3)
			ON CONFLICT (key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at`,
			servedURLSetting, a.PublicURL(), a.Clock.Now().UnixMicro())
		return err
	})
}

// servedURL is the public URL a command uses: its own --public-url or
// --addr when given, else the URL the hub on the same database serves at,
// else the default.
func (a *App) servedURL(ctx context.Context, cfg Config, own *url.URL) (*url.URL, error) {
	if cfg.PublicURL != "" || cfg.Addr != Defaults().Addr {
		return own, nil
	}
	var v string
	err := a.DB.Read().QueryRow(ctx, "SELECT value FROM settings WHERE key = $1", servedURLSetting).Scan(&v)
	if errors.Is(err, store.ErrNoRows) {
		return own, nil
	}
	if err != nil {
		return nil, err
	}
	u, err := url.Parse(v)
	if err != nil || u.Host == "" {
		return own, nil
	}
	return u, nil
}
