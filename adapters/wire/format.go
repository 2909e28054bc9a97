package wire

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/voicetest-go/voicetest/pcm"
)

// FormatError reports a sample rate or audio format that the protocol, or
// the adapter's settings, do not allow: a rate the agent states in a
// message, a format it names at the handshake, or a rate set in code. An
// unchecked rate is a memory hazard, since audio is resampled to the
// session rate: a 5 KB frame that claims to be at 1 Hz becomes tens of MiB
// at 24 kHz.
type FormatError struct {
	// Adapter names the adapter; empty inside a FrameError, which names it.
	Adapter string
	// What says where the value came from, e.g. "agent_output_audio_format"
	// or "sample_rate of an audio message".
	What string
	// Value is the value, as it was given.
	Value string
	// Allowed lists the values allowed there.
	Allowed []string
	// Hint says how to allow another value, if it can be allowed.
	Hint string
	// Err is the class of the error: pcm.ErrBadRate for a sample rate,
	// nil for a format.
	Err error
}

// Error names the value, where it came from and the allowed set.
func (e *FormatError) Error() string {
	value := e.Value
	if _, err := strconv.Atoi(value); err != nil {
		value = strconv.Quote(value) // a format name, shown exactly
	}
	msg := fmt.Sprintf("%s %s is not allowed; allowed: %s", e.What, value, strings.Join(e.Allowed, ", "))
	if e.Adapter != "" {
		msg = "adapters: " + e.Adapter + ": " + msg
	}
	if e.Hint != "" {
		msg += " (" + e.Hint + ")"
	}
	return msg
}

// Unwrap returns the class of the error (pcm.ErrBadRate for a rate).
func (e *FormatError) Unwrap() error { return e.Err }

// StandardRates returns the sample rates, in Hz, that the generic codecs
// accept unless told otherwise: the rates voice protocols use, from 8 kHz
// telephony to 48 kHz.
func StandardRates() []int {
	return []int{8000, 11025, 12000, 16000, 22050, 24000, 32000, 44100, 48000}
}

// CheckRate returns a *FormatError unless rate is in allowed.
func CheckRate(adapter, what string, rate int, allowed []int, hint string) error {
	if slices.Contains(allowed, rate) {
		return nil
	}
	names := make([]string, len(allowed))
	for i, r := range allowed {
		names[i] = strconv.Itoa(r)
	}
	return &FormatError{Adapter: adapter, What: what, Value: strconv.Itoa(rate), Allowed: names, Hint: hint, Err: pcm.ErrBadRate}
}
