package voicetest_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"github.com/voicetest-go/voicetest/voicetest"
	"github.com/voicetest-go/voicetest/voicetest/fixtures"
)

func dataEvent(name, payload string) voicetest.Event {
	return voicetest.Event{Type: voicetest.EventData, Text: name, Data: json.RawMessage(payload)}
}

func TestXMLView(t *testing.T) {
	for _, tc := range []struct {
		name string
		view voicetest.DataView
		e    voicetest.Event
		want string
	}{
		{"object in order, nested, under a root tag", voicetest.XMLView("screen"),
			dataEvent("ui", `{"form":"booking","time":"19:00","free":["19:00","21:00"],"party":{"size":2,"high chair":false}}`),
			`<screen name="ui">
  <form>booking</form>
  <time>19:00</time>
  <free>
    <item>19:00</item>
    <item>21:00</item>
  </free>
  <party>
    <size>2</size>
    <high_chair>false</high_chair>
  </party>
</screen>`},
		{"default root, numbers as written, null empty, text escaped", voicetest.DefaultDataView,
			dataEvent(`a "b"`, `{"price":12.50,"note":null,"html":"<b>&</b>","1st":1}`),
			`<data name="a &quot;b&quot;">
  <price>12.50</price>
  <note></note>
  <html>&lt;b&gt;&amp;&lt;/b&gt;</html>
  <_1st>1</_1st>
</data>`},
		{"a scalar payload, no name", voicetest.XMLView("tool_result"), dataEvent("", `"ready"`), `<tool_result>ready</tool_result>`},
		{"not JSON: escaped text", voicetest.XMLView("data"), dataEvent("raw", `a<b`), `<data name="raw">a&lt;b</data>`},
		{"an invalid root falls back to data", voicetest.XMLView("1 bad"), dataEvent("", `{"a":1}`), "<data>\n  <a>1</a>\n</data>"},
		{"empty payloads are hidden", voicetest.DefaultDataView, dataEvent("mark", ``), ""},
		{"null is hidden", voicetest.DefaultDataView, dataEvent("x", `null`), ""},
		{"tool calls are hidden", voicetest.DefaultDataView,
			voicetest.Event{Type: voicetest.EventToolCall, Text: "book", Tool: &voicetest.ToolCall{Name: "book", Arguments: json.RawMessage(`{"a":1}`)}}, ""},
		{"a client tool's call, shown WithTools", voicetest.XMLView("screen").WithTools("show_slots"),
			voicetest.Event{Type: voicetest.EventToolCall, Text: "show_slots", Tool: &voicetest.ToolCall{Name: "show_slots", Arguments: json.RawMessage(`{"free":["19:00"]}`)}},
			"<tool_call name=\"show_slots\">\n  <free>\n    <item>19:00</item>\n  </free>\n</tool_call>"},
		{"with no arguments it still shows", voicetest.DataView(voicetest.DefaultDataView).WithTools(),
			voicetest.Event{Type: voicetest.EventToolCall, Tool: &voicetest.ToolCall{Name: "show_menu"}}, `<tool_call name="show_menu"></tool_call>`},
		{"a failed result", voicetest.DataView(nil).WithTools("show_slots"),
			voicetest.Event{Type: voicetest.EventToolResult, Tool: &voicetest.ToolCall{Name: "show_slots", Result: json.RawMessage(`"no screen"`), IsError: true}},
			`<tool_error name="show_slots">no screen</tool_error>`},
		{"other tools stay hidden", voicetest.XMLView("screen").WithTools("show_slots"),
			voicetest.Event{Type: voicetest.EventToolCall, Tool: &voicetest.ToolCall{Name: "check_availability", Arguments: json.RawMessage(`{"a":1}`)}}, ""},
		{"data still shows WithTools", voicetest.XMLView("screen").WithTools("show_slots"), dataEvent("", `{"a":1}`), "<screen>\n  <a>1</a>\n</screen>"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.view(tc.e); got != tc.want {
				t.Errorf("got:\n%s\nwant:\n%s", got, tc.want)
			}
		})
	}
}

