package sdkcheck_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"testing"
	"time"
)

// browser is the headless Chromium the package's browser tests share (see
// sharedChromium): each test opens its page in a browser context of its
// own. It is the package's one piece of shared state, started by the
// first test that asks for it and stopped by TestMain.
var browser sharedChromium

// TestMain stops the shared Chromium after the tests.
func TestMain(m *testing.M) {
	code := m.Run()
	browser.Close()
	os.Exit(code)
}

// chromiumFlags are the command-line flags of the shared Chromium: headless,
// nothing fetched from the network, media autoplay and fake media devices
// allowed without a prompt.
var chromiumFlags = []string{
	"--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run", "--no-default-browser-check",
	"--disable-background-networking", "--disable-component-update", "--disable-sync", "--disable-extensions",
	"--disable-features=Translate,MediaRouter", "--autoplay-policy=no-user-gesture-required",
	// Pages in other browser contexts than the first window are still
	// foreground pages: no throttled timers, no lowered priority.
	"--disable-background-timer-throttling", "--disable-renderer-backgrounding", "--disable-backgrounding-occluded-windows",
	"--use-fake-ui-for-media-stream", "--use-fake-device-for-media-stream",
	"--remote-debugging-pipe",
}

// maxCDPMessage bounds one DevTools message Chromium sends: the commands
// used here answer in a few hundred bytes, and events are dropped.
const maxCDPMessage = 4 << 20

// sharedChromium is one headless Chromium process that the browser tests
// share, driven over the DevTools protocol on a pipe
// (--remote-debugging-pipe: commands on its file descriptor 3, answers on
// 4, each a JSON object ended by a NUL byte). Starting Chromium costs
// seconds of wall time and about a second of CPU, more on a loaded
// machine; each test opens its page in a browser context of its own
// (Target.createBrowserContext: its own cookies, storage and renderer
// process), which it disposes of when it ends.
type sharedChromium struct {
	once    sync.Once
	err     error // from starting Chromium
	cmd     *exec.Cmd
	dataDir string // its --user-data-dir
	exited  chan struct{}
	waitErr error         // set before exited closes
	stderr  *cappedBuffer // Chromium's standard error, its last 64 KiB

	mu      sync.Mutex // guards w, nextID, pending
	w       io.WriteCloser
	nextID  int64
	pending map[int64]chan cdpAnswer
}

// cdpAnswer is Chromium's answer to one command.
type cdpAnswer struct {
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// get returns the shared Chromium, started on the first call at path. The
// start does not wait for Chromium to be ready: the first command does,
// so a test can prepare its page's server while Chromium starts.
func (b *sharedChromium) get(t *testing.T, path string) *sharedChromium {
	t.Helper()
	b.once.Do(func() { b.err = b.start(path) })
	if b.err != nil {
		t.Fatalf("starting the shared chromium: %v", b.err)
	}
	return b
}

func (b *sharedChromium) start(path string) error {
	dir, err := os.MkdirTemp("", "sdkcheck-chromium-")
	if err != nil {
		return err
	}
	// Chromium reads commands from its descriptor 3 and writes answers to 4.
	cmdR, cmdW, err := os.Pipe()
	if err != nil {
		os.RemoveAll(dir)
		return err
	}
	ansR, ansW, err := os.Pipe()
	if err != nil {
		cmdR.Close()
		cmdW.Close()
		os.RemoveAll(dir)
		return err
	}
	// A context that never ends: ownGroup's Cancel, which Close calls,
	// needs a command made with one.
	cmd := exec.CommandContext(context.Background(), path, append(chromiumFlags, "--user-data-dir="+dir, "about:blank")...)
	cmd.ExtraFiles = []*os.File{cmdR, ansW}
	b.stderr = &cappedBuffer{max: 64 << 10}
	cmd.Stderr = b.stderr
	ownGroup(cmd)
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Start(); err != nil {
		for _, f := range []*os.File{cmdR, cmdW, ansR, ansW} {
			f.Close()
		}
		os.RemoveAll(dir)
		return fmt.Errorf("starting %s: %w", path, err)
	}
	cmdR.Close() // Chromium's ends
	ansW.Close()
	b.cmd, b.dataDir, b.w = cmd, dir, cmdW
	b.pending = map[int64]chan cdpAnswer{}
	b.exited = make(chan struct{})
	go func() {
		b.waitErr = cmd.Wait()
		close(b.exited)
	}()
	go b.readAnswers(ansR)
	return nil
}

// readAnswers hands each answer Chromium writes to the command waiting
// for it, until the pipe closes; it drops events.
func (b *sharedChromium) readAnswers(r io.ReadCloser) {
	defer r.Close()
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxCDPMessage)
	sc.Split(func(data []byte, atEOF bool) (int, []byte, error) {
		if i := bytes.IndexByte(data, 0); i >= 0 {
			return i + 1, data[:i], nil
		}
		if atEOF && len(data) > 0 {
			return len(data), data, nil
		}
		return 0, nil, nil
	})
	for sc.Scan() {
		var msg struct {
			ID int64 `json:"id"`
			cdpAnswer
		}
		if json.Unmarshal(sc.Bytes(), &msg) != nil || msg.ID == 0 {
			continue // an event
		}
		b.mu.Lock()
		ch := b.pending[msg.ID]
		delete(b.pending, msg.ID)
		b.mu.Unlock()
		if ch != nil {
			ch <- msg.cdpAnswer
		}
	}
}

