package cli

import (
	"context"
	"encoding/json"
	"net/url"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/ocpihub/ocpihub/internal/hubtest"
	"github.com/ocpihub/ocpihub/internal/store"
	"github.com/ocpihub/ocpihub/internal/store/storetest"
)

// TestReadmeVersionsList: the versions the README says GET /ocpi/versions
// lists are the ones a running hub lists, in its order (observation 7).
func TestReadmeVersionsList(t *testing.T) {
	t.Parallel()
	text := readme(t)
	_, after, ok := strings.Cut(text, "`GET /ocpi/versions` lists five versions, newest first:")
	if !ok {
		t.Fatal("the README does not list the versions of GET /ocpi/versions")
	}
	sentence, _, _ := strings.Cut(after, ".\n")
	sentence = regexp.MustCompile(`\([^)]*\)`).ReplaceAllString(sentence, "")
	var documented []string
	for _, m := range regexp.MustCompile("`(\\d+\\.\\d+(?:\\.\\d+)?)`").FindAllStringSubmatch(sentence, -1) {
		documented = append(documented, m[1])
	}
	h := hubtest.Start(t, "sqlite")
	resp := h.Do(t, "GET", "/ocpi/versions", hubtest.AdminToken, nil, nil)
	var env struct {
		Data []struct {
			Version string `json:"version"`
		} `json:"data"`
	}
	if err := json.Unmarshal(resp.Body, &env); err != nil {
		t.Fatalf("GET /ocpi/versions: %v: %s", err, resp.Body)
	}
	list := env.Data
	var served []string
	for _, v := range list {
		served = append(served, v.Version)
	}
	if !slices.Equal(documented, served) || len(served) != 5 {
		t.Errorf("README lists %v; the hub lists %v", documented, served)
	}
}

// TestReadmePoolSize: the README states the PostgreSQL pool size once
// (observation 7: two sizes, one wrong), and a hub on PostgreSQL has that
// pool.
func TestReadmePoolSize(t *testing.T) {
	t.Parallel()
	text := readme(t)
	sizes := regexp.MustCompile(`max\((\d+), ?(\d+) ?× ?CPUs\)`).FindAllStringSubmatch(text, -1)
	if len(sizes) != 1 {
		t.Fatalf("the README states %d pool sizes (%v), want one", len(sizes), sizes)
	}
	lo, _ := strconv.Atoi(sizes[0][1])
	per, _ := strconv.Atoi(sizes[0][2])
	// The test databases cap their pools in the URL (pool_max_conns, which
	// the README mentions too); without it the default applies.
	u, err := url.Parse(storetest.MigratedURL(t, store.Postgres))
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Del("pool_max_conns")
	u.RawQuery = q.Encode()
	db, err := store.Open(context.Background(), u.String(), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if got, want := int(db.Pool().Config().MaxConns), max(lo, per*runtime.NumCPU()); got != want {
		t.Errorf("PostgreSQL's pool has %d connections; the README says %s = %d", got, sizes[0][0], want)
	}
}
