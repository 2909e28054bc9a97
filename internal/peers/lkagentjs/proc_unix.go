//go:build unix

package lkagentjs

import (
	"os/exec"
	"syscall"
)

// ownGroup starts cmd in a process group of its own, so that its job
// processes stop with it.
func ownGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// terminate signals cmd's process group: SIGTERM, or SIGKILL when kill.
func terminate(cmd *exec.Cmd, kill bool) {
	sig := syscall.SIGTERM
	if kill {
		sig = syscall.SIGKILL
	}
	_ = syscall.Kill(-cmd.Process.Pid, sig)
}
