package livekit_test

import (
	"encoding/json"
	"flag"
	"sync/atomic"
	"testing"
	"time"

	lkproto "github.com/livekit/protocol/livekit"
	lkagentpb "github.com/livekit/protocol/livekit/agent"
	"github.com/voicetest-go/voicetest/adapters/internal/adaptertest"
	"github.com/voicetest-go/voicetest/adapters/internal/conformance"
	"github.com/voicetest-go/voicetest/adapters/livekit"
	"github.com/voicetest-go/voicetest/internal/peers/lkagent"
	"github.com/voicetest-go/voicetest/internal/peers/lkserver"
	"github.com/voicetest-go/voicetest/voicetest"
	"google.golang.org/protobuf/proto"
)

// canaryKey is the API key name under which the suite's credential is
// the secret.
const canaryKey = "voicetest-canary"

// message returns m as a conformance frame for the agent double:
// session messages as binary frames (their bytes), anything else as its
// JSON.
func message(m lkagent.Message) conformance.Frame {
	if m.Session != nil {
		return conformance.Frame{Data: m.Session, Binary: true}
	}
	b, err := json.Marshal(m)
	if err != nil {
		panic(err)
	}
	return conformance.Frame{Data: b}
}

// sessionMessage returns an AgentSessionMessage, marshalled.
func sessionMessage(m *lkagentpb.AgentSessionMessage) []byte {
	b, err := proto.Marshal(m)
	if err != nil {
		panic(err)
	}
	return b
}

// audioOutput returns a session message of agent audio: n samples of
// PCM16 at rate, claiming samples samples.
func audioOutput(data []byte, rate, samples uint32) []byte {
	return sessionMessage(&lkagentpb.AgentSessionMessage{Message: &lkagentpb.AgentSessionMessage_AudioOutput{AudioOutput: &lkagentpb.AgentSessionMessage_ConsoleIO_AudioFrame{
		Data: data, SampleRate: rate, NumChannels: 1, SamplesPerChannel: samples,
	}}})
}

// transcription returns an lk.transcription text stream of the agent's.
func transcription(text string, attrs map[string]string) lkagent.Message {
	return lkagent.Message{Text: &lkagent.TextStream{Topic: livekit.TopicTranscription, Attributes: attrs, Text: text}}
}

// packet returns a data packet message.
func packet(p *lkproto.DataPacket) lkagent.Message {
	b, err := proto.Marshal(p)
	if err != nil {
		panic(err)
	}
	return lkagent.Message{Packet: b}
}

// TestConformance runs the wire adapters' shared suite against the Go
// agent double, through a real livekit-server on loopback. It runs in
// parallel with the package's other conversations, each in rooms of its
// own on the shared server (its own checks run one after another, as
// conformance.Run runs them). Its leak checks (adaptertest.CheckNoLeak)
// look at every goroutine in the adapter's code, so the other
// conversations leave theirs out (beside, adaptertest.Exempt). Each check
// holds the package's gate shared (see subject), and its heap check holds
// it alone: it measures the whole process's heap, so no other
// conversation runs meanwhile. That check runs first (MemoryFirst), and
// the other conversations start once it is over (heapChecked).
func TestConformance(t *testing.T) {
	t.Parallel()
	t.Cleanup(heapChecked.open) // when the heap check did not run
	t.Cleanup(dialing.open)     // when the Dial check did not run
	conformance.Run(t, subject(true))
}

