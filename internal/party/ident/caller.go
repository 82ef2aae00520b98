// Package ident is who a party is and who is calling: roles, party references and their notation, platform
// statuses, and the authenticated caller a request carries in its context. Package party names all of it.
package ident

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/ocpihub/ocpihub/internal/ocpi"
)

// Role is an OCPI role (credentials.md §1), plus PTP, which 2.3.0 peers use
// for Payment Terminal Providers although the enum lacks it (gaps.md §5).
type Role string

// The roles.
const (
	RoleCPO   Role = "CPO"
	RoleEMSP  Role = "EMSP"
	RoleHUB   Role = "HUB"
	RoleNAP   Role = "NAP"
	RoleNSP   Role = "NSP"
	RoleOTHER Role = "OTHER"
	RoleSCSP  Role = "SCSP"
	RolePTP   Role = "PTP"
)

// Roles lists every role value accepted from partners.
var Roles = []string{"CPO", "EMSP", "HUB", "NAP", "NSP", "OTHER", "SCSP", "PTP"}

// RoleFor returns role as a partner speaking version sees it: PTP is OTHER
// before 2.3.0 (versions.go in party says why).
func RoleFor(version string, role Role) Role {
	if role == RolePTP && !ocpi.IsVersion230(version) {
		return RoleOTHER
	}
	return role
}

// PartyRef names one party: a role played under a country code and party id.
type PartyRef struct {
	Role        Role   `json:"role"`
	CountryCode string `json:"country_code"`
	PartyID     string `json:"party_id"`
}

// Matches reports whether the party is cc/pid (case-insensitive, as CiString).
func (p PartyRef) Matches(cc, pid string) bool {
	return strings.EqualFold(p.CountryCode, cc) && strings.EqualFold(p.PartyID, pid)
}

// String returns the party in ocpihub's notation, CC/PID.
func (p PartyRef) String() string { return Notation(p.CountryCode, p.PartyID) }

// CallerKind tells how a caller authenticated.
type CallerKind int

// Caller kinds.
const (
	// CallerPlatform is a registered partner using its credentials token C.
	CallerPlatform CallerKind = iota + 1
	// CallerRegistering holds a one-time token A: only versions and credentials.
	CallerRegistering
	// CallerAdmin is the operator with the admin token.
	CallerAdmin
)

// Caller is who made a request.
type Caller struct {
	Kind       CallerKind
	PlatformID int64  // 0 for the admin
	Name       string // platform or invitation name
	Roles      []PartyRef
	Status     Status
	Version    string // the OCPI version we speak with the platform
	Sandbox    bool
	// InvitationID is set for token A callers.
	InvitationID int64
	// Invited lists the parties a token A was issued for (empty: any party
	// not registered yet).
	Invited []PartyRef
	// Token is the credentials token the caller authenticated with (never
	// stored; a credentials GET echoes it).
	Token string `json:"-"`
	// TokenBase64 tells how the caller put its token in the Authorization
	// header: Base64 (2.2.1) or raw (2.1.1 and many 2.2 peers). Registration
	// calls the partner back in the same encoding first.
	TokenBase64 bool `json:"-"`
}

// HasRole reports whether the caller plays role under any party.
func (c *Caller) HasRole(role Role) bool {
	return slices.ContainsFunc(c.Roles, func(p PartyRef) bool { return p.Role == role })
}

// Owns reports whether cc/pid is one of the caller's parties (with role, if
// role is not empty).
func (c *Caller) Owns(role Role, cc, pid string) bool {
	return slices.ContainsFunc(c.Roles, func(p PartyRef) bool {
		return (role == "" || p.Role == role) && p.Matches(cc, pid)
	})
}

// CheckOwner is the isolation rule for client-owned URLs
// (`{module}/{country_code}/{party_id}/…`, transport.md §10): the party in the
// URL must be one of the caller's registered parties, in role when role is not
// empty. It returns that party as registered (upper case). Any other party —
// another partner's, ours, an unknown one, a malformed one — is ENOTFOUND
// (HTTP 404): the handler stores nothing, and the answer says nothing about
// whether the party or the object exists. Callers that are not registered
// platforms own nothing.
func (c *Caller) CheckOwner(role Role, cc, pid string) (PartyRef, error) {
	if c != nil && c.Kind == CallerPlatform {
		for _, p := range c.Roles {
			if (role == "" || p.Role == role) && p.Matches(cc, pid) {
				return p, nil
			}
		}
	}
	what := "one of your parties"
	if role != "" {
		what = "one of your " + string(role) + " parties"
	}
	return PartyRef{}, &ocpi.Error{Code: ocpi.ENOTFOUND, Message: fmt.Sprintf("not found: %s/%s is not %s", Printable(cc), Printable(pid), what)}
}

// Printable returns s for a message: at most 8 characters, printable ASCII
// only, so a hostile URL segment cannot shape the answer.
func Printable(s string) string {
	var b strings.Builder
	for i := 0; i < len(s) && b.Len() < 8; i++ {
		if s[i] >= 0x21 && s[i] <= 0x7e {
			b.WriteByte(s[i])
		} else {
			b.WriteByte('?')
		}
	}
	return b.String()
}

// Party returns the caller's first party with role, if any.
func (c *Caller) Party(role Role) (PartyRef, bool) {
	for _, p := range c.Roles {
		if p.Role == role {
			return p, true
		}
	}
	return PartyRef{}, false
}

type callerKey struct{}

// WithCaller returns ctx carrying the caller.
func WithCaller(ctx context.Context, c *Caller) context.Context {
	return context.WithValue(ctx, callerKey{}, c)
}

// CallerFrom returns the caller of a request, or nil.
func CallerFrom(ctx context.Context) *Caller {
	c, _ := ctx.Value(callerKey{}).(*Caller)
	return c
}

// Status is a platform's registration status.
type Status string

// Platform statuses.
const (
	StatusPending      Status = "PENDING"
	StatusConnected    Status = "CONNECTED"
	StatusSuspended    Status = "SUSPENDED"
	StatusUnregistered Status = "UNREGISTERED"
)
