// Package ui is the console's page kit: the declarations of pages and actions, pagers, charts, the map, and
// how values are formatted for templates. It knows nothing of the hub's services (party notation apart).
package ui

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/ocpiclient"
	"github.com/ocpihub/ocpihub/internal/party"
)

// Page is one screen of the console.
type Page struct {
	// Path is the GET route below /console in ServeMux syntax:
	// "/parties/{id}".
	Path string
	// Title is the page's title (Load may refine it with a Titled value).
	Title string
	// Section and Nav place the page in the navigation; an empty Nav keeps
	// it out (detail pages).
	Section, Nav string
	// Template names templates/<Template>.html, which defines "content".
	Template string
	// Load returns the template's .Data. An ocpi ENOTFOUND error is a 404
	// page; other errors are logged and shown as a 500 page.
	Load func(r *http.Request) (any, error)
	// Refresh, when positive, reloads the page's main content every so many
	// seconds while the page is visible (live views).
	Refresh int
	// Dev shows the page in development mode only.
	Dev bool
}

// Titled is implemented by page data that names its page ("Acme Charging").
type Titled interface{ PageTitle() string }

// Action handles a POST of the console (a button). It runs after the CSRF
// check.
type Action struct {
	// Path is the POST route below /console: "/parties/{id}/suspend".
	Path string
	Do   func(r *http.Request) (Result, error)
}

// Result is what an action did.
type Result struct {
	// Redirect is the console path to show next (POST-redirect-GET).
	Redirect string
	// Flash is the message shown there; Failed shows it as an error.
	Flash  string
	Failed bool
	// Template, when set, renders that page directly instead of redirecting:
	// for what must be shown once and never again (a new token A).
	Template string
	Title    string
	Data     any
}

// PathInt reads a positive integer path value.
func PathInt(r *http.Request, name string) (int64, error) {
	n, err := strconv.ParseInt(r.PathValue(name), 10, 64)
	if err != nil || n <= 0 {
		return 0, &ocpi.Error{Code: ocpi.ENOTFOUND, Message: "not found: " + name + " must be a positive number"}
	}
	return n, nil
}

// PrettyJSON indents a JSON document (or encodes a value) for display.
func PrettyJSON(v any) string {
	var raw []byte
	switch x := v.(type) {
	case []byte:
		raw = x
	case json.RawMessage:
		raw = x
	case string:
		raw = []byte(x)
	default:
		b, err := json.Marshal(v)
		if err != nil {
			return fmt.Sprint(v)
		}
		raw = b
	}
	var out any
	if err := json.Unmarshal(raw, &out); err != nil {
		return string(raw)
	}
	b, _ := json.MarshalIndent(out, "", "  ")
	return string(b)
}

// WithQuery returns p with q's parameters, kv pairs set (empty value:
// removed). Changing anything but the page position starts from the first
// page.
func WithQuery(p string, q url.Values, kv ...string) string {
	v := url.Values{}
	for k, vs := range q {
		v[k] = append([]string(nil), vs...)
	}
	paging := true
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i] != "page" && kv[i] != "after" {
			paging = false
		}
	}
	if !paging {
		v.Del("page")
		v.Del("after")
	}
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i+1] == "" {
			v.Del(kv[i])
		} else {
			v.Set(kv[i], kv[i+1])
		}
	}
	if len(v) == 0 {
		return p
	}
	return p + "?" + v.Encode()
}

// SafePath reports whether p is a console path (no scheme, no host, no
// path traversal out of the console).
func SafePath(p string) bool {
	return strings.HasPrefix(p, "/") && !strings.HasPrefix(p, "//") && !strings.Contains(p, "\\") && !strings.Contains(p, "..")
}

// PartyParam reads a "CC/PID" filter parameter (zero when empty; the
// other notations are read too).
func PartyParam(s, name string) (ocpiclient.Party, error) {
	if s == "" {
		return ocpiclient.Party{}, nil
	}
	cc, pid, err := party.ParseParty(s)
	if err != nil {
		return ocpiclient.Party{}, ocpi.Invalid(name, "must be COUNTRY_CODE/PARTY_ID")
	}
	return ocpiclient.Party{CountryCode: cc, PartyID: pid}, nil
}
