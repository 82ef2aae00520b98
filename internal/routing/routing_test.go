package routing_test

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ocpihub/ocpihub/internal/clock"
	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/party"
	"github.com/ocpihub/ocpihub/internal/routing"
	"github.com/ocpihub/ocpihub/internal/store"
	"github.com/ocpihub/ocpihub/internal/store/storetest"
)

// fixture is a registry with every kind of party routing tells apart, as
// rows (the registration flows are the party package's to test):
//
//	cpo1       CONNECTED  CPO NL/CP1                 locations SENDER, commands and tokens RECEIVER
//	emsp1      CONNECTED  EMSP NL/EM1                locations, sessions, cdrs RECEIVER, tokens SENDER
//	multi      CONNECTED  CPO DE/CP2 + EMSP DE/EM2   locations RECEIVER and SENDER
//	nsp        CONNECTED  NSP NL/NS1                 locations RECEIVER
//	other      CONNECTED  OTHER NL/OT1               locations RECEIVER
//	pull       CONNECTED  EMSP NL/PL1                tokens SENDER only (pulls locations)
//	offline    CONNECTED, connection OFFLINE, EMSP NL/OF1, locations RECEIVER
//	suspended  SUSPENDED  EMSP NL/SU1                locations RECEIVER
//	gone       UNREGISTERED (its parties were deleted on unregistering)
//	peer       CONNECTED  HUB BE/PHB                 locations, tokens, commands RECEIVER, tokens SENDER
//	           represents EMSP BE/PE1 (CONNECTED), CPO BE/PC1 (CONNECTED), EMSP BE/PE2 (OFFLINE);
//	           also lists EMSP NL/EM1 (hosted directly: not represented)
//	peerGone   UNREGISTERED peer hub that listed EMSP FR/GP1
//
// The hub's own parties are HUB NL/HUB and EMSP NL/OWN.
type fixture struct {
	r   *routing.Router
	db  *store.DB
	clk *clock.Fake
	ids map[string]int64
}

type platformRow struct {
	name, status, connection string
	roles                    []party.PartyRef
	endpoints                []ocpi.Endpoint
	peer                     []peerRow
}

type peerRow struct {
	ref    party.PartyRef
	status string
}

func ref(role party.Role, cc, pid string) party.PartyRef {
	return party.PartyRef{Role: role, CountryCode: cc, PartyID: pid}
}

func ep(module, iface string) ocpi.Endpoint {
	return ocpi.Endpoint{Identifier: module, Role: iface, URL: "https://example.com/" + module + "/" + strings.ToLower(iface)}
}

const (
	recv = ocpi.InterfaceReceiver
	send = ocpi.InterfaceSender
)

