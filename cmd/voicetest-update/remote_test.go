package main

import (
	"crypto/sha256"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// remoteTest is the test file of the sample package "remote": a voice
// agent served over a WebSocket of raw PCM16 (a test double written for
// this test) that streams its speech in bursts with seeded random pauses
// and random silent padding, reached through wscodec like a deployed
// agent. TestRemote/STT talks to it live with Config.AgentSTT
// (pocketsphinx behind the cache); TestRemote/Deployed talks to it through a
// cassette, and with SAMPLE_DEPLOYED_DOWN set runs with no agent at all.
// Each subtest talks to it once per seed of SAMPLE_SEED (a comma-separated
// list), each seed being another way for the same speech to arrive.
//
// The lines are short: what is checked is that a conversation recorded on
// the real clock replays, and that other arrivals of the same speech make
// the same cache keys, not how long it lasts; the recording is the one
// part of these tests that waits on the real clock. There the agent is
// fast-paced and the scenario runs PaceFast (see burstyAgent and config):
// 5.4 s of real time at load 11-19 where the same conversation at
// PaceRealTime with the agent's full pauses took 9.8 (it lasts 8 s, and
// took 15 with the longer lines it had before that); what is left is
// mostly the three tail silences and the engines. The agent's lines are
// known, so
// pocketsphinx decodes them with a grammar of those lines
// (speech.WithPhrases), as a suite that knows what its agent says would:
// about 0.3 s of CPU a turn instead of 1.5 with the full language model,
// mostly that model's loading. The engines are built by their
// constructors with the test's cache (what TTSForTest and STTForTest do
// by name), so the test binary does not link the OpenAI engines that
// picking by name can return: a third less to link (31 MB of text instead
// of 48), about a tenth less CPU for that link.
//
// With SAMPLE_CLOCK=real the agent listens on TCP on 127.0.0.1 and the
// calls run on the real clock, PaceFast. Otherwise the same agent, the
// same WebSocket frames and its full pauses run in a testing/synctest bubble
// over in-memory connections (wscodec's NetDial and a net.Pipe), so a
// call takes the time its engines take (flite, pocketsphinx) rather than
// the 8 s it lasts.
const remoteTest = `package remote

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/coder/websocket"
	"github.com/voicetest-go/voicetest/adapters/wscodec"
	"github.com/voicetest-go/voicetest/pcm"
	"github.com/voicetest-go/voicetest/voicetest"
	"github.com/voicetest-go/voicetest/voicetest/cache"
	"github.com/voicetest-go/voicetest/voicetest/cassette"
	"github.com/voicetest-go/voicetest/voicetest/speech"
)

const rate = 16000

var replies = []string{
	"Welcome.",
	"What time?",
	"Goodbye.",
}

// realClock reports whether the calls run on the real clock, over TCP.
func realClock() bool { return os.Getenv("SAMPLE_CLOCK") == "real" }

// seeds returns the seeds of SAMPLE_SEED, a comma-separated list.
func seeds(t *testing.T) []uint64 {
	var out []uint64
	for _, s := range strings.Split(os.Getenv("SAMPLE_SEED"), ",") {
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("SAMPLE_SEED: %v", err)
		}
		out = append(out, n)
	}
	return out
}

// testCache returns shared, the cache TestRemote opened, if there is one
// (on the real clock), else a cache of t's own (in a bubble: a bubble's
// channels are its own, so there each subtest keeps its own cache, and
// every turn replays).
func testCache(t *testing.T, shared *cache.Cache) *cache.Cache {
	if shared != nil {
		return shared
	}
	return cache.ForTest(t)
}

// agentSTT returns the STT of the agent's turns: pocketsphinx behind the
// cache, with the agent's lines as its grammar.
func agentSTT(t *testing.T, shared *cache.Cache) voicetest.STT {
	return speech.Pocketsphinx(speech.WithCache(testCache(t, shared)), speech.WithPhrases(replies...))
}

// fliteTTS returns flite behind the cache, for the user's lines and the
// agent's.
func fliteTTS(t *testing.T, shared *cache.Cache) voicetest.TTS {
	return speech.Flite(speech.WithCache(testCache(t, shared)), speech.WithVoice("slt"))
}

// onClock runs f on the real clock (SAMPLE_CLOCK=real) or in a synctest
// bubble, on virtual time.
func onClock(t *testing.T, f func(t *testing.T)) {
	if realClock() {
		f(t)
		return
	}
	synctest.Test(t, f)
}

// pipeListener is a net.Listener whose connections are net.Pipes made by
// its dial (the signature of wscodec's NetDial).
type pipeListener struct {
	conns chan net.Conn
	done  chan struct{}
	once  sync.Once
}

func (l *pipeListener) dial(ctx context.Context, _, _ string) (net.Conn, error) {
	client, server := net.Pipe()
	select {
	case l.conns <- server:
		return client, nil
	case <-l.done:
		return nil, errors.New("pipe listener closed")
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (l *pipeListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

func (l *pipeListener) Close() error {
	l.once.Do(func() { close(l.done) })
	return nil
}

func (l *pipeListener) Addr() net.Addr { return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 80} }

// dialer opens the connection a WebSocket runs over (wscodec's NetDial).
type dialer = func(ctx context.Context, network, addr string) (net.Conn, error)

// remoteAgent returns the wscodec agent that reaches the bursty agent at
// url (with dial, if not nil, instead of TCP).
func remoteAgent(url string, dial dialer) *wscodec.Agent {
	a := wscodec.New(url, wscodec.RawPCM(rate))
	a.NetDial = dial
	return a
}

// burstyAgent serves an agent that says its replies (flite, through the
// test's cache) in bursts of one to eight 20 ms frames with pauses of up
// to 150 ms between them, after and before up to 140 ms of silent
// frames, all drawn from seed: each seed is another way for the same
// speech to arrive. On the real clock its pauses are a tenth as long (up
// to 15 ms; the same draws): there it is a fast-paced peer, whose speech
// arrives in bursts at the real network's and scheduler's times, in
// about a tenth of the time it lasts. It answers each utterance of the
// caller once 400 ms of silence follow it (20 frames, however fast they
// come). It returns the agent's URL and, off the real clock, the dialer
// of its in-memory connections.
func burstyAgent(t *testing.T, tts voicetest.TTS, seed uint64) (string, dialer) {
	// The replies are synthesised at once: on the real clock each is a
	// flite run the conversation waits for (three in a row took 0.5-2 s
	// before the first turn at load 15-20; at once, about as long as the
	// longest).
	said := make([][]int16, len(replies))
	errs := make([]error, len(replies))
	var wg sync.WaitGroup
	for i, r := range replies {
		wg.Go(func() {
			c, err := tts.Synthesize(t.Context(), voicetest.SpeechRequest{Text: r, Rate: rate})
			said[i], errs[i] = c.Samples, err
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	const frame = rate / 50
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ws, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		defer ws.CloseNow()
		ctx := r.Context()
		rng := rand.New(rand.NewPCG(seed, 1))
		say := func(s []int16) error {
			out := make([]int16, frame*rng.IntN(8))
			out = append(out, s...)
			out = append(out, make([]int16, frame*rng.IntN(8))...)
			for len(out) > 0 {
				for range 1 + rng.IntN(8) {
					n := min(frame, len(out))
					if n == 0 {
						break
					}
					if err := ws.Write(ctx, websocket.MessageBinary, pcm.EncodePCM16(nil, out[:n])); err != nil {
						return err
					}
					out = out[n:]
				}
				pause := time.Duration(rng.IntN(150)) * time.Millisecond
				if realClock() {
					pause /= 10
				}
				time.Sleep(pause)
			}
			return nil
		}
		if say(said[0]) != nil {
			return
		}
		voiced, quiet, turn := false, 0, 1
		for {
			_, data, err := ws.Read(ctx)
			if err != nil {
				return
			}
			s, err := pcm.DecodePCM16(nil, data)
			if err != nil {
				return
			}
			var sum float64
			for _, v := range s {
				sum += float64(v) * float64(v)
			}
			if len(s) > 0 && math.Sqrt(sum/float64(len(s))) > 300 {
				voiced, quiet = true, 0
			} else if voiced {
				quiet++
			}
			if voiced && quiet >= 20 && turn < len(said) {
				voiced, quiet = false, 0
				if say(said[turn]) != nil {
					return
				}
				turn++
			}
		}
	})
	if realClock() {
		srv := httptest.NewServer(h)
		t.Cleanup(srv.Close)
		return "ws" + strings.TrimPrefix(srv.URL, "http"), nil
	}
	l := &pipeListener{conns: make(chan net.Conn), done: make(chan struct{})}
	hs := &http.Server{Handler: h}
	served := make(chan struct{})
	go func() {
		defer close(served)
		_ = hs.Serve(l)
	}()
	t.Cleanup(func() {
		_ = hs.Close()
		<-served
	})
	return "ws://127.0.0.1/agent", l.dial
}

// config is the scenario of both subtests. On the real clock it runs
// PaceFast: the user's audio goes as fast as the agent takes it, and an
// agent turn ends TailSilence after the agent's last audio, without
// waiting for that audio to play out. With the fast-paced agent, the
// conversation on the real clock waits mostly on the three tail silences
// and the engines, not on the 8 s it lasts. The frames sent
// are the same under either pacing, so the cassette recorded on the real
// clock under PaceFast replays on virtual time under PaceRealTime.
func config(t *testing.T, shared *cache.Cache, agent voicetest.Agent, tts voicetest.TTS) voicetest.Config {
	pacing := voicetest.PaceRealTime
	if realClock() {
		pacing = voicetest.PaceFast
	}
	return voicetest.Config{
		Agent:     agent,
		Pacing:    pacing,
		Rate:      rate,
		UserVoice: tts,
		AgentSTT:  agentSTT(t, shared),
		Golden:    voicetest.GoldenOptions{TimeTolerance: time.Second},
		Timeouts:  voicetest.Timeouts{FirstChunk: 10 * time.Second},
		Script: []voicetest.Step{
			voicetest.AgentTurn(),
			voicetest.UserSays("Two please."),
			voicetest.Silence(500 * time.Millisecond),
			voicetest.AgentTurn(),
			voicetest.UserSays("At seven."),
			voicetest.Silence(500 * time.Millisecond),
			voicetest.AgentTurn(),
		},
	}
}

func check(t *testing.T, seed uint64, res *voicetest.Result) {
	t.Helper()
	if !res.Success {
		t.Fatalf("seed %d: scenario failed: %v", seed, res.Err)
	}
	var agent int
	for _, m := range res.Transcript {
		if m.Role == voicetest.RoleAgent {
			agent++
			if m.Text == "" {
				t.Errorf("seed %d: agent turn %d was not transcribed", seed, m.Turn)
			}
		}
	}
	if agent != 3 {
		t.Errorf("seed %d: %d agent messages, want 3:\n%s", seed, agent, res.TranscriptText())
	}
	t.Logf("%s, seed %d: %d agent turns transcribed", t.Name(), seed, agent)
}

// TestRemote talks to the agent in two parallel subtests: STT live,
// transcribing its replies, and Deployed through a cassette. On the real
// clock both record the same three turns at the same time, and a cache
// produces a key once only among the callers of that one cache (single
// flight), so there they share the cache this test opens: each turn is
// transcribed, and each line synthesised, once, not twice.
func TestRemote(t *testing.T) {
	var shared *cache.Cache
	if realClock() {
		shared = cache.ForTest(t) // closed once both subtests are done
	}
	t.Run("STT", func(t *testing.T) {
		t.Parallel()
		for _, seed := range seeds(t) {
			onClock(t, func(t *testing.T) {
				tts := fliteTTS(t, shared)
				check(t, seed, voicetest.Scenario(t, config(t, shared, remoteAgent(burstyAgent(t, tts, seed)), tts)))
			})
		}
	})
	t.Run("Deployed", func(t *testing.T) {
		t.Parallel()
		for _, seed := range seeds(t) {
			onClock(t, func(t *testing.T) {
				tts := fliteTTS(t, shared)
				url, dial := "ws://127.0.0.1:9/nothing-listens-here", dialer(nil)
				if os.Getenv("SAMPLE_DEPLOYED_DOWN") == "" {
					url, dial = burstyAgent(t, tts, seed)
				}
				var opts []cassette.Option
				if name := os.Getenv("SAMPLE_CASSETTE"); name != "" {
					opts = append(opts, cassette.WithName(name))
				}
				a := cassette.New(t, remoteAgent(url, dial), opts...)
				check(t, seed, voicetest.Scenario(t, config(t, shared, a, tts)))
			})
		}
	})
}
`

// skipWithout skips t when program, which the remote sample's engines run
// (speech.Flite, speech.Pocketsphinx), is not on PATH. It looks the
// program up itself rather than with speech.SkipIfNotInstalled: importing
// voicetest/speech made this package's test binary link speech and what
// it links (30.8 MB instead of 7.8; about 3 s more CPU for every link of
// it), for two lookups. The sample's own tests still fail, naming the
// Debian package, on anything else missing (pocketsphinx's model).
func skipWithout(t *testing.T, program, debianPackage string) {
	t.Helper()
	if _, err := exec.LookPath(program); err != nil {
		t.Skipf("%s not found (install the Debian package %s): %v", program, debianPackage, err)
	}
}

// runTestBinary runs the test binary of the sample's package pkg, which
// a go test run of it built in the -o directory of newSample, in the
// package's directory, with s's environment and env's variables set, and
// returns its output. It fails t unless the binary passes.
func (s *sample) runTestBinary(t *testing.T, pkg string, env map[string]string, args ...string) string {
	t.Helper()
	exe := filepath.Join(s.bin, pkg+".test")
	cmd := exec.CommandContext(t.Context(), exe, append([]string{"-test.timeout=10m"}, args...)...)
	cmd.Dir = filepath.Join(s.dir, pkg)
	vars := maps.Clone(s.env)
	for _, name := range []string{"VOICETEST_CACHE", "VOICETEST_RECORD", "VOICETEST_CACHE_USAGE", "GOLDIE_UPDATE"} {
		vars[name] = ""
	}
	maps.Copy(vars, env)
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if _, set := vars[name]; !set {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	for name, value := range vars {
		cmd.Env = append(cmd.Env, name+"="+value)
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", exe, strings.Join(args, " "), err, out)
	}
	return string(out)
}

// changedFiles returns the paths added, changed or removed between two
// hashFiles, sorted.
func changedFiles(before, after map[string][sha256.Size]byte) []string {
	var out []string
	for p, sum := range after {
		if old, ok := before[p]; !ok || old != sum {
			out = append(out, p)
		}
	}
	for p := range before {
		if _, ok := after[p]; !ok {
			out = append(out, p)
		}
	}
	slices.Sort(out)
	return out
}

// hashFiles returns the SHA-256 of every file under dir, by path.
func hashFiles(t *testing.T, dir string) map[string][sha256.Size]byte {
	t.Helper()
	sums := map[string][sha256.Size]byte{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		sums[path] = sha256.Sum256(b)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return sums
}

func files(t *testing.T, pattern string) []string {
	t.Helper()
	m, err := filepath.Glob(pattern)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestRemoteAgentCacheAndCassettes runs voicetest-update on a remote
// agent whose speech arrives in bursts at random times: recorded once,
// five more conversations in record mode (each with other bursts and
// pauses) add no cache entry, -check then passes (with yet others), and
// the cassette of TestRemote/Deployed is recorded, replayed with the agent down,
// checked and pruned like cache entries. The first run records on the
// real clock, over TCP; the others run on virtual time over in-memory
// connections (see remoteTest), so they also show that what was recorded
// on one clock replays on the other.
//
// voicetest-update runs four times here, and the sample's test binary once
// on its own (the five conversations that show the keys independent of
// the arrival; nothing of voicetest-update is checked there). Where two
// checks need the same state they share a run, each with assertions of
// its own on its output:
// the replay that passes with the agent down is the run whose -check
// fails on an unused cassette planted beside it (a failure only reported
// for a package whose tests all ran and passed), and the renamed
// cassette's recording is the run that prunes both the old cassette and
// the planted one.
func TestRemoteAgentCacheAndCassettes(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs a sample module's tests")
	}
	skipWithout(t, "flite", "flite")
	skipWithout(t, "pocketsphinx_continuous", "pocketsphinx")
	// The model speech.Pocketsphinx decodes with by default.
	if _, err := os.Stat("/usr/share/pocketsphinx/model/en-us"); err != nil {
		t.Skipf("pocketsphinx's US English model not found (install the Debian package pocketsphinx-en-us): %v", err)
	}
	s := newSample(t)
	dir := s.dir
	write(t, filepath.Join(dir, "remote", "remote_test.go"), remoteTest)
	for _, v := range []string{"SAMPLE_SEED", "SAMPLE_DEPLOYED_DOWN", "SAMPLE_CASSETTE", "SAMPLE_CLOCK"} {
		s.setenv(v, "")
	}
	pkg := filepath.Join(dir, "remote", "testdata", "voicetest")
	stt := filepath.Join(pkg, "cache", "stt", "*.json")

	// Recorded on the real clock, with the real network's timing.
	// The sample's processes get the runtime's default GOMAXPROCS for this
	// run (newSample sets 1): on a loaded machine a process's share of the
	// CPU grows with its runnable threads, and a conversation on the real
	// clock that gets too little of it arrives late and garbled.
	// It starts before the test goes parallel: parallel tests resume only
	// once the sequential ones are done, and then take turns for
	// -test.parallel's slots (two on two cores, three parallel tests);
	// this run (building the sample, the real-clock conversation) is the
	// longest, and the rest of this test follows it.
	s.setenv("SAMPLE_SEED", "1")
	s.setenv("SAMPLE_CLOCK", "real")
	s.setenv("GOMAXPROCS", "")
	recorded := s.start(t, exitOK, "./remote")
	s.setenv("SAMPLE_CLOCK", "")
	s.setenv("GOMAXPROCS", "1")
	t.Parallel()
	out := recorded()
	mustContain(t, out, "ok   TestRemote/STT", "ok   TestRemote/Deployed", "ok   TestRemote (", "voicetest-update: ok")
	entries := files(t, stt)
	if len(entries) < 6 {
		t.Fatalf("%d STT entries and bodies recorded, want at least one per agent turn (3)\n%s", len(entries), out)
	}
	cassetteFiles := files(t, filepath.Join(pkg, "cassettes", "TestRemote", "Deployed", "*"))
	if len(cassetteFiles) != 4 {
		t.Fatalf("cassette files %v, want an index and 3 bodies\n%s", cassetteFiles, out)
	}
	mustContain(t, out, "cassette files: 4 added, 0 changed, 0 removed")

	// Five more conversations per test in record mode, each with the
	// agent's speech arriving in other bursts after other pauses: no new
	// entry, no entry or cassette changed. They run in one process (each
	// in a bubble of its own, see remoteTest), the sample's test binary
	// that the run above built (newSample's -o), in the environment
	// voicetest-update gives it in record mode: what they show is the
	// cache's and the cassette's (a seed whose keys changed would add its
	// entries), not voicetest-update's, and the go command's own work for
	// a run (about half a second of CPU, see TestEndToEnd) would be most
	// of this one. They also rewrite the goldens on virtual time, for the
	// -check runs below. (That no entry recorded on the real clock goes
	// unused on virtual time is the -check below.)
	seeds := []int{2, 3, 4, 5, 6}
	var list []string
	for _, seed := range seeds {
		list = append(list, strconv.Itoa(seed))
	}
	recordedFiles := hashFiles(t, pkg)
	out = s.runTestBinary(t, "remote", map[string]string{"SAMPLE_SEED": strings.Join(list, ","), "VOICETEST_CACHE": "record", "GOLDIE_UPDATE": "1"}, "-test.v")
	for _, seed := range seeds {
		for _, test := range []string{"TestRemote/STT", "TestRemote/Deployed"} {
			mustContain(t, out, test+", seed "+strconv.Itoa(seed)+": 3 agent turns transcribed")
		}
	}
	if changed := changedFiles(recordedFiles, hashFiles(t, pkg)); len(changed) > 0 {
		t.Errorf("seeds %v added, changed or removed cache or cassette files (their keys changed): %v\n%s", seeds, changed, out)
	}

	// A cassette no test uses (a copy of TestRemote/Deployed's under another
	// test's name).
	stale := filepath.Join(pkg, "cassettes", "TestGone")
	if err := os.MkdirAll(stale, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range cassetteFiles {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		write(t, filepath.Join(stale, filepath.Base(f)), string(b))
	}
	goneIndex := filepath.Join("remote", "testdata", "voicetest", "cassettes", "TestGone", "cassette.json")

	// CI: replay only, with yet other bursts, and TestRemote/Deployed with no
	// agent to reach: both subtests pass and nothing changes. The unused
	// cassette fails the check.
	s.setenv("SAMPLE_SEED", "7")
	s.setenv("SAMPLE_DEPLOYED_DOWN", "1")
	// -v shows each test's log.
	out = s.update(t, exitFail, "-check", "-v", "./remote")
	mustContain(t, out, "cache replay, goldens compared", "  ok   TestRemote/STT", "  ok   TestRemote/Deployed", "ok   example.com/sample/remote",
		"cache files: 0 added, 0 changed, 0 removed", "cassette files: 0 added, 0 changed, 0 removed")
	mustContain(t, out, "TestRemote/STT, seed 7: 3 agent turns transcribed", "TestRemote/Deployed, seed 7: 3 agent turns transcribed")
	mustContain(t, out, "check: 4 cassette file(s) unused by any test", "  ? "+goneIndex, "voicetest-update: FAIL")
	// Every entry recorded on the real clock is used on virtual time.
	if strings.Contains(out, "cache file(s) unused") {
		t.Errorf("-check on virtual time found cache entries recorded on the real clock unused:\n%s", out)
	}

	// Renaming the cassette records the new one (with the agent up) and
	// prunes the old, and the unused one with it.
	s.setenv("SAMPLE_DEPLOYED_DOWN", "")
	s.setenv("SAMPLE_CASSETTE", "booking")
	out = s.update(t, exitOK, "./remote")
	mustContain(t, out, "cassette files: 4 added, 0 changed, 0 removed", "pruned 8 unused cassette file(s):",
		"  - "+filepath.Join("remote", "testdata", "voicetest", "cassettes", "TestRemote", "Deployed", "cassette.json"), "voicetest-update: ok")
	mustContain(t, out, "  - "+goneIndex)
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("the pruned cassette's directory is still there: %v", err)
	}

	// CI again: the new cassette replays with the agent down, and the
	// check passes.
	s.setenv("SAMPLE_DEPLOYED_DOWN", "1")
	out = s.update(t, exitOK, "-check", "./remote")
	mustContain(t, out, "cache replay, goldens compared", "cache files: 0 added, 0 changed, 0 removed", "cassette files: 0 added, 0 changed, 0 removed", "voicetest-update: ok")
}
