package sim

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"

	"github.com/google/uuid"

	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/ocpi/v211"
	"github.com/ocpihub/ocpihub/internal/ocpiclient"
)

// A simulator speaks 2.1.1 and 2.0 when Options.Versions lists them: its
// version details carry no roles, its credentials are the single-party
// legacy object, and tokens go raw in Authorization headers while its
// connection with the hub is in a legacy version. The module bodies it
// pushes are what the test gives it (2.1.1 shapes for a 2.1.1 partner); its
// receivers store what the hub sends as it comes.

// inVersion reports whether a module exists in an OCPI version: 2.1.1 has no
// hubclientinfo or chargingprofiles, 2.0 no commands either.
func inVersion(version, module string) bool {
	switch {
	case !v211.IsLegacy(version):
		return true
	case module == "hubclientinfo" || module == "chargingprofiles":
		return false
	case module == "commands":
		return version == v211.V211
	}
	return true
}

// onlyLegacy reports whether every version is a legacy one.
func onlyLegacy(versions []string) bool {
	for _, v := range versions {
		if !v211.IsLegacy(v) {
			return false
		}
	}
	return len(versions) > 0
}

// rawTokens reports whether tokens go raw.
func (p *Platform) rawTokens() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.raw
}

// Role returns the platform's role.
func (p *Platform) Role() string { return p.opts.Role }

// Versions returns the versions the platform speaks.
func (p *Platform) Versions() []string { return p.opts.Versions }

// credentialsFor is the platform's credentials with token in the form of
// version.
func (p *Platform) credentialsFor(version, token string) any {
	c := p.Credentials(token)
	if !v211.IsLegacy(version) {
		return c
	}
	lc, _ := v211.FromCredentials(c, p.opts.Role)
	return lc
}

// readCredentials reads a credentials body in the form of version (only
// what the simulator needs: the token and the versions URL).
func readCredentials(version string, r io.Reader) (ocpi.Credentials, error) {
	if !v211.IsLegacy(version) {
		var c ocpi.Credentials
		err := json.NewDecoder(r).Decode(&c)
		return c, err
	}
	var lc v211.Credentials
	if err := json.NewDecoder(r).Decode(&lc); err != nil {
		return ocpi.Credentials{}, err
	}
	if err := lc.Check(); err != nil {
		return ocpi.Credentials{}, err
	}
	return ocpi.Credentials{Token: lc.Token, URL: lc.URL}, nil
}

// SwitchVersion moves the connection with the hub to another version both
// speak (credentials.md §4): it reads the hub's details of that version and
// PUTs its credentials, in that version's form, on that version's
// credentials endpoint. Tokens go raw from then on when the version is a
// legacy one, Base64 otherwise (unless RawTokens).
func (p *Platform) SwitchVersion(ctx context.Context, version string) error {
	p.mu.Lock()
	auth := ocpiclient.Auth{Token: p.tokenOut, Base64: !p.raw}
	versionsURL := p.hubVersions
	p.mu.Unlock()
	v, d, err := p.client.Discover(ctx, versionsURL, auth, []string{version}, version)
	if err != nil {
		return fmt.Errorf("discover the hub's %s: %w", version, err)
	}
	credURL, ok := d.Find("credentials", "")
	if !ok {
		return fmt.Errorf("the hub's %s lists no credentials endpoint", version)
	}
	tokenB := "B-" + uuid.NewString()
	p.mu.Lock()
	oldIn, oldRaw := p.tokenIn, p.raw
	p.tokenIn = tokenB
	p.raw = p.opts.RawTokens || v211.IsLegacy(version)
	p.mu.Unlock()
	var answer json.RawMessage
	resp, err := p.Do(ctx, http.MethodPut, credURL, p.credentialsFor(version, tokenB), &answer)
	if err == nil {
		var theirs ocpi.Credentials
		if theirs, err = readCredentials(version, bytes.NewReader(answer)); err == nil {
			p.mu.Lock()
			p.tokenOut, p.hubVersion, p.hubEndpoints = theirs.Token, v.Version, d.Endpoints
			p.mu.Unlock()
			return nil
		}
	}
	p.mu.Lock()
	p.tokenIn, p.raw = oldIn, oldRaw
	p.mu.Unlock()
	return fmt.Errorf("credentials PUT on %s: %w (%s)", credURL, err, bodyOf(resp))
}
