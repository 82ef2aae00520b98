package console

import (
	"bytes"
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ocpihub/ocpihub/internal/console/ui"
	"github.com/ocpihub/ocpihub/internal/ocpi"
)

// view is what every template gets.
type view struct {
	Title string
	Base  string // URL path of the console
	Path  string // console path of this page ("/parties/3")
	Nav   []navSection
	// Active is the path of the navigation item the page belongs to.
	Active  string
	Flash   *flash
	CSRF    string
	Data    any
	Now     time.Time
	Version string
	Refresh int
	Dev     bool
	Query   url.Values
}

type navSection struct {
	Name  string
	Items []navItem
}

type navItem struct {
	Label, Path string
}

func buildNav(pages []ui.Page) []navSection {
	var out []navSection
	for _, s := range sections {
		sec := navSection{Name: s}
		for _, p := range pages {
			if p.Nav != "" && p.Section == s {
				sec.Items = append(sec.Items, navItem{Label: p.Nav, Path: strings.TrimSuffix(p.Path, "{$}")})
			}
		}
		if len(sec.Items) > 0 {
			out = append(out, sec)
		}
	}
	for _, p := range pages {
		if p.Nav != "" && !slices.Contains(sections, p.Section) {
			out = append(out, navSection{Name: p.Section, Items: []navItem{{Label: p.Nav, Path: strings.TrimSuffix(p.Path, "{$}")}}})
		}
	}
	return out
}

// activeNav returns the path of the navigation item that the console path
// current belongs to: the item itself or the item it is a sub-page of. When
// several match (/payments and /payments/refunds for the refunds page) the
// most specific one wins, so exactly one item is highlighted; "" when none
// matches.
func activeNav(nav []navSection, current string) string {
	best := ""
	for _, s := range nav {
		for _, it := range s.Items {
			if (current == it.Path || (it.Path != "/" && strings.HasPrefix(current, it.Path+"/"))) && len(it.Path) > len(best) {
				best = it.Path
			}
		}
	}
	return best
}

// servePage loads and renders a page.
func (c *Console) servePage(p ui.Page) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		data, err := p.Load(r)
		if err != nil {
			c.renderLoadError(w, r, err)
			return
		}
		title := p.Title
		if t, ok := data.(ui.Titled); ok && t.PageTitle() != "" {
			title = t.PageTitle()
		}
		c.render(w, r, http.StatusOK, p.Template, title, data, p.Refresh)
	})
}

// serveAction runs an action and redirects (or renders its one-time page).
func (c *Console) serveAction(a ui.Action) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		res, err := a.Do(r)
		if err != nil {
			var oe *ocpi.Error
			if errors.As(err, &oe) && oe.Code != ocpi.EINTERNAL && oe.Code != ocpi.EUNAVAILABLE {
				// The operator's mistake or a refused transition: say so where
				// they were.
				c.setFlash(w, oe.Message, true)
				c.redirect(w, r, c.back(r, res.Redirect))
				return
			}
			c.logger.ErrorContext(r.Context(), "console action failed", "path", r.URL.Path, "error", err)
			c.renderError(w, r, http.StatusInternalServerError, "The action failed; the hub's log has the details.")
			return
		}
		if res.Template != "" {
			w.Header().Set("Cache-Control", "no-store")
			c.render(w, r, http.StatusOK, res.Template, res.Title, res.Data, 0)
			return
		}
		if res.Flash != "" {
			c.setFlash(w, res.Flash, res.Failed)
		}
		c.redirect(w, r, c.back(r, res.Redirect))
	})
}

// back returns where an action goes next: its redirect, else the form's
// "back" field, else the overview. Only console paths are followed.
func (c *Console) back(r *http.Request, redirect string) string {
	for _, p := range []string{redirect, r.PostFormValue("back")} {
		if ui.SafePath(p) {
			return p
		}
	}
	return "/"
}

