package instance

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
)

func TestGone(t *testing.T) {
	t.Parallel()
	me := New()
	parts := strings.Split(string(me), ".")
	if parts[0] == "" || parts[1] == "" {
		t.Skip("no /proc: holders are never judged dead here")
	}
	// A process that has exited (and been reaped) on this machine.
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	dead := ID(strings.Join([]string{parts[0], parts[1], strconv.Itoa(cmd.Process.Pid), "n0nce"}, "."))
	earlier := ID(strings.Join([]string{parts[0], parts[1], parts[2], "0ldrun"}, "."))
	live := ID(strings.Join([]string{parts[0], parts[1], strconv.Itoa(os.Getppid()), "n0nce"}, "."))
	elsewhere := ID(strings.Join([]string{"other-boot", parts[1], strconv.Itoa(cmd.Process.Pid), "n0nce"}, "."))
	sibling, released := New(), New()
	released.Release()
	otherNS := ID(strings.Join([]string{parts[0], "1", parts[2], "0ldrun"}, "."))
	for _, tc := range []struct {
		name   string
		holder ID
		gone   bool
	}{
		{"itself", me, false},
		{"another instance alive in this process", sibling, false},
		{"an instance of this process that was released", released, true},
		{"exited process on this machine", dead, true},
		{"earlier run with our PID", earlier, true},
		{"live process on this machine", live, false},
		{"another machine", elsewhere, false},
		{"another PID namespace", otherNS, false},
		{"no holder (old token)", "", false},
		{"garbage", "a.b", false},
	} {
		if got := me.Gone(tc.holder); got != tc.gone {
			t.Errorf("%s: Gone(%q) = %v, want %v", tc.name, tc.holder, got, tc.gone)
		}
	}
	tok := me.Token("abc")
	if Holder(tok) != me || Holder("dead-worker") != "" {
		t.Errorf("Holder(%q) = %q", tok, Holder(tok))
	}
}
