package voicetest

import (
	"errors"
	"fmt"
	"unsafe"
)

// ErrLimit matches every *LimitError with errors.Is.
var ErrLimit = errors.New("voicetest: limit exceeded")

// LimitError reports that an agent (or an adapter, or user code) went past
// one of the bounds voicetest keeps on what it holds in memory: events
// queued while the runner was busy, agent audio received after a turn
// ended, tool calls of one response. Every such buffer has a documented
// bound, so that an agent that floods the line fails its test with this
// error instead of exhausting the machine's memory.
type LimitError struct {
	// What names what was bounded, e.g. "agent events queued by the
	// websocket adapter while the runner was not reading".
	What string
	// Limit is the bound, in Unit.
	Limit int64
	// Unit is what Limit counts: "bytes", "events", "tool calls"…
	Unit string
	// Name names the bound, e.g. "wire.WSOptions.MaxQueueBytes" or
	// "wire.MaxPendingMarks".
	Name string
	// Setting is what raises the bound, e.g. "wire.WSOptions.MaxQueueBytes";
	// empty for a fixed bound, which no well-behaved agent comes near.
	Setting string
}

// Error says which limit was hit and how to raise it.
func (e *LimitError) Error() string {
	limit := fmt.Sprintf("%d %s", e.Limit, e.Unit)
	if e.Unit == "bytes" && e.Limit >= 1<<20 && e.Limit%(1<<20) == 0 {
		limit = fmt.Sprintf("%d MiB", e.Limit>>20)
	}
	msg := fmt.Sprintf("voicetest: limit exceeded: %s went past %s", e.What, limit)
	if e.Name != "" {
		msg += " (" + e.Name + ")"
	}
	if e.Setting != "" {
		msg += "; raise " + e.Setting + " if the agent really sends that much"
	} else {
		msg += "; this bound is fixed: the agent floods the line"
	}
	return msg
}

// Is reports whether target is ErrLimit.
func (e *LimitError) Is(target error) bool { return target == ErrLimit }

// eventOverhead is what an AgentEvent costs beyond its payload.
const eventOverhead = int64(unsafe.Sizeof(AgentEvent{}))

// Size returns an estimate, in bytes, of the memory the event holds: its
// audio samples, text, data and tool call, plus the event itself. Adapters
// and the runner bound their queues with it.
func (e AgentEvent) Size() int64 {
	n := eventOverhead + 2*int64(cap(e.Audio.Samples)) + int64(len(e.Text)) + int64(len(e.Data))
	if t := e.Tool; t != nil {
		n += int64(unsafe.Sizeof(*t)) + int64(len(t.ID)+len(t.Name)+len(t.Arguments)+len(t.Result))
	}
	return n
}