// Deep and huge payloads are bounded: nesting past 16 levels is written
// as compact JSON, and one event's text is cut at 4000 characters.
func TestXMLViewBounds(t *testing.T) {
	deep := strings.Repeat(`{"a":`, 20) + `1` + strings.Repeat(`}`, 20)
	got := voicetest.DefaultDataView(dataEvent("", deep))
	if !strings.Contains(got, `<a>{"a":{"a":{"a":{"a":1}}}}</a>`) {
		t.Errorf("deep payload:\n%s", got)
	}
	if n := strings.Count(got, "<a>"); n != 16 {
		t.Errorf("%d nested elements, want 16", n)
	}
	huge := `{"text":"` + strings.Repeat("x", 10000) + `"}`
	got = voicetest.DefaultDataView(dataEvent("", huge))
	if n := utf8.RuneCountInString(got); n != 4001 || !strings.HasSuffix(got, "…") {
		t.Errorf("huge payload: %d characters, ends %q", n, got[len(got)-10:])
	}
}

// A user-written User sees, through State.Shown, what the agent showed
// since it last spoke, in the scenario's view, and answers from it.
func TestStateShownReachesAUserWrittenUser(t *testing.T) {
	agent := fixtures.TextAgent(
		fixtures.Reply{Text: "Which time suits you", Latency: 300 * time.Millisecond,
			DataName: "booking_form", Data: json.RawMessage(`{"free":["19:00","21:00"]}`)},
		fixtures.Reply{Text: "Booked", Latency: 300 * time.Millisecond,
			DataName: "booking_form", Data: json.RawMessage(`{"booked":"19:00"}`),
			Tools: []voicetest.ToolCall{{ID: "c1", Name: "book", Arguments: json.RawMessage(`{"time":"19:00"}`)}}},
	)
	var shown []string
	user := voicetest.UserFunc(func(ctx context.Context, st *voicetest.State) (voicetest.Utterance, error) {
		s := st.Shown()
		shown = append(shown, s)
		if i := strings.Index(s, "<item>"); i >= 0 {
			return voicetest.Utterance{Text: "The " + s[i+len("<item>"):i+len("<item>")+5] + " slot please"}, nil
		}
		return voicetest.Utterance{Text: "Thanks"}, nil
	})
	script := []voicetest.Step{
		voicetest.UserSays("A table please"), voicetest.AgentTurn(),
		voicetest.UserTurn(), voicetest.AgentTurn(),
		voicetest.UserTurn(),
	}
	for _, tc := range []struct {
		name  string
		view  voicetest.DataView
		shown []string
		line  string
	}{
		{"default view", nil, []string{
			"<data name=\"booking_form\">\n  <free>\n    <item>19:00</item>\n    <item>21:00</item>\n  </free>\n</data>",
			// The tool call is not shown by default; only this turn's data is.
			"<data name=\"booking_form\">\n  <booked>19:00</booked>\n</data>",
		}, "The 19:00 slot please"},
		{"the scenario's own view", func(e voicetest.Event) string {
			if e.Type == voicetest.EventToolCall {
				return "[called " + e.Tool.Name + "]"
			}
			return voicetest.XMLView("screen")(e)
		}, []string{
			"<screen name=\"booking_form\">\n  <free>\n    <item>19:00</item>\n    <item>21:00</item>\n  </free>\n</screen>",
			"[called book]\n<screen name=\"booking_form\">\n  <booked>19:00</booked>\n</screen>",
		}, "The 19:00 slot please"},
		{"a view that hides everything", func(voicetest.Event) string { return "" }, []string{"", ""}, "Thanks"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			shown = nil
			res, err := runVirtual(t, voicetest.Config{Agent: agent, User: user, DataView: tc.view, Script: script})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.shown, shown); diff != "" {
				t.Errorf("Shown (-want +got):\n%s", diff)
			}
			if m := res.Transcript[2]; m.Role != voicetest.RoleUser || m.Text != tc.line {
				t.Errorf("the caller said %+v, want %q", m, tc.line)
			}
		})
	}
}

