//go:build !unix

package lkagentjs

import "os/exec"

// ownGroup does nothing where process groups are not available.
func ownGroup(*exec.Cmd) {}

// terminate kills cmd (its job processes may outlive it here).
func terminate(cmd *exec.Cmd, _ bool) { _ = cmd.Process.Kill() }
