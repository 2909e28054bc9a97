package wire

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/voicetest-go/voicetest/voicetest"
	"github.com/voicetest-go/voicetest/voicetest/scrub"
)

// RedactedError is an error whose message had secrets taken out (see
// scrub.Error): it matches what the original error matches (errors.Is)
// but does not unwrap to it.
type RedactedError = scrub.Error

// RedactURL returns url with the password of its userinfo and the values
// of query parameters that carry credentials (a signed URL's signature, a
// token, a key) replaced by "REDACTED", for captures, logs and errors.
func RedactURL(raw string) string {
	var none *scrub.Scrubber // by position only
	return none.URL(raw)
}

// ScrubError returns err with sc's secrets blanked from its message. The
// voicetest error types keep their type, so that errors.As still finds a
// *voicetest.TimeoutError or a *voicetest.TransportClosedError (with the
// hint or cause scrubbed); any other error whose message holds a secret
// becomes a *scrub.Error, which still matches what it matched with
// errors.Is.
func ScrubError(sc *scrub.Scrubber, err error) error {
	if err == nil {
		return nil
	}
	if clean := sc.String(err.Error()); clean == err.Error() {
		return err
	}
	var te *voicetest.TimeoutError
	if errors.As(err, &te) && te == err {
		cp := *te
		cp.Hint = sc.String(cp.Hint)
		return &cp
	}
	var tc *voicetest.TransportClosedError
	if errors.As(err, &tc) && tc == err {
		return &voicetest.TransportClosedError{Adapter: tc.Adapter, Err: ScrubError(sc, tc.Err)}
	}
	return sc.Error(err)
}

// ScrubLogf returns a log function that blanks sc's secrets from each line
// before calling logf (nil logs nothing).
func ScrubLogf(sc *scrub.Scrubber, logf func(string, ...any)) func(string, ...any) {
	if logf == nil {
		return func(string, ...any) {}
	}
	return func(format string, args ...any) {
		logf("%s", sc.String(fmt.Sprintf(format, args...)))
	}
}

// ScrubEvent blanks sc's secrets in the text an event carries: its Text,
// Data, and a tool call's arguments and result (a changed call is copied,
// not changed in place). Audio is left alone. Every Conn does this to the
// events it queues; an adapter that reads its agent some other way (an
// SDK's own connection) calls it itself.
func ScrubEvent(sc *scrub.Scrubber, ev *voicetest.AgentEvent) {
	if ev.Text != "" {
		ev.Text = sc.String(ev.Text)
	}
	if len(ev.Data) > 0 {
		ev.Data = sc.JSON(ev.Data)
	}
	if t := ev.Tool; t != nil {
		args, res := sc.JSON(t.Arguments), sc.JSON(t.Result)
		if len(args) > 0 && !bytes.Equal(args, t.Arguments) || len(res) > 0 && !bytes.Equal(res, t.Result) {
			cp := *t
			cp.Arguments, cp.Result = args, res
			ev.Tool = &cp
		}
	}
}
