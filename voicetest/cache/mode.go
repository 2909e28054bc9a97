package cache

import (
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"
)

// Mode says what the cache does with a request.
type Mode int

// The cache modes. The zero Mode is Replay, the strictest.
const (
	// Replay answers only from stored entries; a miss is a *MissError.
	Replay Mode = iota
	// Record answers from stored entries and calls through on a miss,
	// storing the new answer.
	Record
	// Refresh always calls through and overwrites the stored entry.
	Refresh
	// Off always calls through and neither reads nor writes entries.
	Off
)

var modeNames = [...]string{Replay: "replay", Record: "record", Refresh: "refresh", Off: "off"}

// String returns the mode's name as ParseMode accepts it.
func (m Mode) String() string {
	if m >= 0 && int(m) < len(modeNames) {
		return modeNames[m]
	}
	return fmt.Sprintf("Mode(%d)", int(m))
}

// ParseMode parses "replay", "record", "refresh" or "off" (case and
// surrounding space ignored).
func ParseMode(s string) (Mode, error) {
	v := strings.ToLower(strings.TrimSpace(s))
	for m, name := range modeNames {
		if v == name {
			return Mode(m), nil
		}
	}
	return Replay, fmt.Errorf("voicetest/cache: unknown cache mode %q: use replay, record, refresh or off", s)
}

// Test flags, registered only in test binaries (testing.Testing()).
var (
	cacheFlag  *string
	recordFlag *bool
)

func init() {
	if testing.Testing() {
		cacheFlag = flag.String("voicetest.cache", "", "voicetest cache `mode`: replay, record, refresh or off (default: record, or replay when $CI is set)")
		recordFlag = flag.Bool("voicetest.record", false, "record missing voicetest cache entries (same as -voicetest.cache=record)")
	}
}

// Environment variables that choose the mode.
const (
	// EnvMode names the variable holding a mode: VOICETEST_CACHE=replay.
	EnvMode = "VOICETEST_CACHE"
	// EnvRecord names the variable that asks for Record: VOICETEST_RECORD=1.
	EnvRecord = "VOICETEST_RECORD"
	// EnvUsage names the variable holding a directory where each process
	// writes the entries it used, for voicetest-update to prune the rest.
	EnvUsage = "VOICETEST_CACHE_USAGE"
)

// DefaultMode returns the mode chosen by the test flags and the environment,
// in this order of precedence:
//
//  1. -voicetest.cache=MODE, or -voicetest.record (= record);
//  2. VOICETEST_CACHE=MODE, or VOICETEST_RECORD=1 (= record);
//  3. replay when CI is set (to anything but "", "0" or "false"), else record.
//
// It fails on an unknown mode or on flags or variables that contradict
// each other.
func DefaultMode() (Mode, error) {
	flagMode, recFlag := "", false
	if cacheFlag != nil {
		flagMode, recFlag = *cacheFlag, *recordFlag
	}
	return resolveMode(flagMode, recFlag, os.Getenv)
}

func resolveMode(flagMode string, recFlag bool, getenv func(string) string) (Mode, error) {
	pick := func(modeSrc, mode string, rec bool, recSrc string) (Mode, bool, error) {
		if mode == "" {
			if rec {
				return Record, true, nil
			}
			return 0, false, nil
		}
		m, err := ParseMode(mode)
		if err != nil {
			return 0, false, fmt.Errorf("%w (from %s)", err, modeSrc)
		}
		if rec && m != Record {
			return 0, false, fmt.Errorf("voicetest/cache: %s asks for %s but %s asks for record; drop one of them", modeSrc, m, recSrc)
		}
		return m, true, nil
	}
	if m, ok, err := pick("-voicetest.cache", flagMode, recFlag, "-voicetest.record"); err != nil || ok {
		return m, err
	}
	if m, ok, err := pick(EnvMode, getenv(EnvMode), truthy(getenv(EnvRecord)), EnvRecord); err != nil || ok {
		return m, err
	}
	if truthy(getenv("CI")) {
		return Replay, nil
	}
	return Record, nil
}

// truthy reports whether an environment value means "on".
func truthy(s string) bool {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "", "0", "false", "f", "no", "off":
		return false
	}
	return true
}
