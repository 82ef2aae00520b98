package crashtest

import (
	"context"
	"crypto/rand"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ocpihub/ocpihub/internal/hubtest"
	"github.com/ocpihub/ocpihub/internal/hubtest/logsink"
	"github.com/ocpihub/ocpihub/internal/ocpiclient"
	"github.com/ocpihub/ocpihub/internal/party"
	"github.com/ocpihub/ocpihub/internal/sim"
	"github.com/ocpihub/ocpihub/internal/store"
	"github.com/ocpihub/ocpihub/internal/store/storetest"
)

// adminToken is the operator token of every hub the harness starts.
const adminToken = "crash-admin-token-0123456789"

var binDir string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "ocpihub-crashtest-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binDir = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

var (
	buildOnce sync.Once
	buildPath string
	buildErr  error
)

// binary builds cmd/ocpihub once per test binary (without the race
// detector: the subprocess is the system under test, not the test).
func binary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		goBin := filepath.Join(os.Getenv("GOROOT"), "bin", "go")
		if _, err := os.Stat(goBin); err != nil {
			goBin = "go"
		}
		buildPath = filepath.Join(binDir, "ocpihub")
		cmd := exec.Command(goBin, "build", "-o", buildPath, "github.com/ocpihub/ocpihub/cmd/ocpihub")
		out, err := cmd.CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return buildPath
}

// hubProc is the hub binary running as a subprocess. Restarts keep its
// database, address and secret key.
type hubProc struct {
	t      *testing.T
	bin    string
	db     string
	addr   string
	secret string
	cmd    *exec.Cmd
	logs   *logsink.Buffer
	runs   int
	// env is added to every run's environment (settings of the test).
	env []string
	// exited is closed when the current process has been waited for.
	exited chan struct{}
}

// startHub starts the binary on a fresh database of engine, on a free
// loopback port, in development mode (loopback partners, the PG
// simulator).
func startHub(t *testing.T, engine store.Engine, env ...string) *hubProc {
	t.Helper()
	return startHubOn(t, storetest.URL(t, engine), env...)
}

// startHubOn is startHub on the database at db.
func startHubOn(t *testing.T, db string, env ...string) *hubProc {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	h := &hubProc{t: t, bin: binary(t), db: db, addr: addr, secret: rand.Text() + rand.Text(), logs: &logsink.Buffer{}, env: env}
	t.Cleanup(func() {
		h.stop()
		if t.Failed() {
			t.Logf("hub logs (last 6000 bytes):\n%s", tail(h.logs.String(), 6000))
		}
	})
	h.start()
	return h
}

func (h *hubProc) URL() string         { return "http://" + h.addr }
func (h *hubProc) VersionsURL() string { return h.URL() + "/ocpi/versions" }

// start runs the binary and waits until /readyz answers 200.
func (h *hubProc) start() {
	h.t.Helper()
	h.runs++
	fmt.Fprintf(h.logs, "---- run %d\n", h.runs)
	cmd := exec.Command(h.bin, "serve")
	cmd.Env = append(os.Environ(),
		"OCPIHUB_ADDR="+h.addr,
		"OCPIHUB_DB="+h.db,
		"OCPIHUB_ADMIN_TOKEN="+adminToken,
		"OCPIHUB_SECRET_KEY="+h.secret,
		"OCPIHUB_DEV=true",
		"OCPIHUB_LOG_LEVEL=info",
		"OCPIHUB_SYNC_INTERVAL=0",
		"OCPIHUB_SHUTDOWN_TIMEOUT=2s",
	)
	cmd.Env = append(cmd.Env, h.env...)
	cmd.Stdout, cmd.Stderr = h.logs, h.logs
	if err := cmd.Start(); err != nil {
		h.t.Fatal(err)
	}
	h.cmd = cmd
	exited := make(chan struct{})
	h.exited = exited
	go func() { _ = cmd.Wait(); close(exited) }()
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get(h.URL() + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		select {
		case <-exited:
			h.t.Fatalf("the hub exited while starting: %v", cmd.ProcessState)
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			h.t.Fatal("the hub did not become ready within 30 s")
		}
	}
}

// kill sends SIGKILL and waits until the process is gone (reaped, so its
// PID no longer exists).
func (h *hubProc) kill() {
	h.t.Helper()
	if err := h.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		h.t.Fatal(err)
	}
	<-h.exited
	fmt.Fprintf(h.logs, "---- killed run %d (SIGKILL)\n", h.runs)
}

// stop ends the current process, if any, politely.
func (h *hubProc) stop() {
	if h.cmd == nil {
		return
	}
	select {
	case <-h.exited:
		return
	default:
	}
	_ = h.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-h.exited:
	case <-time.After(10 * time.Second):
		_ = h.cmd.Process.Kill()
		<-h.exited
	}
}

// register onboards a simulated platform: an invitation from the admin
// API, then the partner's credentials handshake.
func (h *hubProc) register(ctx context.Context, p *sim.Platform) {
	h.t.Helper()
	var inv party.Invitation
	c := ocpiclient.New(hubtest.Logger())
	if _, err := c.Call(ctx, ocpiclient.Request{Method: http.MethodPost, URL: h.URL() + "/admin/invitations", Token: adminToken, Base64: true,
		Body: map[string]any{"name": p.Name()}, MaxAttempts: 1}, &inv); err != nil {
		h.t.Fatalf("invite %s: %v", p.Name(), err)
	}
	if err := p.Register(ctx, h.VersionsURL(), inv.Token); err != nil {
		h.t.Fatalf("register %s: %v", p.Name(), err)
	}
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	s = s[len(s)-n:]
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	return s
}

// engines runs fn on each engine, one after the other: the timings the
// tests bound are those of one hub on a busy machine, not of two racing.
func engines(t *testing.T, fn func(t *testing.T, engine store.Engine)) {
	for _, engine := range storetest.Engines() {
		t.Run(string(engine), func(t *testing.T) { fn(t, engine) })
	}
}
