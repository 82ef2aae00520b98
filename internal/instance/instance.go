// Package instance names the running ocpihub process, so that the leases it
// takes on shared queues say who holds them, and tells whether the holder
// of a lease is still alive.
//
// A lease always has a deadline; a holder that stops renewing it loses it
// when it runs out. The name lets a restarted process do better than wait:
// a lease whose holder ran on this machine, in this PID namespace, and is
// gone (its process no longer exists, or it had our own PID with another
// nonce and is not an instance alive in this process, so it was released
// or belonged to an earlier process with that PID) is free at once. A holder on another machine or in another PID namespace
// cannot be checked from here, so its lease is respected until its
// deadline: several replicas on one PostgreSQL never take a live replica's
// lease.
package instance

import (
	"crypto/rand"
	"os"
	"strconv"
	"strings"
	"sync"
)

// running holds the IDs this process has handed out and not released: the
// instances alive in it. Usually one; tests (and embedding programs) run
// several hubs in one process, and one of them must not take another's
// leases or jobs for those of an earlier process with the same PID. It is
// process-wide because liveness is a fact about the process.
var running = struct {
	sync.Mutex
	ids map[ID]bool
}{ids: map[ID]bool{}}

// ID names one run of one process: boot id, PID namespace, PID and a
// random nonce, joined by dots. On systems without /proc the boot id and
// namespace are empty and no holder is ever judged dead (leases then only
// expire).
type ID string

// sep ends an ID inside a lease token: token = ID + sep + per-lease part.
const sep = "~"

// New returns the ID of a new instance in the running process (a new one
// on every call). It counts as alive until Release.
func New() ID {
	id := ID(strings.Join([]string{bootID(), pidNamespace(), strconv.Itoa(os.Getpid()), rand.Text()[:10]}, "."))
	running.Lock()
	running.ids[id] = true
	running.Unlock()
	return id
}

// Release ends the instance: from now on its leases and jobs count as a
// dead holder's, also for other instances in this process. Call it once
// the instance has stopped working.
func (id ID) Release() {
	running.Lock()
	delete(running.ids, id)
	running.Unlock()
}

// Token returns a lease token held by id: its ID, then unique.
func (id ID) Token(unique string) string { return string(id) + sep + unique }

// Holder returns the ID in a lease token ("" for a token of another form,
// such as one taken before leases named their holder).
func Holder(token string) ID {
	h, _, ok := strings.Cut(token, sep)
	if !ok {
		return ""
	}
	return ID(h)
}

// Gone reports whether the holder of a lease is known to be dead, as seen
// by id (the running process). false means alive or unknown: the lease is
// respected until it expires.
func (id ID) Gone(holder ID) bool {
	if holder == "" || holder == id {
		return false
	}
	mine, theirs := strings.Split(string(id), "."), strings.Split(string(holder), ".")
	if len(mine) != 4 || len(theirs) != 4 || mine[0] == "" || mine[1] == "" {
		return false
	}
	if mine[0] != theirs[0] || mine[1] != theirs[1] {
		return false // another machine, another boot or another PID namespace
	}
	pid, err := strconv.Atoi(theirs[2])
	if err != nil || pid <= 0 {
		return false
	}
	if pid == os.Getpid() {
		// Our PID: another instance of this process, alive until released,
		// or one of an earlier process that had our PID.
		running.Lock()
		defer running.Unlock()
		return !running.ids[holder]
	}
	return !alive(pid)
}

func bootID() string {
	b, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return ""
	}
	return strings.ReplaceAll(strings.TrimSpace(string(b)), ".", "")
}

func pidNamespace() string {
	l, err := os.Readlink("/proc/self/ns/pid")
	if err != nil {
		return ""
	}
	// "pid:[4026531836]" → "4026531836"
	return strings.Trim(strings.TrimPrefix(l, "pid:"), "[]")
}
