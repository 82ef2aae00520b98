package party_test

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/ocpihub/ocpihub/internal/app"
	"github.com/ocpihub/ocpihub/internal/hubtest"
	"github.com/ocpihub/ocpihub/internal/hubtest/logsink"
	"github.com/ocpihub/ocpihub/internal/sim"
	"github.com/ocpihub/ocpihub/internal/store"
	"github.com/ocpihub/ocpihub/internal/store/storetest"
)

// dbText returns everything the hub's database holds, as text: every row of
// every table in the schema on PostgreSQL (the job queue's too), the database
// and WAL files on SQLite (every page, free ones included).
func dbText(t *testing.T, h *hubtest.Hub) string {
	t.Helper()
	var b strings.Builder
	if h.Engine == store.SQLite {
		path := strings.TrimPrefix(h.DBURL, "sqlite:")
		for _, f := range []string{path, path + "-wal"} {
			raw, err := os.ReadFile(f)
			if err != nil && !os.IsNotExist(err) {
				t.Fatal(err)
			}
			b.Write(raw)
		}
		return b.String()
	}
	q := h.DB.Read()
	tables := storetest.Column[string](t, ctx(t), q, "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'")
	if len(tables) < 5 {
		t.Fatalf("only %d tables in the schema: %v", len(tables), tables)
	}
	for _, table := range tables {
		for _, row := range storetest.Column[string](t, ctx(t), q, `SELECT CAST(t AS TEXT) FROM "`+table+`" t`) {
			b.WriteString(row + "\n")
		}
	}
	return b.String()
}

func sha256Hex(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// partnerTokens onboards a CPO (partner-initiated) and an eMSP
// (hub-initiated) and returns every token involved: inbound are the tokens
// partners call us with, outbound the tokens we call them with.
func partnerTokens(t *testing.T, h *hubtest.Hub) (cpoID int64, inbound, outbound, tokenA []string) {
	cpo := hubtest.StartSim(t, sim.StartCPO, "Acme", "NL", "ACM")
	inv := invite(t, h, "acme")
	if err := cpo.Register(ctx(t), h.VersionsURL(), inv.Token); err != nil {
		t.Fatal(err)
	}
	emsp := hubtest.StartSim(t, sim.StartEMSP, "Volt", "DE", "VMO")
	a := emsp.Invite()
	if _, err := h.Parties.Connect(ctx(t), "", emsp.VersionsURL(), a); err != nil {
		t.Fatal(err)
	}
	return platformOf(t, h, "NL", "ACM").ID,
		[]string{cpo.Token(), emsp.Token()}, []string{cpo.TokenIn(), emsp.TokenIn()}, []string{inv.Token, a}
}

// TestTokensAtRestSealed: with a secret key the database holds no partner
// token in clear — only SHA-256 hashes of the tokens partners call us with
// and AES-GCM sealed tokens we call them with — and the sealed tokens still
// work after a restart.
func TestTokensAtRestSealed(t *testing.T) {
	t.Parallel()
	var logs sync.Map
	hubtest.Each(t, func(t *testing.T, h *hubtest.Hub) {
		cpoID, inbound, outbound, tokenA := partnerTokens(t, h)
		text := dbText(t, h)
		for _, tok := range append(append(inbound, outbound...), tokenA...) {
			if strings.Contains(text, tok) {
				t.Errorf("token %q is stored in clear", tok)
			}
		}
		for _, tok := range append(inbound, tokenA[0]) {
			if !strings.Contains(text, sha256Hex(tok)) {
				t.Errorf("the SHA-256 of token %q is not stored", tok)
			}
		}
		if n := storetest.Count(t, h.DB, "SELECT COUNT(*) FROM platforms WHERE token_out LIKE 'v1:%'"); n != 2 {
			t.Errorf("%d sealed tokens, want 2", n)
		}
		if l, _ := logs.Load(h.Logger); strings.Contains(l.(*logsink.Buffer).String(), "no secret key") {
			t.Errorf("warned about a missing secret key although one is set")
		}

		// After a restart the hub opens the sealed token and calls the partner.
		h.Restart(t)
		if _, err := h.Parties.Rotate(ctx(t), cpoID); err != nil {
			t.Fatalf("rotate after restart: %v", err)
		}
	}, func(o *hubtest.Options) {
		o.Config = func(c *app.Config) { c.SecretKey = "correct horse battery staple, 32 bytes or more" }
		var l logsink.Buffer
		o.Logger = l.Logger()
		logs.Store(o.Logger, &l)
	})
}

// TestTokensAtRestWithoutKey: without a secret key the hub warns at start
// and keeps the tokens we call partners with readable (marked plain); the
// tokens partners call us with are still only hashes. A key set later seals
// the stored tokens at the next start, and a wrong key refuses to start.
func TestTokensAtRestWithoutKey(t *testing.T) {
	t.Parallel()
	var logs sync.Map
	hubtest.Each(t, func(t *testing.T, h *hubtest.Hub) {
		l, _ := logs.Load(h.Logger)
		if !strings.Contains(l.(*logsink.Buffer).String(), "level=WARN msg=\"no secret key configured") {
			t.Errorf("no warning about the missing secret key in the logs:\n%s", l.(*logsink.Buffer).String())
		}
		cpoID, inbound, outbound, tokenA := partnerTokens(t, h)
		text := dbText(t, h)
		for _, tok := range append(inbound, tokenA...) {
			if strings.Contains(text, tok) {
				t.Errorf("token %q (one that calls us) is stored in clear", tok)
			}
		}
		for _, tok := range outbound {
			if !strings.Contains(text, "plain:"+tok) {
				t.Errorf("token %q (one we call with) is not stored readable", tok)
			}
		}

		// The operator sets a key: the next start seals what is stored.
		h.Close()
		sealed := hubtest.Start(t, h.Engine, func(o *hubtest.Options) {
			o.DBURL = h.DBURL
			o.Config = func(c *app.Config) { c.SecretKey = "a key set later, 32 bytes or more long" }
		})
		if n := storetest.Count(t, sealed.DB, "SELECT COUNT(*) FROM platforms WHERE token_out LIKE 'v1:%'"); n != 2 {
			t.Errorf("%d tokens sealed at start, want 2", n)
		}
		text = dbText(t, sealed)
		for _, tok := range outbound {
			if strings.Contains(text, "plain:"+tok) {
				t.Errorf("token %q is still stored in clear", tok)
			}
		}
		if _, err := sealed.Parties.Rotate(ctx(t), cpoID); err != nil {
			t.Fatalf("rotate with the sealed token: %v", err)
		}
		sealed.Close()

		// Another key cannot open them: the hub does not start.
		if err := hubtest.StartError(t, h.DBURL, "the wrong key, though 32 bytes or longer"); !strings.Contains(err.Error(), "secret key") {
			t.Errorf("start with the wrong key: %v", err)
		}
	}, func(o *hubtest.Options) {
		var l logsink.Buffer
		o.Logger = l.Logger()
		logs.Store(o.Logger, &l)
	})
}
