package cli

import (
	"encoding/json"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/ocpihub/ocpihub/internal/hubtest"
)

// TestReadmeEndpointsExist: every /admin and /ocpi path the README names
// is served (it matches a path of the hub's OpenAPI document, which the
// route table generates), so the docs cannot name an endpoint that is gone
// or misspelt.
func TestReadmeEndpointsExist(t *testing.T) {
	t.Parallel()
	text := readme(t)
	h := hubtest.Start(t, "sqlite")
	resp := h.Do(t, "GET", "/openapi.json", "", nil, nil)
	var doc struct {
		Paths map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(resp.Body, &doc); err != nil || len(doc.Paths) == 0 {
		t.Fatalf("GET /openapi.json: %v", err)
	}
	var served []*regexp.Regexp
	param := regexp.MustCompile(`\\\{[^}]*\\\}`)
	for p := range doc.Paths {
		served = append(served, regexp.MustCompile("^"+param.ReplaceAllString(regexp.QuoteMeta(p), `[^/]+`)+"$"))
	}
	named := map[string]bool{}
	// A path followed by "/…" names a family (aliases the middleware
	// rewrites among them), not one endpoint.
	for _, m := range regexp.MustCompile("(?:^|[\\s`'\"(])(/(?:admin|ocpi)(?:/[A-Za-z0-9_.{}-]+)*)(/…)?").FindAllStringSubmatch(text, -1) {
		p := strings.TrimRight(m[1], ".")
		if m[2] != "" || strings.Contains(p, "{v}") || p == "/admin" || p == "/ocpi" {
			continue
		}
		named[p] = true
	}
	var missing []string
	for p := range named {
		ok := false
		for _, re := range served {
			if re.MatchString(p) {
				ok = true
				break
			}
		}
		if !ok {
			missing = append(missing, p)
		}
	}
	sort.Strings(missing)
	for _, p := range missing {
		t.Errorf("the README names %s; the hub serves no such path", p)
	}
	if len(named) < 20 {
		t.Errorf("only %d endpoints found in the README: the pattern is broken", len(named))
	}
}
