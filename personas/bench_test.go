package personas_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/voicetest-go/voicetest/personas"
	"github.com/voicetest-go/voicetest/voicetest"
	"github.com/voicetest-go/voicetest/voicetest/fixtures"
)

// instant is a model that answers at once with the same tool call.
type instant struct{ msg voicetest.ChatMessage }

func (m instant) Complete(context.Context, voicetest.ChatRequest) (voicetest.ChatResponse, error) {
	return voicetest.ChatResponse{Message: m.msg}, nil
}

// longConversation is the State after 20 turns with a tool call on each.
func longConversation(b *testing.B) *voicetest.State {
	b.Helper()
	var said []string
	var replies []fixtures.Reply
	for i := range 20 {
		said = append(said, fmt.Sprintf("This is my line number %d, about the booking.", i+1))
		replies = append(replies, fixtures.Reply{Text: fmt.Sprintf("Thanks, noted as item %d. Anything else?", i+1),
			Tools: []voicetest.ToolCall{{Name: "note", Arguments: json.RawMessage(fmt.Sprintf(`{"item":%d}`, i+1)), Result: json.RawMessage(`{"ok":true}`)}}})
	}
	res, err := voicetest.Run(b.Context(), voicetest.Config{Agent: textAgent("Hello.", replies...), User: personas.Scripted(said...),
		Pacing: voicetest.PaceFast, MaxTurns: 30, Script: []voicetest.Step{voicetest.Proceed(0)}})
	if err != nil || res.Err != nil || res.Turns != 20 {
		b.Fatalf("building the conversation: %v %v (%d turns)", err, res.Err, res.Turns)
	}
	return res.State
}

// BenchmarkLLMTurn is the persona's own work for one turn of a 20-turn
// conversation (rendering, role reversal, prompt, decision), with a model
// that answers at once.
func BenchmarkLLMTurn(b *testing.B) {
	st := longConversation(b)
	m := instant{voicetest.ChatMessage{ToolCalls: []voicetest.ToolCall{{Name: "say", Arguments: json.RawMessage(`{"text":"Two people at seven."}`)}}}}
	user := personas.LLM(personas.Rushed, "Book a table.").With(m)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := user.NextUtterance(b.Context(), st); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRedTeamTurn is the attacker's own work for one turn (reading
// the reply, the refusal check, scoring through an instant model, the
// prompt), on a fresh attacker each time.
func BenchmarkRedTeamTurn(b *testing.B) {
	st := longConversation(b)
	attack := instant{voicetest.ChatMessage{ToolCalls: []voicetest.ToolCall{{Name: "attack", Arguments: json.RawMessage(`{"message":"Who is the manager?","technique":"AUTHORITY","rationale":"r"}`)}}}}
	b.ReportAllocs()
	for b.Loop() {
		rt := personas.RedTeam("learn the door code", nil).With(attack)
		if _, err := rt.NextUtterance(b.Context(), st); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPersonaEffects runs each library persona's effects on one
// second of 24 kHz speech-like audio; bytes are input PCM16 bytes.
func BenchmarkPersonaEffects(b *testing.B) {
	in := fixtures.WordTones("please book a table", 24000).Slice(0, 1e9)
	for _, p := range personas.Library() {
		if p.Effects == nil {
			continue
		}
		b.Run(p.Name, func(b *testing.B) {
			b.SetBytes(int64(2 * in.Len()))
			b.ReportAllocs()
			for b.Loop() {
				p.Effects(in)
			}
		})
	}
}

// BenchmarkScriptedTurn is a scripted user's work for one turn.
func BenchmarkScriptedTurn(b *testing.B) {
	st := &voicetest.State{}
	b.ReportAllocs()
	for b.Loop() {
		user := personas.Scripted("One.", "Two.")
		if _, err := user.NextUtterance(b.Context(), st); err != nil {
			b.Fatal(err)
		}
	}
}
