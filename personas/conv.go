package personas

import (
	"sync"
	"weak"

	"github.com/voicetest-go/voicetest/voicetest"
)

// convID identifies one conversation: the State the runner passes on
// every turn of that conversation, held by a weak pointer so that it is
// not retained after the call returns (and two States never share an ID,
// even after one is collected), and the scenario's name for messages.
type convID struct {
	state weak.Pointer[voicetest.State]
	name  string
}

func idOf(st *voicetest.State) convID {
	return convID{state: weak.Make(st), name: st.Name()}
}

// gone reports whether the conversation's State was collected.
func (id convID) gone() bool { return id.state.Value() == nil }

// progress is how far a conversation has gone, as the State shows it. It
// never decreases within one conversation, so a smaller value for the same
// State means that a new conversation reuses it (a later run).
type progress struct {
	turns    int
	messages int
}

func progressOf(st *voicetest.State) progress {
	return progress{turns: st.Turn(), messages: len(st.Transcript())}
}

// ahead reports whether p is further on than q in either measure.
func (p progress) ahead(q progress) bool {
	return q.turns < p.turns || q.messages < p.messages
}

// conversations keeps per-conversation state S for a User value that may
// serve several conversations at once (parallel subtests) or one after the
// other (Config.Repeat). It is safe for concurrent use.
type conversations[S any] struct {
	mu sync.Mutex
	m  map[convID]*convEntry[S]
}

type convEntry[S any] struct {
	mu   sync.Mutex // held while a turn of this conversation runs
	seen progress
	s    S
}

// lock returns the state of st's conversation, locked for the caller, and
// the function that records the conversation's progress and unlocks it.
// A conversation seen for the first time, or one whose progress went
// backwards (a new run at a reused address), starts from fresh().
func (c *conversations[S]) lock(st *voicetest.State, fresh func() S) (*S, func()) {
	id := idOf(st)
	now := progressOf(st)
	c.mu.Lock()
	if c.m == nil {
		c.m = make(map[convID]*convEntry[S])
	}
	e, ok := c.m[id]
	if !ok {
		// Drop conversations whose State is gone before adding one.
		for old := range c.m {
			if old.gone() {
				delete(c.m, old)
			}
		}
		e = &convEntry[S]{s: fresh()}
		c.m[id] = e
	}
	c.mu.Unlock()
	e.mu.Lock()
	if ok && e.seen.ahead(now) {
		e.s = fresh()
	}
	e.seen = now
	return &e.s, e.mu.Unlock
}

// forget drops st's conversation, once it is over.
func (c *conversations[S]) forget(st *voicetest.State) {
	c.mu.Lock()
	delete(c.m, idOf(st))
	c.mu.Unlock()
}