// FuzzAgentMessage fuzzes what the adapter decodes of the agent's
// messages through the room with the shared fuzz target: a binary input
// is sent as an agent session message (protobuf), a text input as the
// double's message when it is one (a text stream, say), and otherwise as
// the raw bytes of a data packet. The inputs share the package's
// livekit-server (a fuzzing worker starts its own).
//
// Run as a test (no -fuzz), the seed inputs run side by side: each is a
// call through its own room, mostly waiting on the network, and the
// testing package runs the fuzz tests after every test, one input after
// another (0.5 s each, 3.8 s in all, alone on the package's path). An
// input calls T.Parallel, which the testing package honours for the seed
// corpus and ignores while fuzzing, where each input runs alone and
// keeps its own leak check. Side by side, each input's leak check would
// see the others' goroutines, so their goroutines are left out of it
// (adaptertest.Exempt) and found by the package's leak check at its end
// (leakcheck.Main); fuzzing tells them apart again (see fuzzing).
//
// At most seedsInFlight inputs run at once: each is two participants'
// joins, four peer connections' DTLS and SCTP handshakes, on the shared
// server, and eight at once on a loaded machine (load ~40) left the
// double's data channel, or the server, too slow for the sentinel to
// arrive within conformance's 5 s (lk9, base run 1: joins took 3.7 s, the
// server measured RTTs up to 3.4 s).
func FuzzAgentMessage(f *testing.F) {
	s := subject(false)
	start := s.Start
	inFlight := make(chan struct{}, seedsInFlight)
	s.Start = func(t *testing.T, p conformance.Peer) voicetest.Agent {
		if !fuzzing() {
			t.Parallel()
			adaptertest.Exempt(t)
			select {
			case inFlight <- struct{}{}:
			case <-t.Context().Done():
				t.Fatal("the test ended while its seed input waited for its turn")
			}
			t.Cleanup(func() { <-inFlight }) // after the input's own cleanups: its room is gone
		}
		if len(p.Send) > 0 && !p.Send[0].Binary {
			var m lkagent.Message
			if json.Unmarshal(p.Send[0].Data, &m) != nil {
				b, _ := json.Marshal(lkagent.Message{Packet: p.Send[0].Data})
				p.Send = append([]conformance.Frame{{Data: b}}, p.Send[1:]...)
			}
		}
		return start(t, p)
	}
	conformance.Fuzz(f, s)
}

// seedsInFlight bounds the seed inputs of FuzzAgentMessage that run at
// once.
const seedsInFlight = 4

// fuzzing reports whether the binary fuzzes (-test.fuzz) or is a fuzz
// worker: read from the test flags, which TestMain has parsed.
func fuzzing() bool {
	f, w := flag.Lookup("test.fuzz"), flag.Lookup("test.fuzzworker")
	return (f != nil && f.Value.String() != "") || (w != nil && w.Value.String() == "true")
}

