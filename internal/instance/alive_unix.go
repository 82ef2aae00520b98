//go:build unix

package instance

import (
	"errors"
	"syscall"
)

// alive reports whether a process with this PID exists (signal 0 checks
// without sending anything; EPERM means it exists under another user).
func alive(pid int) bool {
	return !errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
}
