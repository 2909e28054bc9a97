package voicetest

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

func TestTypedErrorsMatchSentinels(t *testing.T) {
	te := &TimeoutError{Phase: PhaseFirstChunk, Timeout: 60 * time.Second, Turn: 2, Hint: "raise Config.Timeouts.FirstChunk"}
	if !errors.Is(fmt.Errorf("run: %w", te), ErrTimeout) {
		t.Error("wrapped TimeoutError does not match ErrTimeout")
	}
	for _, want := range []string{`"first agent audio"`, "1m0s", "turn 2", "Config.Timeouts.FirstChunk"} {
		if !strings.Contains(te.Error(), want) {
			t.Errorf("TimeoutError message %q lacks %q", te.Error(), want)
		}
	}
	cause := errors.New("connection reset")
	tc := &TransportClosedError{Adapter: "twilio", Err: cause}
	if !errors.Is(tc, ErrTransportClosed) || !errors.Is(tc, cause) {
		t.Error("TransportClosedError does not match ErrTransportClosed and its cause")
	}
	ue := &UnsupportedError{Adapter: "elevenlabs", Capability: "native interrupt", Alternative: "barge in with overlapping audio"}
	if !errors.Is(ue, ErrUnsupported) || !strings.Contains(ue.Error(), `"elevenlabs"`) || !strings.Contains(ue.Error(), "overlapping audio") {
		t.Errorf("UnsupportedError = %q, want adapter, capability and alternative", ue.Error())
	}
}

func TestVerdictStatus(t *testing.T) {
	for _, tc := range []struct {
		in   []Status
		want Status
	}{
		{nil, StatusInconclusive},
		{[]Status{StatusPass, StatusPass}, StatusPass},
		{[]Status{StatusPass, StatusInconclusive}, StatusInconclusive},
		{[]Status{StatusInconclusive, StatusFail}, StatusFail},
	} {
		var v Judgment
		for _, s := range tc.in {
			v.Criteria = append(v.Criteria, CriterionResult{Criterion: "c", Status: s})
		}
		if got := v.Status(); got != tc.want {
			t.Errorf("Verdict%v.Status() = %s, want %s", tc.in, got, tc.want)
		}
	}
}