var platforms = []platformRow{
	{name: "cpo1", status: "CONNECTED", roles: []party.PartyRef{ref(party.RoleCPO, "NL", "CP1")},
		endpoints: []ocpi.Endpoint{ep("locations", send), ep("commands", recv), ep("tokens", recv)}},
	{name: "emsp1", status: "CONNECTED", roles: []party.PartyRef{ref(party.RoleEMSP, "NL", "EM1")},
		endpoints: []ocpi.Endpoint{ep("locations", recv), ep("sessions", recv), ep("cdrs", recv), ep("tokens", send)}},
	{name: "multi", status: "CONNECTED", roles: []party.PartyRef{ref(party.RoleCPO, "DE", "CP2"), ref(party.RoleEMSP, "DE", "EM2")},
		endpoints: []ocpi.Endpoint{ep("locations", recv), ep("locations", send)}},
	{name: "nsp", status: "CONNECTED", roles: []party.PartyRef{ref(party.RoleNSP, "NL", "NS1")},
		endpoints: []ocpi.Endpoint{ep("locations", recv)}},
	{name: "other", status: "CONNECTED", roles: []party.PartyRef{ref(party.RoleOTHER, "NL", "OT1")},
		endpoints: []ocpi.Endpoint{ep("locations", recv)}},
	{name: "pull", status: "CONNECTED", roles: []party.PartyRef{ref(party.RoleEMSP, "NL", "PL1")},
		endpoints: []ocpi.Endpoint{ep("tokens", send)}},
	{name: "offline", status: "CONNECTED", connection: "OFFLINE", roles: []party.PartyRef{ref(party.RoleEMSP, "NL", "OF1")},
		endpoints: []ocpi.Endpoint{ep("locations", recv)}},
	{name: "suspended", status: "SUSPENDED", roles: []party.PartyRef{ref(party.RoleEMSP, "NL", "SU1")},
		endpoints: []ocpi.Endpoint{ep("locations", recv)}},
	{name: "gone", status: "UNREGISTERED", endpoints: []ocpi.Endpoint{ep("locations", recv)}},
	{name: "peer", status: "CONNECTED", roles: []party.PartyRef{ref(party.RoleHUB, "BE", "PHB")},
		endpoints: []ocpi.Endpoint{ep("locations", recv), ep("tokens", recv), ep("commands", recv), ep("tokens", send)},
		peer: []peerRow{
			{ref(party.RoleEMSP, "BE", "PE1"), "CONNECTED"}, {ref(party.RoleCPO, "BE", "PC1"), "CONNECTED"},
			{ref(party.RoleEMSP, "BE", "PE2"), "OFFLINE"}, {ref(party.RoleEMSP, "NL", "EM1"), "CONNECTED"},
		}},
	{name: "peerGone", status: "UNREGISTERED", endpoints: []ocpi.Endpoint{ep("locations", recv)},
		peer: []peerRow{{ref(party.RoleEMSP, "FR", "GP1"), "CONNECTED"}}},
}

