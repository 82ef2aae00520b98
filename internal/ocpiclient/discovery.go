package ocpiclient

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/ocpihub/ocpihub/internal/ocpi"
)

// Auth is the token and header encoding used with one partner.
type Auth struct {
	Token  string
	Base64 bool
}

// Versions fetches a partner's versions list.
func (c *Client) Versions(ctx context.Context, versionsURL string, auth Auth) ([]ocpi.Version, error) {
	var vs []ocpi.Version
	_, err := c.Call(ctx, Request{Method: http.MethodGet, URL: versionsURL, Token: auth.Token, Base64: auth.Base64}, &vs)
	return vs, err
}

// VersionDetails fetches the endpoints of one version.
func (c *Client) VersionDetails(ctx context.Context, detailsURL string, auth Auth) (ocpi.VersionDetails, error) {
	var d ocpi.VersionDetails
	_, err := c.Call(ctx, Request{Method: http.MethodGet, URL: detailsURL, Token: auth.Token, Base64: auth.Base64}, &d)
	return d, err
}

// ErrNoCommonVersion is returned by Discover when the partner lists no
// version we speak.
type ErrNoCommonVersion struct {
	Theirs []string
	Ours   []string
}

func (e *ErrNoCommonVersion) Error() string {
	return fmt.Sprintf("no common OCPI version: the partner offers %s, we speak %s",
		strings.Join(e.Theirs, ", "), strings.Join(e.Ours, ", "))
}

// Discover reads a partner's versions, picks the highest version both sides
// speak (or want, when it is not empty and offered), and fetches its details.
func (c *Client) Discover(ctx context.Context, versionsURL string, auth Auth, ours []string, want string) (ocpi.Version, ocpi.VersionDetails, error) {
	vs, err := c.Versions(ctx, versionsURL, auth)
	if err != nil {
		return ocpi.Version{}, ocpi.VersionDetails{}, err
	}
	v, ok := Pick(vs, ours, want)
	if !ok {
		theirs := make([]string, 0, len(vs))
		for _, x := range vs {
			theirs = append(theirs, x.Version)
		}
		return ocpi.Version{}, ocpi.VersionDetails{}, &ErrNoCommonVersion{Theirs: theirs, Ours: ours}
	}
	d, err := c.VersionDetails(ctx, v.URL, auth)
	if err != nil {
		return v, d, err
	}
	return v, d, nil
}

// Pick returns the highest version in theirs that is also in ours; if want is
// set, only that version qualifies.
func Pick(theirs []ocpi.Version, ours []string, want string) (ocpi.Version, bool) {
	var best ocpi.Version
	found := false
	for _, v := range theirs {
		if !slices.Contains(ours, v.Version) || (want != "" && v.Version != want) {
			continue
		}
		if !found || CompareVersions(v.Version, best.Version) > 0 {
			best, found = v, true
		}
	}
	return best, found
}

// CompareVersions compares dotted version numbers ("2.2.1" > "2.1.1" > "2.0").
func CompareVersions(a, b string) int {
	as, bs := strings.Split(a, "."), strings.Split(b, ".")
	for i := 0; i < max(len(as), len(bs)); i++ {
		var x, y int
		if i < len(as) {
			x, _ = strconv.Atoi(as[i])
		}
		if i < len(bs) {
			y, _ = strconv.Atoi(bs[i])
		}
		if x != y {
			if x < y {
				return -1
			}
			return 1
		}
	}
	return 0
}

// GetAll fetches a paged list, following Link rel="next" until the last page,
// and calls fn with each page's data array. maxPages guards against a partner
// whose Link never ends (0: 100 000).
func (c *Client) GetAll(ctx context.Context, req Request, maxPages int, fn func(items []json.RawMessage) error) error {
	if maxPages <= 0 {
		maxPages = 100_000
	}
	req.Method = http.MethodGet
	seen := map[string]bool{}
	for page := 0; page < maxPages; page++ {
		resp, err := c.Call(ctx, req, nil)
		if err != nil {
			return err
		}
		var items []json.RawMessage
		if len(resp.Envelope.Data) > 0 {
			if err := json.Unmarshal(resp.Envelope.Data, &items); err != nil {
				return &Error{Kind: KindProtocol, URL: req.URL, Response: resp, Err: fmt.Errorf("list data is not an array: %w", err)}
			}
		}
		if err := fn(items); err != nil {
			return err
		}
		next := ocpi.NextLink(resp.Header)
		if next == "" || len(items) == 0 || seen[next] {
			return nil
		}
		seen[next] = true
		req.URL = next
		req.RequestID = ""
	}
	return fmt.Errorf("%s: more than %d pages", req.URL, maxPages)
}
