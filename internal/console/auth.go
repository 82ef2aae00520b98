package console

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/ocpihub/ocpihub/internal/authguard"
	"github.com/ocpihub/ocpihub/internal/console/ui"
	"github.com/ocpihub/ocpihub/internal/party"
	"github.com/ocpihub/ocpihub/internal/store"
)

const (
	sessionCookie = "ocpihub_console"
	// loginCookie carries the CSRF token of the sign-in form (there is no
	// session yet to hold it).
	loginCookie = "ocpihub_console_login"
	// LoginLinkTTL is how long a one-time sign-in link works.
	LoginLinkTTL = 10 * time.Minute
)

// session is a signed-in browser.
type session struct {
	idHash string
	csrf   string
}

type sessionKey struct{}

func sessionFrom(ctx context.Context) *session {
	s, _ := ctx.Value(sessionKey{}).(*session)
	return s
}

// randomToken returns 32 random bytes, URL-safe Base64.
func randomToken() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b) // crypto/rand.Read never fails (Go 1.24+)
	return base64.RawURLEncoding.EncodeToString(b)
}

func sha(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

// signedIn requires a live session; without one a page redirects to the
// sign-in form (and comes back after it), a POST is refused.
func (c *Console) signedIn(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s, found, err := c.lookupSession(r)
		if err != nil {
			c.logger.ErrorContext(r.Context(), "console session lookup failed", "error", err)
			c.renderError(w, r, http.StatusServiceUnavailable, "The console cannot reach its database.")
			return
		}
		if !found {
			if r.Method != http.MethodGet {
				c.renderError(w, r, http.StatusForbidden, "Your session has ended; sign in again.")
				return
			}
			next := strings.TrimPrefix(r.URL.RequestURI(), "/console")
			if !strings.HasPrefix(next, "/") {
				next = "/" + next
			}
			http.Redirect(w, r, c.path("/login")+"?next="+url.QueryEscape(next), http.StatusSeeOther)
			return
		}
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), sessionKey{}, s)))
	})
}

// lookupSession returns the request's live session; found is false when it
// has none (no cookie, an unknown, expired or idle session, or another
// admin token).
func (c *Console) lookupSession(r *http.Request) (s *session, found bool, err error) {
	ck, err := r.Cookie(sessionCookie)
	if err != nil || ck.Value == "" {
		return nil, false, nil
	}
	h := sha(ck.Value)
	var csrf, fp string
	var lastSeen, expires int64
	err = c.cfg.DB.Read().QueryRow(r.Context(), "SELECT csrf_token, admin_fp, last_seen_at, expires_at FROM console_sessions WHERE id_hash = $1", h).
		Scan(&csrf, &fp, &lastSeen, &expires)
	if errors.Is(err, store.ErrNoRows) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	now := c.clock.Now()
	if now.UnixMicro() >= expires || now.Sub(time.UnixMicro(lastSeen)) >= c.cfg.IdleTimeout ||
		subtle.ConstantTimeCompare([]byte(fp), []byte(c.cfg.Parties.AdminFingerprint())) != 1 {
		return nil, false, nil
	}
	c.touchSession(r.Context(), h, now, lastSeen)
	return &session{idHash: h, csrf: csrf}, true, nil
}

// touchSession records activity, at most once a minute per session.
func (c *Console) touchSession(ctx context.Context, h string, now time.Time, lastSeen int64) {
	if now.Sub(time.UnixMicro(lastSeen)) < time.Minute {
		return
	}
	c.mu.Lock()
	if t, ok := c.touched[h]; ok && now.Sub(t) < time.Minute {
		c.mu.Unlock()
		return
	}
	c.touched[h] = now
	if len(c.touched) > 10000 {
		clear(c.touched)
	}
	c.mu.Unlock()
	err := c.cfg.DB.InTx(ctx, func(ctx context.Context, tx *store.Tx) error {
		_, err := tx.Exec(ctx, "UPDATE console_sessions SET last_seen_at = $1 WHERE id_hash = $2", now.UnixMicro(), h)
		return err
	})
	if err != nil {
		c.logger.WarnContext(ctx, "could not record console activity", "error", err)
	}
}