// Gym's numbers beside ours, exactly: Gym's TTFAB runs from the reply's
// first event (a data payload, a tool call) to its first audio, ours from
// the end of the caller's speech.
func TestGymMetricsAreExact(t *testing.T) {
	agent := fixtures.Fake(fixtures.FakeConfig{NoTurnEnd: true,
		Greeting: fixtures.Reply{Text: "Hello there", Latency: 200 * time.Millisecond},
		Replies: []fixtures.Reply{
			// The screen updates 300 ms after the question; speech 400 ms later.
			{Latency: 300 * time.Millisecond, DataName: "ui", Data: json.RawMessage(`{"free":["19:00"]}`),
				Then: &fixtures.Reply{Text: "Pick a time", Latency: 400 * time.Millisecond}},
			// A tool call 100 ms after; speech 900 ms later.
			{Latency: 100 * time.Millisecond, Tools: []voicetest.ToolCall{{ID: "c1", Name: "book"}},
				Then: &fixtures.Reply{Text: "Done", Latency: 900 * time.Millisecond}},
		}})
	res, err := runVirtual(t, voicetest.Config{Agent: agent, UserVoice: &toneTTS{},
		Script: []voicetest.Step{
			voicetest.AgentTurn(),                           // 0.2–1.0 s
			voicetest.UserSays("hi"), voicetest.AgentTurn(), // user 1.6–2.0 s; agent 2.7–3.9 s
			voicetest.UserSays("seven please"), voicetest.AgentTurn(), // user 4.5–5.3 s; agent 6.3–6.7 s
		}})
	if err != nil {
		t.Fatal(err)
	}
	g := res.Metrics.Gym
	wantTurns := []voicetest.GymTurn{
		{Turn: 0, TTFAB: 0, HasTTFAB: true, AgentDuration: ms(800), AgentWords: 2},
		{Turn: 1, TTFAB: ms(400), HasTTFAB: true, UserDuration: ms(400), AgentDuration: ms(1200), UserWords: 1, AgentWords: 3},
		{Turn: 2, TTFAB: ms(900), HasTTFAB: true, UserDuration: ms(800), AgentDuration: ms(400), UserWords: 2, AgentWords: 1},
	}
	if diff := cmp.Diff(wantTurns, g.Turns); diff != "" {
		t.Errorf("Gym turns (-want +got):\n%s", diff)
	}
	if want := (voicetest.Percentiles{N: 3, Mean: 433333333, P50: ms(400), P90: ms(900), P95: ms(900), P99: ms(900), Max: ms(900)}); g.TTFAB != want {
		t.Errorf("Gym TTFAB %+v, want %+v", g.TTFAB, want)
	}
	// Ours, from the end of the caller's speech: 700 and 1000 ms.
	if l := res.Metrics.Latency; l.N != 2 || l.Mean != ms(850) || l.P50 != ms(850) {
		t.Errorf("our latency %+v, want 700 and 1000 ms", l)
	}
	if g.UserTurn.N != 2 || g.UserTurn.Mean != ms(600) || g.UserTurn.P50 != ms(600) {
		t.Errorf("user turns %+v", g.UserTurn)
	}
	if g.AgentTurn.N != 3 || g.AgentTurn.Mean != ms(800) || g.AgentTurn.P50 != ms(800) {
		t.Errorf("agent turns %+v", g.AgentTurn)
	}
	if want := (voicetest.WordStats{Total: 3, Turns: 2, Mean: 1.5, Median: 1.5}); g.UserWords != want {
		t.Errorf("user words %+v, want %+v", g.UserWords, want)
	}
	if want := (voicetest.WordStats{Total: 6, Turns: 3, Mean: 2, Median: 2}); g.AgentWords != want {
		t.Errorf("agent words %+v, want %+v", g.AgentWords, want)
	}
	attrs := map[string]string{}
	for _, a := range res.Attrs() {
		attrs[a.Key] = a.Value
	}
	for k, v := range map[string]string{
		"voicetest.gym_ttfab_mean_ms": "433", "voicetest.gym_ttfab_p50_ms": "400",
		"voicetest.latency_p50_ms": "850", // ours, under its own key
		"voicetest.gym_user_words": "3", "voicetest.gym_agent_words": "6",
		"voicetest.gym_agent_words_p50": "2.0", "voicetest.gym_user_turn_p50_ms": "600",
	} {
		if attrs[k] != v {
			t.Errorf("attr %s = %q, want %q", k, attrs[k], v)
		}
	}
}
