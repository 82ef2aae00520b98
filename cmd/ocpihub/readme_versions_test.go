package main

import (
	"encoding/json"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/ocpihub/ocpihub/internal/hubtest"
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