// startSession opens a session and sets its cookie.
func (c *Console) startSession(w http.ResponseWriter, r *http.Request) error {
	id, csrf := randomToken(), randomToken()
	now := c.clock.Now()
	ua := r.UserAgent()
	if len(ua) > 200 {
		ua = ua[:200]
	}
	err := c.cfg.DB.InTx(r.Context(), func(ctx context.Context, tx *store.Tx) error {
		// Sessions that ended are of no use to anyone: clear them here.
		if _, err := tx.Exec(ctx, "DELETE FROM console_sessions WHERE expires_at < $1 OR last_seen_at < $2",
			now.UnixMicro(), now.Add(-c.cfg.IdleTimeout).UnixMicro()); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `INSERT INTO console_sessions (id_hash, csrf_token, admin_fp, user_agent, created_at, last_seen_at, expires_at)
			VALUES ($1, $2, $3, $4, $5, $5, $6)`, sha(id), csrf, c.cfg.Parties.AdminFingerprint(), ua, now.UnixMicro(), now.Add(c.cfg.SessionTTL).UnixMicro())
		return err
	})
	if err != nil {
		return err
	}
	http.SetCookie(w, &http.Cookie{Name: sessionCookie, Value: id, Path: c.base, HttpOnly: true, Secure: c.secure,
		SameSite: http.SameSiteStrictMode, MaxAge: int(c.cfg.SessionTTL / time.Second)})
	return nil
}

// loginView is the sign-in page's data.
type loginView struct {
	Next  string
	Error string
	CSRF  string
}

func (c *Console) handleLoginForm(w http.ResponseWriter, r *http.Request) {
	next := r.URL.Query().Get("next")
	if !ui.SafePath(next) {
		next = "/"
	}
	if code := r.URL.Query().Get("code"); code != "" {
		c.loginWithCode(w, r, code, next)
		return
	}
	if _, found, err := c.lookupSession(r); err == nil && found {
		c.redirect(w, r, next)
		return
	}
	c.loginPage(w, r, http.StatusOK, next, "")
}

func (c *Console) loginPage(w http.ResponseWriter, r *http.Request, status int, next, msg string) {
	tok := randomToken()
	http.SetCookie(w, &http.Cookie{Name: loginCookie, Value: tok, Path: c.base, HttpOnly: true, Secure: c.secure,
		SameSite: http.SameSiteStrictMode, MaxAge: 3600})
	w.Header().Set("Cache-Control", "no-store")
	c.render(w, r, status, "login", "Sign in", loginView{Next: next, Error: msg, CSRF: tok}, 0)
}

// handleLogin checks the admin token of the sign-in form.
func (c *Console) handleLogin(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, 16<<10)
	next := r.PostFormValue("next")
	if !ui.SafePath(next) {
		next = "/"
	}
	ck, err := r.Cookie(loginCookie)
	if err != nil || !c.sameOrigin(r) || subtle.ConstantTimeCompare([]byte(ck.Value), []byte(r.PostFormValue("csrf"))) != 1 {
		c.loginPage(w, r, http.StatusForbidden, next, "The sign-in form expired or came from elsewhere; try again.")
		return
	}
	ip := authguard.ClientAddr(r, c.cfg.TrustedProxies)
	client := authguard.Key(ip)
	wait, blocked, err := c.cfg.AuthGuard.Blocked(r.Context(), client)
	if err != nil {
		c.logger.WarnContext(r.Context(), "authentication guard unavailable; sign-in let through", "error", err)
	}
	if blocked {
		w.Header().Set("Retry-After", strconv.Itoa(int(wait.Seconds())+1))
		c.loginPage(w, r, http.StatusTooManyRequests, next, "Too many failed attempts from this address; wait a few minutes.")
		return
	}
	token := strings.TrimSpace(r.PostFormValue("token"))
	caller, err := c.cfg.Parties.Authenticate(r.Context(), []string{token})
	if err != nil || caller.Kind != party.CallerAdmin {
		if err := c.cfg.AuthGuard.Fail(r.Context(), client); err != nil {
			c.logger.WarnContext(r.Context(), "authentication guard could not count a failure", "error", err)
		}
		c.logger.WarnContext(r.Context(), "console sign-in refused", "client", ip)
		c.loginPage(w, r, http.StatusUnauthorized, next, "That is not the admin token.")
		return
	}
	if !c.beginSession(w, r) {
		return
	}
	c.logger.InfoContext(r.Context(), "console sign-in", "client", ip)
	c.redirect(w, r, next)
}