// call sends the DevTools command method with params and decodes its
// result into result (if not nil). It fails when ctx ends first or
// Chromium exits.
func (b *sharedChromium) call(ctx context.Context, method string, params, result any) error {
	ch := make(chan cdpAnswer, 1)
	b.mu.Lock()
	b.nextID++
	id := b.nextID
	msg, err := json.Marshal(map[string]any{"id": id, "method": method, "params": params})
	if err != nil {
		b.mu.Unlock()
		return err
	}
	b.pending[id] = ch
	_, err = b.w.Write(append(msg, 0))
	b.mu.Unlock()
	if err != nil {
		return fmt.Errorf("chromium %s: writing the command: %w", method, err)
	}
	select {
	case a := <-ch:
		if a.Error != nil {
			return fmt.Errorf("chromium %s: %s (%d)", method, a.Error.Message, a.Error.Code)
		}
		if result != nil {
			if err := json.Unmarshal(a.Result, result); err != nil {
				return fmt.Errorf("chromium %s: its result %.200s: %w", method, a.Result, err)
			}
		}
		return nil
	case <-b.exited:
		return fmt.Errorf("chromium %s: chromium exited: %v", method, b.waitErr)
	case <-ctx.Done():
		b.mu.Lock()
		delete(b.pending, id)
		b.mu.Unlock()
		return fmt.Errorf("chromium %s: waiting for its answer: %w", method, ctx.Err())
	}
}

// open opens url in a new browser context and returns the function that
// disposes of it (closing the page).
func (b *sharedChromium) open(ctx context.Context, t *testing.T, url string) (close func()) {
	t.Helper()
	var bc struct {
		BrowserContextID string `json:"browserContextId"`
	}
	if err := b.call(ctx, "Target.createBrowserContext", map[string]any{}, &bc); err != nil {
		t.Fatalf("%v\nchromium stderr:\n%s", err, tail(b.stderr.String(), 3000))
	}
	close = func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := b.call(ctx, "Target.disposeBrowserContext", map[string]any{"browserContextId": bc.BrowserContextID}, nil); err != nil {
			t.Errorf("closing the page: %v", err)
		}
	}
	if err := b.call(ctx, "Target.createTarget", map[string]any{"url": url, "browserContextId": bc.BrowserContextID}, nil); err != nil {
		close()
		t.Fatalf("%v\nchromium stderr:\n%s", err, tail(b.stderr.String(), 3000))
	}
	return close
}

// Close ends Chromium, if it was started, and removes its profile: it asks
// Chromium to close, and kills its process group if it has not exited
// within five seconds.
func (b *sharedChromium) Close() {
	b.once.Do(func() { b.err = errors.New("the shared chromium was closed before it was used") })
	if b.cmd == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = b.call(ctx, "Browser.close", map[string]any{}, nil)
	select {
	case <-b.exited:
	case <-ctx.Done():
		if b.cmd.Cancel != nil {
			_ = b.cmd.Cancel()
		} else {
			_ = b.cmd.Process.Kill()
		}
		<-b.exited
	}
	b.w.Close()
	os.RemoveAll(b.dataDir)
}

// done is closed when Chromium has exited.
func (b *sharedChromium) done() <-chan struct{} { return b.exited }

// cappedBuffer keeps the last max bytes written to it; it is safe for
// concurrent use.
type cappedBuffer struct {
	mu  sync.Mutex
	max int
	b   []byte
}

func (c *cappedBuffer) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.b = append(c.b, p...)
	if over := len(c.b) - c.max; over > 0 {
		c.b = append(c.b[:0], c.b[over:]...)
	}
	return len(p), nil
}

func (c *cappedBuffer) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return string(c.b)
}
