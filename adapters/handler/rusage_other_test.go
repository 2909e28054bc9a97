//go:build !unix

package handler_test

import "testing"

type rusage struct{}

func getRusage() rusage { return rusage{} }

// reportRusage reports nothing where getrusage does not exist.
func reportRusage(*testing.B, rusage) {}
