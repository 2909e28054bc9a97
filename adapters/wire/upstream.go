package wire

import (
	"context"
	"fmt"

	"github.com/voicetest-go/voicetest/pcm"
)

// CheckSendRate returns the error SendAudio gives a chunk that is not at
// the session rate, or nil.
func CheckSendRate(adapter string, got, session int) error {
	if got != session {
		return fmt.Errorf("adapters: %s: SendAudio got a chunk at %d Hz, but the session rate is %d Hz; resample it first (pcm.Resample)", adapter, got, session)
	}
	return nil
}

// Sendable returns why nothing can be sent now: ctx is done, or the
// connection has ended or been closed. It returns nil when sending may go
// ahead.
func (c *Conn) Sendable(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return c.ClosedErr()
}

// Upstream converts the user's audio from the session rate to an adapter's
// wire rate with a streaming resampler, reusing one buffer. The zero value
// passes audio through unchanged (the session rate is the wire rate). It is
// not safe for concurrent use: adapters call it with their send lock held.
type Upstream struct {
	Resampler *pcm.Resampler // nil when no conversion is needed
	buf       []int16
}

// Process returns samples at the wire rate. The result may alias the
// input or the Upstream's buffer, and is valid until the next call.
func (u *Upstream) Process(samples []int16) []int16 {
	if u.Resampler == nil {
		return samples
	}
	u.buf = u.Resampler.Process(u.buf[:0], samples)
	return u.buf
}

// Flush returns the resampler's tail at the end of an utterance (nil when
// there is no resampler). The result is valid until the next call.
func (u *Upstream) Flush() []int16 {
	if u.Resampler == nil {
		return nil
	}
	u.buf = u.Resampler.Flush(u.buf[:0])
	return u.buf
}