func (c *Console) redirect(w http.ResponseWriter, r *http.Request, path string) {
	http.Redirect(w, r, c.path(path), http.StatusSeeOther)
}

// render executes a page template into a buffer and writes it: a template
// failure is a clean 500, never half a page.
func (c *Console) render(w http.ResponseWriter, r *http.Request, status int, name, title string, data any, refresh int) {
	v := view{
		Title: title, Base: c.base, Path: strings.TrimPrefix(r.URL.Path, "/console"), Nav: c.nav,
		Data: data, Now: c.clock.Now(), Version: c.cfg.Version, Refresh: refresh, Dev: c.cfg.Dev, Query: r.URL.Query(),
	}
	if v.Path == "" {
		v.Path = "/"
	}
	v.Active = activeNav(c.nav, v.Path)
	if s := sessionFrom(r.Context()); s != nil {
		v.CSRF = s.csrf
	}
	v.Flash = c.takeFlash(w, r)
	var buf bytes.Buffer
	if err := c.tmpl.page(name).ExecuteTemplate(&buf, "layout", v); err != nil {
		c.logger.ErrorContext(r.Context(), "console template failed", "template", name, "error", err)
		http.Error(w, "the page could not be rendered", http.StatusInternalServerError)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	if h.Get("Cache-Control") == "" {
		h.Set("Cache-Control", "no-cache, private")
	}
	h.Set("Content-Length", strconv.Itoa(buf.Len()))
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

// errorView is the data of the error page.
type errorView struct {
	Status  int
	Message string
}

func (c *Console) renderError(w http.ResponseWriter, r *http.Request, status int, msg string) {
	c.render(w, r, status, "error", http.StatusText(status), errorView{Status: status, Message: msg}, 0)
}

func (c *Console) renderLoadError(w http.ResponseWriter, r *http.Request, err error) {
	var oe *ocpi.Error
	if errors.As(err, &oe) {
		switch {
		case oe.Code == ocpi.ENOTFOUND || oe.Code == ocpi.EUNKNOWNLOCATION || oe.Code == ocpi.EUNKNOWNTOKEN:
			c.renderError(w, r, http.StatusNotFound, oe.Message)
			return
		case oe.Code == ocpi.EINVALID || oe.Code == ocpi.EINVALIDJSON:
			c.renderError(w, r, http.StatusBadRequest, oe.Message)
			return
		}
	}
	c.logger.ErrorContext(r.Context(), "console page failed", "path", r.URL.Path, "error", err)
	c.renderError(w, r, http.StatusInternalServerError, "The page could not be loaded; the hub's log has the details.")
}

// flash is a one-time message shown after a redirect.
type flash struct {
	Message string
	Failed  bool
}

const flashCookie = "ocpihub_console_flash"

func (c *Console) setFlash(w http.ResponseWriter, msg string, failed bool) {
	kind := "ok"
	if failed {
		kind = "error"
	}
	http.SetCookie(w, &http.Cookie{Name: flashCookie, Value: url.QueryEscape(kind + ":" + msg), Path: c.base, MaxAge: 60,
		HttpOnly: true, Secure: c.secure, SameSite: http.SameSiteStrictMode})
}

func (c *Console) takeFlash(w http.ResponseWriter, r *http.Request) *flash {
	ck, err := r.Cookie(flashCookie)
	if err != nil {
		return nil
	}
	http.SetCookie(w, &http.Cookie{Name: flashCookie, Value: "", Path: c.base, MaxAge: -1, HttpOnly: true, Secure: c.secure, SameSite: http.SameSiteStrictMode})
	v, err := url.QueryUnescape(ck.Value)
	if err != nil {
		return nil
	}
	kind, msg, ok := strings.Cut(v, ":")
	if !ok || msg == "" {
		return nil
	}
	if len(msg) > 500 {
		msg = msg[:500]
	}
	return &flash{Message: msg, Failed: kind == "error"}
}
