package console

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"net/url"
	"path"
	"strings"
	"time"

	"github.com/ocpihub/ocpihub/internal/console/ui"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

// templates holds one template set per page: the layout and the shared
// partials, plus the page's own file.
type templates struct {
	pages map[string]*template.Template
}

func mustParseTemplates(funcs template.FuncMap) *templates {
	base := template.Must(template.New("base").Funcs(funcs).ParseFS(templateFS, "templates/layout.html", "templates/partials.html"))
	files, err := fs.Glob(templateFS, "templates/*.html")
	if err != nil {
		panic(err)
	}
	t := &templates{pages: map[string]*template.Template{}}
	for _, f := range files {
		name := strings.TrimSuffix(path.Base(f), ".html")
		if name == "layout" || name == "partials" {
			continue
		}
		t.pages[name] = template.Must(template.Must(base.Clone()).ParseFS(templateFS, f))
	}
	return t
}

// page returns a page's template set; a missing one is a programming error.
func (t *templates) page(name string) *template.Template {
	p, ok := t.pages[name]
	if !ok {
		panic("console: no template templates/" + name + ".html")
	}
	return p
}

// assetVersion is a digest of the embedded assets: their URLs change with
// them, so browsers may cache them for long.
var assetVersion = func() string {
	h := sha256.New()
	_ = fs.WalkDir(staticFS, "static", func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			b, _ := staticFS.ReadFile(p)
			h.Write(b)
		}
		return nil
	})
	return hex.EncodeToString(h.Sum(nil))[:12]
}()

// static serves the embedded CSS and JavaScript (no session needed: the
// sign-in page uses them).
func (c *Console) static() http.Handler {
	sub, _ := fs.Sub(staticFS, "static")
	files := http.StripPrefix("/console/static/", http.FileServerFS(sub))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/") {
			http.NotFound(w, r)
			return
		}
		if r.URL.Query().Get("v") == assetVersion {
			w.Header().Set("Cache-Control", "public, max-age=31536000, immutable")
		} else {
			w.Header().Set("Cache-Control", "no-cache")
		}
		files.ServeHTTP(w, r)
	})
}

// funcs are the template helpers.
func (c *Console) funcs() template.FuncMap {
	return template.FuncMap{
		// link returns the URL path of a console path.
		"link": func(p string) string { return c.path(p) },
		// rootLink returns the URL path of a hub path outside the console.
		"rootLink": func(p string) string { return strings.TrimRight(c.cfg.PublicURL.Path, "/") + p },
		// asset returns the URL of an embedded asset.
		"asset": func(name string) string { return c.path("/static/" + name + "?v=" + assetVersion) },
		// query returns the console path p with the current query, key set
		// to value ("" removes it; "page"/"after" reset when a filter
		// changes).
		"query": func(p string, q url.Values, kv ...string) string { return ui.WithQuery(p, q, kv...) },
		"tone":  ui.Tone,
		"ago":   func(t any) string { return ui.Ago(ui.ToTime(t), c.clock.Now()) },
		"abs":   func(t any) string { return ui.AbsTime(ui.ToTime(t)) },
		"iso": func(t any) string {
			tt := ui.ToTime(t)
			if tt.IsZero() {
				return ""
			}
			return tt.UTC().Format(time.RFC3339)
		},
		"isZero":     func(t any) bool { return ui.ToTime(t).IsZero() },
		"json":       ui.PrettyJSON,
		"trunc":      ui.Truncate,
		"join":       strings.Join,
		"pathEscape": url.PathEscape,
		"lower":      strings.ToLower,
		"title":      ui.TitleCase,
		"thousands":  func(n any) string { return ui.Thousands(ui.ToInt64(n)) },
		"add":        func(a, b int) int { return a + b },
		// deref reads an optional boolean.
		"deref": func(b *bool) bool { return b != nil && *b },
		// kw writes a power in watts as kW, exactly.
		"kw": func(w *int64) string {
			if w == nil {
				return ""
			}
			return ui.Scaled(*w, 1000, 1) + " kW"
		},
		"dict": dict,
		"list": func(v ...any) []any { return v },
		"selected": func(q url.Values, key, value string) bool {
			return q.Get(key) == value
		},
	}
}

// dict builds a map for passing several values to a partial.
func dict(kv ...any) (map[string]any, error) {
	if len(kv)%2 != 0 {
		return nil, fmt.Errorf("dict wants key, value pairs")
	}
	m := make(map[string]any, len(kv)/2)
	for i := 0; i < len(kv); i += 2 {
		k, ok := kv[i].(string)
		if !ok {
			return nil, fmt.Errorf("dict key %v is not a string", kv[i])
		}
		m[k] = kv[i+1]
	}
	return m, nil
}
