package voicetest_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/voicetest-go/voicetest/pcm"
	"github.com/voicetest-go/voicetest/voicetest"
)

func TestLimitError(t *testing.T) {
	err := fmt.Errorf("receiving: %w", &voicetest.LimitError{What: "queued events", Limit: 32 << 20, Unit: "bytes", Name: "WSOptions.MaxQueueBytes", Setting: "WSOptions.MaxQueueBytes"})
	if !errors.Is(err, voicetest.ErrLimit) {
		t.Error("a wrapped LimitError does not match ErrLimit")
	}
	for _, want := range []string{"queued events", "32 MiB", "raise WSOptions.MaxQueueBytes"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q lacks %q", err, want)
		}
	}
	fixed := &voicetest.LimitError{What: "marks", Limit: 4096, Unit: "marks", Name: "wire.MaxPendingMarks"}
	if got := fixed.Error(); !strings.Contains(got, "4096 marks (wire.MaxPendingMarks)") || !strings.Contains(got, "fixed") {
		t.Errorf("fixed bound: %q", got)
	}
}

func TestAgentEventSize(t *testing.T) {
	empty := voicetest.AgentEvent{}.Size()
	audio := voicetest.AgentEvent{Kind: voicetest.AgentAudio, Audio: pcm.Chunk{Rate: 24000, Samples: make([]int16, 1000, 3000)}}
	if got := audio.Size() - empty; got != 6000 {
		t.Errorf("audio of capacity 3000 samples counts %d bytes, want 6000", got)
	}
	tool := voicetest.AgentEvent{Kind: voicetest.AgentToolCall, Text: "abc", Data: json.RawMessage("[1]"), Tool: &voicetest.ToolCall{Name: "f", Arguments: json.RawMessage(`{"a":1}`)}}
	if got := tool.Size() - empty; got < 3+3+1+7 {
		t.Errorf("a tool call event counts %d bytes beyond an empty one", got)
	}
}