func newFixture(t *testing.T, db *store.DB) *fixture {
	t.Helper()
	ctx := context.Background()
	clk := clock.NewFake(time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC))
	ps, err := party.New(db, nil, nil, clk, nil, party.Config{Own: []ocpi.CredentialsRole{
		{Role: string(party.RoleHUB), CountryCode: "NL", PartyID: "HUB"},
		{Role: string(party.RoleEMSP), CountryCode: "NL", PartyID: "OWN"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{r: routing.New(ps), db: db, clk: clk, ids: map[string]int64{}}
	now := clk.Now().UnixMicro()
	err = db.InTx(ctx, func(ctx context.Context, tx *store.Tx) error {
		for _, p := range platforms {
			eps, _ := json.Marshal(p.endpoints)
			conn := p.connection
			if conn == "" {
				conn = "CONNECTED"
			}
			var id int64
			if err := tx.QueryRow(ctx, `INSERT INTO platforms (name, status, connection, version, endpoints, created_at, updated_at)
				VALUES ($1, $2, $3, '2.2.1', $4, $5, $5) RETURNING id`, p.name, p.status, conn, string(eps), now).Scan(&id); err != nil {
				return err
			}
			f.ids[p.name] = id
			for _, r := range p.roles {
				if _, err := tx.Exec(ctx, `INSERT INTO platform_roles (platform_id, role, country_code, party_id, business_details, updated_at)
					VALUES ($1, $2, $3, $4, '{"name":"x"}', $5)`, id, string(r.Role), r.CountryCode, r.PartyID, now); err != nil {
					return err
				}
			}
			for _, pp := range p.peer {
				if _, err := tx.Exec(ctx, `INSERT INTO peer_parties (platform_id, role, country_code, party_id, status, last_updated, created_at, updated_at)
					VALUES ($1, $2, $3, $4, $5, $6, $6, $6)`, id, string(pp.ref.Role), pp.ref.CountryCode, pp.ref.PartyID, pp.status, now); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatalf("fixture: %v", err)
	}
	return f
}

// codeOf is err's OCPI error code, "" for no error.
func codeOf(err error) string {
	if err == nil {
		return ""
	}
	return ocpi.ErrorCode(err)
}

// addressCase is a row of the address tables: where a request or push to
// party to (in role) goes.
type addressCase struct {
	name          string
	role          party.Role
	to            routing.Party
	module, iface string
	platform      string // the platform it goes to, "" when none (or an error)
	viaPeer       bool   // Address: through a peer hub
	code          string // Address: the error code
	enqueue       bool   // Enqueueable: found
}

func pty(cc, pid string) routing.Party { return routing.Party{CountryCode: cc, PartyID: pid} }

func platformCaller(roles ...party.PartyRef) *party.Caller {
	return &party.Caller{Kind: party.CallerPlatform, PlatformID: 1, Roles: roles, Status: party.StatusConnected}
}

// TestRouting is every routing decision, as a table, on both engines.
func TestRouting(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		f := newFixture(t, db)
		ctx := context.Background()

		t.Run("OCPI-to", func(t *testing.T) {
			emsp := platformCaller(ref(party.RoleEMSP, "NL", "EM1"))
			admin := &party.Caller{Kind: party.CallerAdmin}
			tests := []struct {
				name      string
				caller    *party.Caller
				to        routing.Party
				local     bool
				addressed bool   // Addressed: forwarded / list restricted
				check     string // CheckTo's error code, "" = none
			}{
				{"absent", emsp, routing.Party{}, false, false, ""},
				{"the hub", emsp, pty("NL", "HUB"), true, false, ""},
				{"the hub, any case", emsp, pty("nl", "hub"), true, false, ""},
				{"the hub's own eMSP", emsp, pty("NL", "OWN"), true, false, ""},
				{"the sender itself", emsp, pty("nl", "em1"), true, false, ""},
				{"a direct CPO", emsp, pty("NL", "CP1"), false, true, ""},
				{"a direct eMSP", platformCaller(ref(party.RoleCPO, "NL", "CP1")), pty("NL", "EM1"), false, true, ""},
				{"an NSP", emsp, pty("NL", "NS1"), false, true, ""},
				{"a party behind a peer hub", emsp, pty("BE", "PE1"), false, true, ""},
				{"a party OFFLINE behind a peer hub (known: 4003 when sent to)", emsp, pty("BE", "PE2"), false, true, ""},
				{"a peer hub itself", emsp, pty("BE", "PHB"), false, true, ""},
				{"a SUSPENDED platform's party (known)", emsp, pty("NL", "SU1"), false, true, ""},
				{"an unknown party", emsp, pty("XX", "ZZZ"), false, true, ocpi.EUNKNOWNRECEIVER},
				{"an unregistered platform's party", emsp, pty("NL", "GON"), false, true, ocpi.EUNKNOWNRECEIVER},
				{"behind an unregistered peer hub", emsp, pty("FR", "GP1"), false, true, ocpi.EUNKNOWNRECEIVER},
				{"the admin owns no party", admin, pty("NL", "EM1"), false, true, ""},
				{"no caller yet", nil, pty("NL", "HUB"), true, false, ""},
			}
			for _, tc := range tests {
				if got := f.r.IsLocal(tc.caller, tc.to); got != tc.local && !tc.to.IsZero() {
					t.Errorf("%s: IsLocal = %v, want %v", tc.name, got, tc.local)
				}
				got, ok := f.r.Addressed(tc.caller, tc.to)
				if ok != tc.addressed || (ok && got != tc.to) {
					t.Errorf("%s: Addressed = %v %v, want %v", tc.name, got, ok, tc.addressed)
				}
				if code := codeOf(f.r.CheckTo(ctx, tc.caller, tc.to)); code != tc.check {
					t.Errorf("%s: CheckTo = %q, want %q", tc.name, code, tc.check)
				}
			}
		})

		t.Run("Owner", func(t *testing.T) {
			tests := []struct {
				name string
				to   routing.Party
				role party.Role
				want routing.Party
			}{
				{"absent", routing.Party{}, party.RoleCPO, routing.Party{}},
				{"the hub, for a command: find the CPO", pty("NL", "HUB"), party.RoleCPO, routing.Party{}},
				{"the hub's eMSP, for a command: find the CPO", pty("NL", "OWN"), party.RoleCPO, routing.Party{}},
				{"the hub, for a token: find the eMSP", pty("NL", "HUB"), party.RoleEMSP, routing.Party{}},
				{"the hub's own eMSP, for a token: it answers", pty("nl", "own"), party.RoleEMSP, pty("nl", "own")},
				{"a CPO named outright", pty("NL", "CP1"), party.RoleCPO, pty("NL", "CP1")},
				{"an unknown party stays addressed (the caller answers for it)", pty("XX", "ZZZ"), party.RoleEMSP, pty("XX", "ZZZ")},
			}
			for _, tc := range tests {
				if got := f.r.Owner(tc.to, tc.role); got != tc.want {
					t.Errorf("%s: Owner = %v, want %v", tc.name, got, tc.want)
				}
			}
			if !f.r.IsOwnParty(party.RoleEMSP, pty("NL", "OWN")) || f.r.IsOwnParty(party.RoleEMSP, pty("NL", "HUB")) ||
				f.r.IsOwnParty(party.RoleCPO, pty("NL", "OWN")) {
				t.Error("IsOwnParty: the hub's own eMSP is NL/OWN, and it has no CPO")
			}
			if got := f.r.Self(); got != pty("NL", "HUB") {
				t.Errorf("Self = %v, want NL/HUB", got)
			}
		})

		t.Run("Address", func(t *testing.T) {
			tests := []addressCase{
				{"a direct CPO", "", pty("NL", "CP1"), "commands", recv, "cpo1", false, "", false},
				{"a direct CPO, lower case", "", pty("nl", "cp1"), "commands", recv, "cpo1", false, "", false},
				{"a direct eMSP in its role", party.RoleEMSP, pty("NL", "EM1"), "tokens", send, "emsp1", false, "", false},
				{"a platform hosting two roles", party.RoleEMSP, pty("DE", "EM2"), "locations", recv, "multi", false, "", false},
				{"a party behind a peer hub goes to the peer hub", "", pty("BE", "PE1"), "tokens", send, "peer", true, "", false},
				{"a CPO behind a peer hub", party.RoleCPO, pty("BE", "PC1"), "commands", recv, "peer", true, "", false},
				{"a party listed by a peer hub but hosted directly goes direct", "", pty("NL", "EM1"), "cdrs", recv, "emsp1", false, "", false},
				{"a party the peer hub reports OFFLINE", "", pty("BE", "PE2"), "tokens", send, "", false, ocpi.ENOTCONNECTED, false},
				{"a SUSPENDED platform", "", pty("NL", "SU1"), "locations", recv, "", false, ocpi.ENOTCONNECTED, false},
				{"an OFFLINE platform", "", pty("NL", "OF1"), "locations", recv, "", false, ocpi.ENOTCONNECTED, false},
				{"an unknown party", "", pty("XX", "ZZZ"), "locations", recv, "", false, ocpi.EUNKNOWNRECEIVER, false},
				{"an unregistered platform's party", "", pty("NL", "GON"), "locations", recv, "", false, ocpi.EUNKNOWNRECEIVER, false},
				{"behind an unregistered peer hub", "", pty("FR", "GP1"), "locations", recv, "", false, ocpi.EUNKNOWNRECEIVER, false},
				{"a party without the interface", "", pty("NL", "CP1"), "cdrs", recv, "", false, ocpi.EUNKNOWNRECEIVER, false},
				{"a party in another role", party.RoleCPO, pty("NL", "EM1"), "tokens", send, "", false, ocpi.EUNKNOWNRECEIVER, false},
			}
			for _, tc := range tests {
				a, err := f.r.Address(ctx, tc.role, tc.to, tc.module, tc.iface)
				if code := codeOf(err); code != tc.code {
					t.Errorf("%s: error %v, want %q", tc.name, err, tc.code)
					continue
				}
				if tc.platform == "" {
					continue
				}
				if a.Platform.ID != f.ids[tc.platform] || a.ViaPeer != tc.viaPeer || a.To != tc.to || a.URL == "" {
					t.Errorf("%s: address %s (id %d) via peer %v to %v, want %s via peer %v", tc.name, a.Platform.Name, a.Platform.ID,
						a.ViaPeer, a.To, tc.platform, tc.viaPeer)
				}
			}
		})

		t.Run("Platform and Enqueueable", func(t *testing.T) {
			tests := []addressCase{
				{"an eMSP with the receiver", party.RoleEMSP, pty("NL", "EM1"), "sessions", recv, "emsp1", false, "", true},
				{"an eMSP that pulls", party.RoleEMSP, pty("NL", "PL1"), "sessions", recv, "pull", false, "", false},
				{"an OFFLINE eMSP: queued, the outbox holds it back", party.RoleEMSP, pty("NL", "OF1"), "locations", recv, "offline", false, "", true},
				{"a SUSPENDED eMSP", party.RoleEMSP, pty("NL", "SU1"), "locations", recv, "suspended", false, "", false},
				{"an eMSP behind a peer hub", party.RoleEMSP, pty("BE", "PE1"), "locations", recv, "peer", false, "", true},
				{"the wrong role", party.RolePTP, pty("NL", "EM1"), "sessions", recv, "", false, "", false},
				{"unknown", party.RoleEMSP, pty("XX", "ZZZ"), "sessions", recv, "", false, "", false},
				{"absent", party.RoleEMSP, routing.Party{}, "sessions", recv, "", false, "", false},
			}
			for _, tc := range tests {
				p, found, err := f.r.Platform(ctx, tc.role, tc.to)
				if err != nil || found != (tc.platform != "") || (found && p.ID != f.ids[tc.platform]) {
					t.Errorf("%s: Platform = %v %v %v, want %s", tc.name, p, found, err, tc.platform)
				}
				_, found, err = f.r.Enqueueable(ctx, tc.role, tc.to, tc.module, tc.iface)
				if err != nil || found != tc.enqueue {
					t.Errorf("%s: Enqueueable = %v %v, want %v", tc.name, found, err, tc.enqueue)
				}
			}
			for role, want := range map[party.Role][]string{
				party.RoleCPO: {"BE/PC1", "DE/CP2", "NL/CP1"},
				party.RolePTP: nil,
				party.RoleNSP: {"NL/NS1"},
			} {
				ps, err := f.r.Connected(ctx, role)
				var got []string
				for _, p := range ps {
					got = append(got, party.Notation(p.CountryCode, p.PartyID))
				}
				slices.Sort(got)
				if err != nil || !slices.Equal(got, want) {
					t.Errorf("Connected(%s) = %v %v, want %v", role, got, err, want)
				}
			}
		})

		t.Run("Receivers", func(t *testing.T) {
			tests := []struct {
				name     string
				sender   string // "" = the hub itself
				audience []party.Role
				module   string
				want     []string // platform name → OCPI-to, "*" marks OFFLINE
			}{
				{"a CPO's location: eMSPs, NSP, OTHER and the peer hub; not the sender, not SUSPENDED, not one that pulls",
					"cpo1", routing.CPOAudience, "locations",
					[]string{"emsp1 NL/EM1", "multi DE/EM2", "nsp NL/NS1", "other NL/OT1", "offline NL/OF1*", "peer BE/PHB"}},
				{"the loop rule: from the peer hub, not back to it", "peer", routing.CPOAudience, "locations",
					[]string{"emsp1 NL/EM1", "multi DE/EM2", "nsp NL/NS1", "other NL/OT1", "offline NL/OF1*"}},
				{"the loop rule: a platform hosting CPO and eMSP does not get its own", "multi", routing.CPOAudience, "locations",
					[]string{"emsp1 NL/EM1", "nsp NL/NS1", "other NL/OT1", "offline NL/OF1*", "peer BE/PHB"}},
				{"an eMSP's token: CPOs with the receiver and the peer hub", "emsp1", routing.EMSPAudience, "tokens",
					[]string{"cpo1 NL/CP1", "peer BE/PHB"}},
				{"the hub's own eMSP's token", "", routing.EMSPAudience, "tokens",
					[]string{"cpo1 NL/CP1", "peer BE/PHB"}},
				{"a module nobody receives", "cpo1", routing.CPOAudience, "tariffs", nil},
			}
			for _, tc := range tests {
				var rs []routing.Receiver
				err := db.InTx(ctx, func(ctx context.Context, tx *store.Tx) error {
					var err error
					rs, err = f.r.Receivers(ctx, tx, f.ids[tc.sender], tc.audience, tc.module)
					return err
				})
				if err != nil {
					t.Fatalf("%s: %v", tc.name, err)
				}
				names := map[int64]string{}
				for n, id := range f.ids {
					names[id] = n
				}
				var got []string
				for _, r := range rs {
					s := names[r.PlatformID] + " " + party.Notation(r.To.CountryCode, r.To.PartyID)
					if r.Offline {
						s += "*"
					}
					got = append(got, s)
				}
				// Receivers come in platform order, the fixture's order.
				if !slices.Equal(got, tc.want) {
					t.Errorf("%s:\n got %v\nwant %v", tc.name, got, tc.want)
				}
			}
		})

		t.Run("Hosts (loop rule of loads)", func(t *testing.T) {
			tests := []struct {
				platform string
				party    routing.Party
				want     bool
			}{
				{"peer", pty("BE", "PHB"), true},
				{"peer", pty("be", "pe1"), true},
				{"peer", pty("BE", "PC1"), true},
				{"peer", pty("BE", "PE2"), true},  // OFFLINE behind it: still its
				{"peer", pty("NL", "EM1"), false}, // hosted directly: not the peer's
				{"peer", pty("NL", "CP1"), false},
				{"multi", pty("DE", "CP2"), true},
				{"multi", pty("DE", "EM2"), true},
				{"cpo1", pty("DE", "CP2"), false},
				{"peerGone", pty("FR", "GP1"), false},
			}
			for _, tc := range tests {
				err := db.InTx(ctx, func(ctx context.Context, tx *store.Tx) error {
					hosts, err := f.r.Hosts(ctx, tx, f.ids[tc.platform])
					if err != nil {
						return err
					}
					if got := hosts(tc.party.CountryCode, tc.party.PartyID); got != tc.want {
						t.Errorf("%s hosts %v = %v, want %v", tc.platform, tc.party, got, tc.want)
					}
					return nil
				})
				if err != nil {
					t.Fatal(err)
				}
			}
			for _, tc := range []struct {
				role party.Role
				to   routing.Party
				want bool
			}{
				{party.RolePTP, pty("NL", "EM1"), false},
				{party.RoleEMSP, pty("NL", "EM1"), true},
				{party.RoleEMSP, pty("BE", "PE1"), false}, // behind a peer hub: not hosted directly
			} {
				if got, err := f.r.HostsRole(ctx, tc.role, tc.to.CountryCode, tc.to.PartyID); err != nil || got != tc.want {
					t.Errorf("HostsRole(%s, %v) = %v %v, want %v", tc.role, tc.to, got, err, tc.want)
				}
			}
		})

		t.Run("Owners", func(t *testing.T) {
			for _, o := range []struct{ cc, pid, id string }{{"NL", "CP1", "T1"}, {"NL", "CP1", "T2"}, {"DE", "CP2", "T2"}, {"BE", "PC1", "T2"}} {
				if err := db.InTx(ctx, func(ctx context.Context, tx *store.Tx) error {
					_, err := tx.Exec(ctx, `INSERT INTO tariffs (country_code, party_id, id, last_updated, body) VALUES ($1, $2, $3, 0, '{}')`,
						o.cc, o.pid, o.id)
					return err
				}); err != nil {
					t.Fatal(err)
				}
			}
			tests := []struct {
				name, id string
				want     []routing.Party
			}{
				{"one owner", "T1", []routing.Party{pty("NL", "CP1")}},
				{"one owner, id in another case", "t1", []routing.Party{pty("NL", "CP1")}},
				{"ambiguous: two owners, the first in party order", "T2", []routing.Party{pty("BE", "PC1"), pty("DE", "CP2")}},
				{"unknown", "T9", nil},
			}
			for _, tc := range tests {
				got, err := routing.Owners(ctx, db.Read(), routing.Tariffs, tc.id)
				if err != nil || !slices.Equal(got, tc.want) {
					t.Errorf("%s: Owners = %v %v, want %v", tc.name, got, err, tc.want)
				}
			}
		})

		t.Run("ReceivingParty", func(t *testing.T) {
			for name, want := range map[string]routing.Party{
				"multi": pty("DE", "EM2"), // the first party that is not a CPO
				"cpo1":  pty("NL", "CP1"), // only a CPO: that one
				"peer":  pty("BE", "PHB"), // a peer hub: its own HUB party
				"gone":  {},               // no party left
			} {
				pl := platformByID(t, f, name)
				if got := routing.ReceivingParty(pl); got != want {
					t.Errorf("ReceivingParty(%s) = %v, want %v", name, got, want)
				}
			}
			for _, tc := range []struct {
				platform string
				role     party.Role
				want     routing.Party
			}{
				{"multi", party.RoleCPO, pty("DE", "CP2")},
				{"multi", party.RoleEMSP, pty("DE", "EM2")},
				{"peer", party.RoleCPO, pty("BE", "PHB")}, // a peer hub is pulled as a hub, not as BE/PC1
				{"emsp1", party.RoleCPO, routing.Party{}},
			} {
				if got := routing.PulledParty(platformByID(t, f, tc.platform), tc.role); got != tc.want {
					t.Errorf("PulledParty(%s, %s) = %v, want %v", tc.platform, tc.role, got, tc.want)
				}
			}
		})
	})
}

// platformByID loads a fixture platform with its roles (and the parties
// it represents) through the registry.
func platformByID(t *testing.T, f *fixture, name string) *party.Platform {
	t.Helper()
	ps, err := party.New(f.db, nil, nil, clock.Real{}, nil, party.Config{})
	if err != nil {
		t.Fatal(err)
	}
	p, err := ps.Find(context.Background(), f.ids[name])
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestHeaders is the parsing and writing of OCPI-to/from.
func TestHeaders(t *testing.T) {
	hdr := func(kv ...string) http.Header {
		h := http.Header{}
		for i := 0; i < len(kv); i += 2 {
			h.Set(kv[i], kv[i+1])
		}
		return h
	}
	emsp := platformCaller(ref(party.RoleEMSP, "NL", "EM1"), ref(party.RoleCPO, "NL", "CP9"))
	tests := []struct {
		name      string
		h         http.Header
		caller    *party.Caller
		to        routing.Party
		toOK      bool
		requester routing.Party
	}{
		{"none", hdr(), emsp, routing.Party{}, false, pty("NL", "EM1")},
		{"OCPI-to half present", hdr(routing.HeaderToCountryCode, "NL"), emsp, pty("NL", ""), false, pty("NL", "EM1")},
		{"OCPI-to and an owned OCPI-from", hdr(routing.HeaderToCountryCode, "DE", routing.HeaderToPartyID, "CP2",
			routing.HeaderFromCountryCode, "NL", routing.HeaderFromPartyID, "CP9"), emsp, pty("DE", "CP2"), true, pty("NL", "CP9")},
		{"an OCPI-from the caller does not own", hdr(routing.HeaderFromCountryCode, "DE", routing.HeaderFromPartyID, "EM2"),
			emsp, routing.Party{}, false, pty("NL", "EM1")},
		{"before authentication: OCPI-from as sent", hdr(routing.HeaderFromCountryCode, "DE", routing.HeaderFromPartyID, "EM2"),
			nil, routing.Party{}, false, pty("DE", "EM2")},
		{"before authentication, no OCPI-from", hdr(), nil, routing.Party{}, false, routing.Party{}},
	}
	for _, tc := range tests {
		to, ok := routing.To(tc.h)
		if to != tc.to || ok != tc.toOK {
			t.Errorf("%s: To = %v %v, want %v %v", tc.name, to, ok, tc.to, tc.toOK)
		}
		if got := routing.Requester(tc.caller, tc.h); got != tc.requester {
			t.Errorf("%s: Requester = %v, want %v", tc.name, got, tc.requester)
		}
	}
	h := http.Header{}
	routing.SetHeaders(h, pty("NL", "EM1"), routing.Party{})
	if h.Get(routing.HeaderToPartyID) != "EM1" || h.Get(routing.HeaderFromPartyID) != "" {
		t.Errorf("SetHeaders with a zero OCPI-from: %v", h)
	}
	routing.SetHeaders(h, routing.Party{}, pty("NL", "HUB"))
	if from, ok := routing.From(h); !ok || from != pty("NL", "HUB") || h.Get(routing.HeaderToPartyID) != "EM1" {
		t.Errorf("SetHeaders with a zero OCPI-to: %v", h)
	}
}

// TestRoutingSeesChanges: a router answers from the registry as it is now —
// a registration change (suspension, a new party, a peer hub withdrawing a
// party, an unregistration) changes the next answer of the same Router. The
// changes here are written to the database directly, as another process
// (another replica, the CLI) writes them: the receivers of a broadcast,
// read in the transaction that queues it, see them at once; the platform
// hosting a party, which a replica remembers for a second
// (party/callers.go, where the replica's own changes are forgotten at once:
// TestHostRememberedForASecond), within that second.
func TestRoutingSeesChanges(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		f := newFixture(t, db)
		ctx := context.Background()
		exec := func(q string, args ...any) {
			t.Helper()
			if err := db.InTx(ctx, func(ctx context.Context, tx *store.Tx) error {
				_, err := tx.Exec(ctx, q, args...)
				return err
			}); err != nil {
				t.Fatal(err)
			}
			f.clk.Add(time.Second)
		}
		receivers := func() []int64 {
			t.Helper()
			var ids []int64
			if err := db.InTx(ctx, func(ctx context.Context, tx *store.Tx) error {
				rs, err := f.r.Receivers(ctx, tx, 0, routing.EMSPAudience, "tokens")
				for _, r := range rs {
					ids = append(ids, r.PlatformID)
				}
				return err
			}); err != nil {
				t.Fatal(err)
			}
			return ids
		}
		if _, err := f.r.Address(ctx, "", pty("NL", "CP1"), "commands", recv); err != nil {
			t.Fatalf("before: %v", err)
		}
		if got := receivers(); !slices.Equal(got, []int64{f.ids["cpo1"], f.ids["peer"]}) {
			t.Fatalf("receivers before: %v", got)
		}

		exec("UPDATE platforms SET status = 'SUSPENDED' WHERE id = $1", f.ids["cpo1"])
		if _, err := f.r.Address(ctx, "", pty("NL", "CP1"), "commands", recv); codeOf(err) != ocpi.ENOTCONNECTED {
			t.Errorf("suspended: %v, want 4003", err)
		}
		if got := receivers(); !slices.Equal(got, []int64{f.ids["peer"]}) {
			t.Errorf("receivers after the suspension: %v", got)
		}

		exec(`INSERT INTO platform_roles (platform_id, role, country_code, party_id, business_details, updated_at)
			VALUES ($1, 'CPO', 'NL', 'CP3', '{"name":"x"}', 0)`, f.ids["multi"])
		if known, err := f.r.Known(ctx, "NL", "CP3"); err != nil || !known {
			t.Errorf("a new party: known %v %v", known, err)
		}

		exec("DELETE FROM peer_parties WHERE platform_id = $1 AND party_id = 'PE1'", f.ids["peer"])
		if err := f.r.CheckTo(ctx, nil, pty("BE", "PE1")); codeOf(err) != ocpi.EUNKNOWNRECEIVER {
			t.Errorf("a party the peer hub withdrew: %v, want 4001", err)
		}

		exec("UPDATE platforms SET status = 'UNREGISTERED' WHERE id = $1", f.ids["peer"])
		if err := f.r.CheckTo(ctx, nil, pty("BE", "PC1")); codeOf(err) != ocpi.EUNKNOWNRECEIVER {
			t.Errorf("behind a peer hub that unregistered: %v, want 4001", err)
		}
	})
}