// subject describes the adapter, the server and the agent double to the
// suite. With inLane, as TestConformance runs it, each check's
// conversation holds the checks' lane (see checks); the fuzz inputs,
// which run after every test, do not.
func subject(inLane bool) conformance.Subject {
	var started atomic.Int32 // peers started before this one
	return conformance.Subject{
		Adapter:   "livekit",
		Handshake: true, // the agent joins and subscribes
		ChecksKey: true, // the server refuses a token signed with a wrong secret
		Start: func(t *testing.T, p conformance.Peer) voicetest.Agent {
			keys := map[string]string{}
			key, secret := lkserver.DefaultKey, lkserver.DefaultSecret
			if p.Key != "" {
				key, secret = canaryKey, p.Key
				keys[canaryKey] = p.Key
				if p.PeerKey != "" {
					keys[canaryKey] = p.PeerKey
				}
			}
			// The checks of credentials start a server that knows their
			// key; the others share the package's.
			var srv *lkserver.Server
			if len(keys) > 0 {
				srv = lkserver.New(t, lkserver.Config{Keys: keys})
			} else {
				srv = server.Get(t)
			}
			name := agentName("conformance")
			cfg := lkagent.Config{URL: srv.URL, APIKey: lkserver.DefaultKey, APISecret: lkserver.DefaultSecret, AgentName: name, HangUpAfter: p.HangUpAfter}
			// Short replies (about 0.4 s of speech each, against 2 s for
			// the double's default "Reply {n}: {heard}"): the suite checks
			// that each turn is answered with audio and its transcript,
			// not what is said, and every second of a reply is a second of
			// real time.
			cfg.Turns = []lkagent.Turn{{Reply: "Sure."}, {Reply: "Okay."}, {Reply: "Fine."}}
			if p.LongReply {
				cfg.Turns[0] = lkagent.Turn{Reply: "Once upon a time there was a voice agent that talked for a very long time."}
			}
			switch p.Stall {
			case conformance.StallHandshake:
				cfg.Fault = lkagent.NeverJoin
			case conformance.StallAnswer:
				cfg.Fault = lkagent.Mute
			}
			for _, f := range p.Send {
				var m lkagent.Message
				if f.Binary {
					m.Session = f.Data
				} else if err := json.Unmarshal(f.Data, &m); err != nil {
					t.Fatalf("frame %q is not an lkagent.Message: %v", f.Data, err)
				}
				cfg.Send = append(cfg.Send, m)
			}
			if p.MeasuresHeap {
				// BoundedMemory/Queue: the suite measures the whole
				// process's heap around it, so no other conversation
				// runs meanwhile. It runs first (MemoryFirst); the
				// others wait for its end (heapChecked).
				if n := started.Load(); n > 0 {
					t.Errorf("the heap check's peer came after %d others: the conversations waiting for it (heapChecked) waited for the suite's other checks too; want it first (conformance.Subject.MemoryFirst)", n)
				}
				alone.exclusive(t)
				t.Cleanup(heapChecked.open)
			} else {
				alone.share(t)
				switch {
				case !inLane:
				case p.Stall == conformance.StallDial:
					// No conversation: the agent dials a black hole.
					dialing.open()
				default:
					checks.share(t)
				}
			}
			if len(cfg.Send) > 50 {
				// A flood, paced only so that it leaves the double's own
				// data channel (in this process, unbounded, counted by the
				// suite's heap measurement) about as fast as the server
				// takes it: the adapter still gets far more than it may
				// queue while nobody reads.
				cfg.SendGap = 5 * time.Millisecond
			}
			started.Add(1)
			w := lkagent.New(t, cfg)
			t.Cleanup(func() {
				if t.Failed() {
					// What the double heard and why it did not answer
					// (a line it could not transcribe, say).
					t.Logf("the agent double's jobs: %+v", w.Jobs())
				}
			})
			if len(cfg.Send) > 50 {
				// The flood's backlog in the double's data channels is in
				// this process's heap: bounded, whatever the CPU left to
				// send it (lkagent.MaxBuffered).
				t.Cleanup(func() {
					for _, j := range w.Jobs() {
						if j.PeakBuffered > lkagent.MaxBuffered+64<<10 {
							t.Errorf("the agent double held %d KiB of its flood unsent, above lkagent.MaxBuffered (%d KiB) and a message", j.PeakBuffered>>10, lkagent.MaxBuffered>>10)
						}
					}
				})
			}
			a := livekit.New(srv.URL, key, secret, name)
			if p.Stall == conformance.StallDial {
				a.URL = adaptertest.BlackHole(t)
			}
			a.DialTimeout, a.MaxQueueBytes, a.MaxFrameBytes = p.DialTimeout, p.MaxQueueBytes, p.MaxFrameBytes
			a.AgentTimeout = p.DialTimeout
			return a
		},
		Audio: func(n int) conformance.Frame {
			return message(lkagent.Message{Session: audioOutput(make([]byte, 2*n), 48000, uint32(n))})
		},
		Echo: func(s string) conformance.Frame {
			// One segment per text: a final segment repeated under its id is
			// the same line again, which the adapter reports once.
			return message(transcription(s, map[string]string{"lk.transcription_final": "true", "lk.segment_id": "SG_echo_" + s}))
		},
		Malformed: []conformance.Frame{
			{Data: []byte{0xff, 0xff, 0xff}, Binary: true},
			{Data: audioOutput([]byte{1, 2, 3, 4}, 1, 2), Binary: true},
			{Data: audioOutput([]byte{1, 2, 3}, 48000, 0), Binary: true},
			message(transcription("maybe final", map[string]string{"lk.transcription_final": "maybe"})),
			message(lkagent.Message{Text: &lkagent.TextStream{Topic: livekit.TopicTranscription, Raw: []byte("bad \xff\xfe text"),
				Attributes: map[string]string{"lk.transcription_final": "true", "lk.segment_id": "SG_bad"}}}),
			message(packet(&lkproto.DataPacket{Value: &lkproto.DataPacket_SipDtmf{SipDtmf: &lkproto.SipDTMF{Code: 99, Digit: "x"}}})),
		},
		Pacing:      voicetest.PaceFast,
		MemoryFirst: true,
		// The SDK reads each text stream (the two malformed transcriptions,
		// the sentinel's) on a goroutine of its own (server-sdk-go v2.19.0,
		// room.go, OnStreamHeader: go streamHandlerCallback(...)), so their
		// errors and the sentinel reach the adapter in either order: in CI
		// the sentinel came first and MalformedFrames counted 4 errors of 6.
		// Likewise BoundedMemory/Frame's sentinel, a small text stream, may
		// be read to its end before the oversized session stream's reader
		// passes MaxFrameBytes (lk9's base run 2).
		Unordered: true,
	}
}
