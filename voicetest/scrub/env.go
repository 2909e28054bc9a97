package scrub

import (
	"os"
	"strings"
)

// MinEnvLen is the length below which the value of an environment
// variable is not learned, even under a credential's name: an environment
// also holds flags and short settings ("true", "disabled") under names
// like TOKENIZERS_PARALLELISM, and a key is never that short.
const MinEnvLen = 8

// AddEnv learns the values of the variables of environ ("NAME=value", as
// os.Environ returns them) whose names say they hold a credential
// (EnvName) and whose values are at least MinEnvLen bytes long. A key an
// adapter or a client library reads from the environment, and that a
// server echoes back, is then blanked wherever it appears.
func (s *Scrubber) AddEnv(environ []string) {
	if s == nil {
		return
	}
	var vals []string
	for _, kv := range environ {
		name, val, ok := strings.Cut(kv, "=")
		if !ok || len(strings.TrimSpace(val)) < MinEnvLen || !EnvName(name) {
			continue
		}
		vals = append(vals, val)
	}
	s.Add(vals...)
}

// FromEnv returns a Scrubber that knows secrets and the credentials of the
// process's environment (AddEnv of os.Environ()), as they are when it is
// called.
func FromEnv(secrets ...string) *Scrubber {
	s := New(secrets...)
	s.AddEnv(os.Environ())
	return s
}