// beginSession starts the operator's session after a sign-in; when it
// cannot, it answers 500 and reports false.
func (c *Console) beginSession(w http.ResponseWriter, r *http.Request) bool {
	if err := c.startSession(w, r); err != nil {
		c.logger.ErrorContext(r.Context(), "console session could not start", "error", err)
		c.renderError(w, r, http.StatusInternalServerError, "The session could not be started.")
		return false
	}
	return true
}

// handleLogout ends the session (CSRF-checked: a link elsewhere cannot sign
// the operator out).
func (c *Console) handleLogout(w http.ResponseWriter, r *http.Request) {
	s, found, err := c.lookupSession(r)
	if err == nil && found {
		if !c.sameOrigin(r) || subtle.ConstantTimeCompare([]byte(s.csrf), []byte(r.PostFormValue("csrf"))) != 1 {
			c.renderError(w, r, http.StatusForbidden, "The form expired or came from elsewhere.")
			return
		}
		err = c.cfg.DB.InTx(r.Context(), func(ctx context.Context, tx *store.Tx) error {
			_, err := tx.Exec(ctx, "DELETE FROM console_sessions WHERE id_hash = $1", s.idHash)
			return err
		})
		if err != nil {
			c.logger.ErrorContext(r.Context(), "console sign-out failed", "error", err)
		}
	}
	http.SetCookie(w, &http.Cookie{Name: sessionCookie, Value: "", Path: c.base, MaxAge: -1, HttpOnly: true, Secure: c.secure, SameSite: http.SameSiteStrictMode})
	http.Redirect(w, r, c.path("/login"), http.StatusSeeOther)
}

// checkCSRF requires the session's CSRF token in the form and a same-origin
// request.
func (c *Console) checkCSRF(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
		s := sessionFrom(r.Context())
		if s == nil || !c.sameOrigin(r) || subtle.ConstantTimeCompare([]byte(s.csrf), []byte(r.PostFormValue("csrf"))) != 1 {
			c.renderError(w, r, http.StatusForbidden, "The form expired or came from elsewhere; reload the page and try again.")
			return
		}
		next.ServeHTTP(w, r)
	})
}

// sameOrigin checks the browser's Origin (or Sec-Fetch-Site) header when it
// sends one: a POST must come from the console's own origin.
func (c *Console) sameOrigin(r *http.Request) bool {
	if site := r.Header.Get("Sec-Fetch-Site"); site != "" && site != "same-origin" && site != "none" {
		return false
	}
	o := r.Header.Get("Origin")
	if o == "" || o == "null" && r.Header.Get("Sec-Fetch-Site") == "same-origin" {
		return true
	}
	if o == c.origin {
		return true
	}
	// The hub reached at its listen address rather than its public URL
	// (a laptop, a tunnel): the request's own host.
	u, err := url.Parse(o)
	return err == nil && u.Host == r.Host
}

// LoginLink creates a one-time sign-in link, valid for LoginLinkTTL.
func (c *Console) LoginLink(ctx context.Context) (string, error) {
	code := randomToken()
	now := c.clock.Now()
	err := c.cfg.DB.InTx(ctx, func(ctx context.Context, tx *store.Tx) error {
		_, err := tx.Exec(ctx, "INSERT INTO console_login_codes (code_hash, created_at, expires_at) VALUES ($1, $2, $3)",
			sha(code), now.UnixMicro(), now.Add(LoginLinkTTL).UnixMicro())
		return err
	})
	if err != nil {
		return "", err
	}
	return c.URL("/login") + "?code=" + code, nil
}

// loginWithCode signs in with a one-time link: the code is spent whether or
// not the session starts.
func (c *Console) loginWithCode(w http.ResponseWriter, r *http.Request, code, next string) {
	now := c.clock.Now().UnixMicro()
	var used int64
	err := c.cfg.DB.InTx(r.Context(), func(ctx context.Context, tx *store.Tx) error {
		n, err := tx.Exec(ctx, "UPDATE console_login_codes SET used_at = $1 WHERE code_hash = $2 AND used_at IS NULL AND expires_at > $1", now, sha(code))
		used = n
		return err
	})
	if err != nil {
		c.logger.ErrorContext(r.Context(), "console sign-in link failed", "error", err)
		c.renderError(w, r, http.StatusInternalServerError, "The sign-in link could not be checked.")
		return
	}
	if used != 1 {
		c.loginPage(w, r, http.StatusUnauthorized, next, "That sign-in link has expired or was used already; sign in with the admin token.")
		return
	}
	if !c.beginSession(w, r) {
		return
	}
	c.redirect(w, r, next)
}
