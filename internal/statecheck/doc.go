// Package statecheck holds the module's check that no package keeps
// package-level mutable state (the team's rule: none but test flags, in
// test code too). The check is its test, TestNoPackageState; this package
// has no API.
package statecheck
