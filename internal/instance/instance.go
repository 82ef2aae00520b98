// Package instance names the running ocpihub process, so that the leases it
// takes on shared queues say who holds them, and tells whether the holder
// of a lease is still alive.
//
// A lease always has a deadline; a holder that stops renewing it loses it
// when it runs out. The name lets a restarted process do better than wait:
// a lease whose holder ran on this machine, in this PID namespace, and is
// gone (its process no longer exists, or it had our own PID with another
// nonce and so was an earlier process that PID belonged to) is free at
// once. A holder on another machine or in another PID namespace
// cannot be checked from here, so its lease is respected until its
// deadline: several replicas on one PostgreSQL never take a live replica's
// lease.
package instance

import (
	"crypto/rand"
	"os"
	"strconv"
	"strings"
)

// ID names one run of one process: boot id, PID namespace, PID and a
// random nonce, joined by dots. On systems without /proc the boot id and
// namespace are empty and no holder is ever judged dead (leases then only
// expire).
type ID string

// sep ends an ID inside a lease token: token = ID + sep + per-lease part.
const sep = "~"

// New returns the ID of the running process (a new one on every call: a
// process calls it once).
func New() ID {
	return ID(strings.Join([]string{bootID(), pidNamespace(), strconv.Itoa(os.Getpid()), rand.Text()[:10]}, "."))
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
		return true // our PID with another nonce: a process that had it before us
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
