package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ocpihub/ocpihub/internal/store"
)

// TestPartyInviteSandbox: sandbox credentials go to the sandbox's database
// and point at the sandbox's versions URL.
func TestPartyInviteSandbox(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	prod := "sqlite:" + filepath.Join(dir, "ocpihub.db")
	env := func(string) string { return "" }
	var out, errOut bytes.Buffer
	args := []string{"party", "invite", "--name", "tester", "--sandbox", "--json", "--db", prod, "--sandbox-addr", "127.0.0.1:9443"}
	if code := run(context.Background(), args, &out, &errOut, env); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	var inv struct {
		Token       string `json:"token"`
		VersionsURL string `json:"versions_url"`
	}
	if err := json.Unmarshal(out.Bytes(), &inv); err != nil || inv.Token == "" || inv.VersionsURL != "http://127.0.0.1:9443/ocpi/versions" {
		t.Fatalf("output %s (%v)", out.String(), err)
	}
	db, err := store.Open(context.Background(), "sqlite:"+filepath.Join(dir, "ocpihub-sandbox.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n int
	if err := db.Read().QueryRow(context.Background(), "SELECT COUNT(*) FROM invitations WHERE sandbox").Scan(&n); err != nil || n != 1 {
		t.Fatalf("%d sandbox invitations in the sandbox database (%v)", n, err)
	}
	if matches, _ := filepath.Glob(filepath.Join(dir, "ocpihub.db")); len(matches) != 0 {
		t.Fatal("the sandbox invitation opened production's database")
	}

	errOut.Reset()
	args = []string{"party", "invite", "--name", "tester", "--sandbox", "--db", prod}
	if code := run(context.Background(), args, &out, &errOut, env); code != 2 || !strings.Contains(errOut.String(), "sandbox is off") {
		t.Fatalf("without a sandbox: exit %d %s", code, errOut.String())
	}
}
